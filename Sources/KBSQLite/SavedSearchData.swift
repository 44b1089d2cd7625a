import Foundation
import KBCore
#if canImport(Glibc)
import Glibc
#endif

/// What searches derive from the index as they load it — the vectors with their int8 and sign
/// copies and the sign stage's calibration, the keyword postings — saved beside the index file,
/// in the folder `<index>-search`, so that the next process opening a large index reads them
/// instead of deriving them again (a million snippets: over a minute).
///
/// Each file is stamped with the index state it was made from: the index's generation (every
/// committed write moves it on), its creation time, the schema and the file format, and what it
/// holds (whose vectors, which keyword weights). A file whose stamp differs in anything is never
/// read, and is deleted — except one of an earlier generation, which its reader may catch up
/// with the index's log of writes since (`SearchLog`). Files are written whole under a temporary
/// name, flushed and renamed into place: a crash mid-write leaves the previous file or none, never
/// part of one, and a file cut short or damaged anyway fails its checks and is rebuilt from the
/// index.
///
/// @unchecked Sendable: `minimumRows` is a `LockedValue`; the rest is immutable.
final class SavedSearchData: @unchecked Sendable {
    /// The folder the files live in.
    let folder: String
    /// Copies with fewer rows (documents) than this are not saved: they load quickly anyway.
    let minimumRows = LockedValue(SavedSearchData.defaultMinimumRows)
    /// Knowledge vectors restored from a file hold their float rows in memory up to this many
    /// bytes of them (`defaultFloatsHeldUpTo`); larger ones leave them in the file.
    let floatsHeldUpTo = LockedValue(SavedSearchData.defaultFloatsHeldUpTo)
    /// Copies read back from files so far (for tests and measurements).
    let reads = LockedValue(0)
    /// Of those, copies older than the index brought up to date from the index's log of writes
    /// (`SearchLog`).
    let caughtUp = LockedValue(0)
    /// After a save: the generation of the oldest copy saved, below which the next write deletes
    /// the log's rows (no copy needs them).
    let logFloor = LockedValue<Int64?>(nil)
    /// Whether the index's log of writes may hold rows (a write finding no saved copies deletes them).
    let mayHoldLog = LockedValue(true)
    /// What the last loads read back (`noteRead`), for `prepareSearches` to tell.
    private let notes = LockedValue<[String]>([])

    /// Notes that a copy of `kind` was read back, caught up with `touched` snippets written since.
    func noteRead(_ kind: String, from generation: Int64, touched: Int) {
        let line = touched == 0 ? "\(kind): read back from \(path(kind))"
            : "\(kind): read back from \(path(kind)) (generation \(generation)) and caught up with the writes since "
              + "(\(touched) snippet\(touched == 1 ? "" : "s") touched)"
        notes.withLock { notes in
            notes.append(line)
            if notes.count > 16 { notes.removeFirst(notes.count - 16) }
        }
    }

    /// The notes so far, and none after.
    func takeNotes() -> [String] { notes.withLock { notes in defer { notes = [] }; return notes } }

    static let defaultMinimumRows = 50_000
    /// A saved copy older than the one in memory is kept when catching it up touches at most this
    /// fraction of its rows (`SearchLog`); else it is written again.
    static let catchUpFraction = 0.01
    /// 256 MB: about 175,000 snippets at 384 dimensions. Rescoring a quantized search reads each
    /// candidate's float row; from the file that is a `pread` each, ~9% of `kb serve`'s CPU at
    /// 100,000 snippets, for 150 MB not held. A million snippets' 1.5 GB stay in the file.
    static let defaultFloatsHeldUpTo = 256 << 20
    /// The files' layout; a file of another format is rebuilt.
    /// 2: keyword frequencies in halves. 3: sign codes in blocks of 8 rows, scored for queries in
    /// four levels (the sign stage's calibration with them). 4: the sign stage's cells. 5: a third,
    /// farther tier of the sign stage, over every row's signs.
    static let format = 5
    static let magic: [UInt8] = Array("KBSAVED1".utf8)

    init(indexPath: String) { folder = indexPath + "-search" }

