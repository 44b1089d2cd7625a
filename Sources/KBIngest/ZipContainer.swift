import Foundation
import KBCore
import ZIPFoundation

/// A ZIP container (EPUB, DOCX) read from memory with ZIPFoundation: its parts by path, each
/// at most `maximumPartSize` bytes unpacked (a guard against zip bombs).
struct ZipContainer {
    let archive: Archive
    let name: String
    static let maximumPartSize: UInt64 = 256 << 20

    /// - Parameter format: what the file should be, for the message (`an EPUB`).
    init(_ data: Data, name: String, format: String) throws {
        do {
            archive = try Archive(data: data, accessMode: .read)
        } catch {
            throw KBError(.unreadableFile, "\(name) is not \(format): it is not a ZIP archive (the file is damaged, truncated or misnamed).")
        }
        self.name = name
    }

    func contains(_ path: String) -> Bool { archive[path] != nil }

    /// The unpacked bytes of the part at `path`, or nil when there is none.
    func part(_ path: String) throws -> Data? {
        guard let entry = archive[path] else { return nil }
        guard entry.uncompressedSize <= Self.maximumPartSize else {
            throw KBError(.tooLarge, "\(name): the part \(path) unpacks to \(entry.uncompressedSize >> 20) MiB; kb reads parts of up to \(Self.maximumPartSize >> 20) MiB.")
        }
        var data = Data()
        do {
            _ = try archive.extract(entry, skipCRC32: false) { data.append($0) }
        } catch {
            throw KBError(.unreadableFile, "\(name): the part \(path) cannot be unpacked (\(error)); the file is damaged.")
        }
        return data
    }

    /// The part at `path` parsed as XML; the error names the file and the part.
    func xml(_ path: String) throws -> MarkupElement? {
        guard let data = try part(path) else { return nil }
        return try Markup.xml(data, name: "\(name) (\(path))")
    }
}

/// Paths inside a container: relative references resolved against the referring part.
enum ArchivePath {
    /// `target` (percent-encoded, relative to the folder of `file`) as a path in the archive.
    static func resolve(_ target: String, against file: String) -> String {
        let decoded = target.removingPercentEncoding ?? target
        if decoded.hasPrefix("/") { return normalize(String(decoded.dropFirst())) }
        let folder = file.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return normalize(folder.isEmpty ? decoded : folder + "/" + decoded)
    }

    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") {
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return parts.joined(separator: "/")
    }
}