    /// The index state a file belongs to.
    struct Stamp: Codable, Equatable, Sendable {
        var format = SavedSearchData.format
        var schema = Schema.version
        /// The index's creation time (`kb_meta.created_at`): another index at the same path differs.
        var created: String
        var generation: Int64
        /// What the file holds: "knowledge vectors", "memory vectors", "keywords".
        var kind: String
        /// Whose vectors (embedder name and dimension), or the keyword table's weights and tokenizer.
        var detail: String
    }

    func path(_ kind: String) -> String { folder + "/" + kind.replacingOccurrences(of: " ", with: "-") }

    /// Whether the folder is there (any copy may be saved in it).
    var exists: Bool { FileManager.default.fileExists(atPath: folder) }

    /// The generation of the oldest copy saved, of those of `kinds` (nil: none is saved).
    func oldestGeneration(_ kinds: [String]) -> Int64? {
        kinds.compactMap { (try? SavedFile(path: path($0)))?.stamp.generation }.min()
    }

    /// Whether a copy of `rows` rows is worth saving.
    func saves(rows: Int) -> Bool { rows >= minimumRows.withLock { $0 } }

    /// The saved file of `stamp.kind` when its stamp is `stamp` — or, with `orEarlier`, the same
    /// but for an earlier generation (for the caller to catch up with `SearchLog`, or remove); nil
    /// (and the file deleted) when there is none or it belongs to another state or is damaged.
    func open(_ stamp: Stamp, orEarlier: Bool = false) -> SavedFile? {
        let path = path(stamp.kind)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let file = try? SavedFile(path: path)
        if let file, file.stamp == stamp { return file }
        var other = stamp
        other.generation = file?.stamp.generation ?? .min
        if let file, orEarlier, file.stamp == other, other.generation < stamp.generation { return file }
        // A file of a later state of this index (saved by a process that saw a write this
        // snapshot does not) is kept for the searches that see it.
        if file?.stamp != other || other.generation <= stamp.generation { unlink(path) }
        return nil
    }

    /// Deletes the temporary files of writes that a process did not finish (it crashed or was
    /// killed mid-write): those whose process is gone.
    func removeAbandonedWrites() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names {
            guard let range = name.range(of: ".partial-"),
                  let pid = name[range.upperBound...].split(separator: "-").first.flatMap({ pid_t($0) }) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
        }
    }

    /// Writes a file: to a temporary name, flushed, then renamed over the old one. Failures are
    /// returned, never thrown into a search: the index itself is unaffected.
    @discardableResult
    func write(_ stamp: Stamp, numbers: [String: [Double]], sections: [SavedFile.Section]) -> (any Error)? {
        let final = path(stamp.kind)
        let temporary = final + ".partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            removeAbandonedWrites()
            try SavedFile.write(to: temporary, stamp: stamp, numbers: numbers, sections: sections)
            guard rename(temporary, final) == 0 else {
                throw KBError(.database, "Cannot rename \(temporary): \(String(cString: strerror(errno))).")
            }
            let directory = Glibc.open(folder, O_RDONLY)
            if directory >= 0 {
                fsync(directory)
                close(directory)
            }
            return nil
        } catch {
            unlink(temporary)
            return error
        }
    }

    /// Whether the file of `stamp.kind` is there with exactly this stamp.
    func holds(_ stamp: Stamp) -> Bool {
        (try? SavedFile(path: path(stamp.kind)))?.stamp == stamp
    }

    /// Deletes the file of one kind.
    func remove(_ kind: String) { unlink(path(kind)) }

    /// Deletes every saved file: after a raw write whose effect is unknown, and after erasure,
    /// when each file is overwritten with zeros first (as SQLite's `secure_delete` does its
    /// pages), so that erased text's words do not stay readable on the disk.
    func discard(overwriting: Bool = false) {
        if overwriting, let names = try? FileManager.default.contentsOfDirectory(atPath: folder) {
            for name in names {
                let fd = Glibc.open(folder + "/" + name, O_WRONLY)
                guard fd >= 0 else { continue }
                var info = stat()
                if fstat(fd, &info) == 0 {
                    let zeros = [UInt8](repeating: 0, count: 1 << 20)
                    var left = Int(info.st_size)
                    while left > 0 {
                        let count = zeros.withUnsafeBytes { Glibc.write(fd, $0.baseAddress!, min(left, $0.count)) }
                        guard count > 0 else { break }
                        left -= count
                    }
                    fsync(fd)
                }
                close(fd)
            }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// One saved file, memory-mapped for reading: the magic, a JSON header (stamp, numbers, sections)
/// and the sections' bytes, each at a 64-byte boundary.
///
/// @unchecked Sendable: the mapping is read-only and lives until `deinit`.
final class SavedFile: @unchecked Sendable {
    /// A section to write: its name, size in bytes, and what writes those bytes.
    struct Section {
        var name: String
        var bytes: Int
        var write: (SavedFile.Output) throws -> Void

        /// An array's elements as they are in memory.
        static func array<T: BitwiseCopyable>(_ name: String, _ values: [T]) -> Section {
            Section(name: name, bytes: values.count * MemoryLayout<T>.stride) { output in
                try values.withUnsafeBytes { try output.write($0) }
            }
        }

        /// Arrays one after the other (their ends in a section of their own, see `nested`).
        static func nested<T: BitwiseCopyable>(_ name: String, _ values: [[T]]) -> [Section] {
            var ends: [UInt64] = []
            ends.reserveCapacity(values.count)
            var total = 0
            for value in values {
                total += value.count
                ends.append(UInt64(total))
            }
            return [array(name + ".ends", ends),
                    Section(name: name, bytes: total * MemoryLayout<T>.stride) { output in
                        for value in values { try value.withUnsafeBytes { try output.write($0) } }
                    }]
        }
    }

    struct Header: Codable {
        var stamp: SavedSearchData.Stamp
        var numbers: [String: [Double]]
        var sections: [String: [Int]]   // name → [offset, bytes]
    }

    let stamp: SavedSearchData.Stamp
    let numbers: [String: [Double]]
    private let sections: [String: [Int]]
    private let file: MappedFile
    private var base: UnsafeRawPointer { file.base }
    let path: String

    init(path: String) throws {
        self.path = path
        file = try MappedFile(path: path, minimumLength: 16) { failure in KBError(.database, "\(path) \(failure).") }
        file.advise(MADV_SEQUENTIAL)
        let base = file.base, length = file.length
        guard memcmp(base, SavedSearchData.magic, 8) == 0 else { throw KBError(.database, "\(path) is not a saved search file.") }
        let headerLength = Int(base.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
        guard headerLength > 0, 16 + headerLength <= length else { throw KBError(.database, "\(path) has a damaged header.") }
        let header = try JSONDecoder().decode(Header.self, from: Data(bytes: base + 16, count: headerLength))
        for (name, range) in header.sections {
            guard range.count == 2, range[0] >= 16 + headerLength, range[1] >= 0, range[0] + range[1] <= length else {
                throw KBError(.database, "\(path): section \(name) lies outside the file.")
            }
        }
        stamp = header.stamp
        numbers = header.numbers
        sections = header.sections
    }

    /// Where a section lies in the file (offset and length in bytes).
    func range(_ name: String) -> (offset: Int, bytes: Int)? { sections[name].map { ($0[0], $0[1]) } }

    /// The names of the file's sections.
    var sectionNames: [String] { sections.keys.sorted() }

    /// A section's elements, copied out of the file.
    func array<T: BitwiseCopyable>(_ name: String, as type: T.Type = T.self) throws -> [T] {
        guard let range = sections[name] else { throw KBError(.database, "\(path) has no section \(name).") }
        let stride = MemoryLayout<T>.stride
        guard range[1] % stride == 0 else { throw KBError(.database, "\(path): section \(name) is not whole \(T.self) values.") }
        let count = range[1] / stride
        let values = [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            memcpy(buffer.baseAddress!, base + range[0], range[1])
            initialized = count
        }
        // The section's pages are not needed again: given back now, they do not add a second copy
        // of it to the process's resident memory while the rest is read.
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let first = (range[0] + page - 1) / page * page, end = (range[0] + range[1]) / page * page
        if end > first { file.advise(MADV_DONTNEED, offset: first, bytes: end - first) }
        return values
    }

    /// Arrays written by `Section.nested`.
    func nested<T: BitwiseCopyable>(_ name: String, as type: T.Type = T.self) throws -> [[T]] {
        let ends: [UInt64] = try array(name + ".ends")
        let all: [T] = try array(name)
        guard ends.last.map({ Int($0) == all.count }) ?? all.isEmpty else { throw KBError(.database, "\(path): section \(name) does not add up.") }
        var start = 0
        return try ends.map { end in
            let end = Int(end)
            guard end >= start, end <= all.count else { throw KBError(.database, "\(path): section \(name) does not add up.") }
            defer { start = end }
            return Array(all[start..<end])
        }
    }

    /// One number of the header.
    func number(_ name: String) throws -> Double {
        guard let value = numbers[name]?.first else { throw KBError(.database, "\(path) has no \(name).") }
        return value
    }

    /// Writes a whole file at `path` and flushes it to the disk.
    static func write(to path: String, stamp: SavedSearchData.Stamp, numbers: [String: [Double]], sections: [Section]) throws {
        // The header's offsets depend on its own length: lay out with a generous guess, then fix it.
        var offsets: [String: [Int]] = [:]
        var headerBytes = Data()
        var reserved = 4096
        while true {
            var offset = align(16 + reserved)
            for section in sections {
                offsets[section.name] = [offset, section.bytes]
                offset = align(offset + section.bytes)
            }
            headerBytes = try JSONEncoder().encode(Header(stamp: stamp, numbers: numbers, sections: offsets))
            if headerBytes.count <= reserved { break }
            reserved = headerBytes.count * 2
        }
        let output = try Output(path: path)
        defer { output.close() }
        try output.write(magic: SavedSearchData.magic, reserved: reserved, header: headerBytes)
        for section in sections {
            try output.pad(to: offsets[section.name]![0])
            let before = output.written
            try section.write(output)
            guard output.written - before == section.bytes else {
                throw KBError(.database, "Section \(section.name) of \(path) changed while it was written.")
            }
        }
        try output.finish()
    }

    static func align(_ offset: Int) -> Int { (offset + 63) & ~63 }

    /// A file written through a buffer.
    final class Output {
        private let fd: Int32
        private let path: String
        private var buffer = [UInt8]()
        private(set) var written = 0

        init(path: String) throws {
            self.path = path
            fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            guard fd >= 0 else { throw KBError(.database, "Cannot write \(path): \(String(cString: strerror(errno))).") }
            buffer.reserveCapacity(1 << 20)
        }

        /// The magic, the header's length and the header, padded to `reserved` bytes.
        func write(magic: [UInt8], reserved: Int, header: Data) throws {
            try magic.withUnsafeBytes { try write($0) }
            try withUnsafeBytes(of: UInt64(header.count).littleEndian) { try write($0) }
            try header.withUnsafeBytes { try write($0) }
            try pad(to: 16 + reserved)
        }

        func pad(to offset: Int) throws {
            let zeros = [UInt8](repeating: 0, count: max(0, offset - written))
            try zeros.withUnsafeBytes { try write($0) }
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            written += bytes.count
            if buffer.count + bytes.count <= 1 << 20 {
                buffer.append(contentsOf: bytes)
                return
            }
            try flush()
            if bytes.count >= 1 << 20 { try raw(bytes) } else { buffer.append(contentsOf: bytes) }
        }

        func finish() throws {
            try flush()
            guard fsync(fd) == 0 else { throw KBError(.database, "Cannot flush \(path): \(String(cString: strerror(errno))).") }
        }

        func close() { _ = Glibc.close(fd) }

        private func flush() throws {
            try buffer.withUnsafeBytes { try raw($0) }
            buffer.removeAll(keepingCapacity: true)
        }

        private func raw(_ bytes: UnsafeRawBufferPointer) throws {
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                guard count > 0 else { throw KBError(.database, "Cannot write \(path): \(String(cString: strerror(errno))).") }
                offset += count
            }
        }
    }
}
