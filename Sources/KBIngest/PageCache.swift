import Crypto
package import Foundation
import KBCore

/// Pictures of pages, and the words OCR placed on scanned pages, kept on disk within a byte
/// budget: the least recently shown go first, and a source's pictures go with the source. A picture is written under a temporary name and
/// renamed, so a reader never sees half of one. Every call does file I/O: callers run it off
/// Swift's cooperative pool (`OffPool`).
public struct PageCache: Sendable {
    /// The folder the pictures are kept in (made when the first one is written).
    public let folder: String
    /// At most this many bytes of pictures are kept.
    public let budget: Int

    /// The default budget: 256 MiB.
    public static let defaultBudget = 256 << 20

    public init(folder: String, budget: Int = PageCache.defaultBudget) {
        self.folder = folder
        self.budget = budget
    }

    /// The cache of the index at `location`: `$KB_PAGE_CACHE_DIR`, else a folder of its own under
    /// `$XDG_CACHE_HOME/kb/pages` (else `~/.cache/kb/pages`); the budget `$KB_PAGE_CACHE_MB`
    /// mebibytes, else 256. A malformed budget is an error naming it.
    public static func standard(for location: String, environment: [String: String]) throws -> PageCache {
        var budget = defaultBudget
        if let given = environment["KB_PAGE_CACHE_MB"], !given.isEmpty {
            guard let megabytes = Int(given), (0...1_000_000).contains(megabytes) else {
                throw KBError(.invalidArgument, "KB_PAGE_CACHE_MB is '\(given)'; give the page pictures' budget in MiB, e.g. KB_PAGE_CACHE_MB=256.")
            }
            budget = megabytes << 20
        }
        if let folder = environment["KB_PAGE_CACHE_DIR"], !folder.isEmpty { return PageCache(folder: folder, budget: budget) }
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSTemporaryDirectory()) + "/.cache"
        let digest = SHA256.hash(data: Data(location.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return PageCache(folder: base + "/kb/pages/" + digest, budget: budget)
    }

    /// The file of a page's picture: by the source's content hash, so a changed file is never
    /// shown an old picture.
    package func file(contentHash: String, page: Int, width: Int) -> String {
        folder + "/" + Self.key(contentHash) + "-\(page)-\(width).png"
    }

    package static func key(_ contentHash: String) -> String {
        String(contentHash.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.prefix(64).map(Character.init))
    }

    /// The file that keeps the words OCR placed on a scanned page (with their boxes).
    package func wordsFile(contentHash: String, page: Int) -> String {
        folder + "/" + Self.key(contentHash) + "-\(page).words.json"
    }

    /// The words OCR placed on a page before, touched as just used; nil when there are none.
    package func ocrWords(contentHash: String, page: Int) -> (words: [PageWord], pages: Int)? {
        let path = wordsFile(contentHash: contentHash, page: page)
        guard let data = FileManager.default.contents(atPath: path),
              let kept = try? JSONDecoder().decode(KeptWords.self, from: data) else { return nil }
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        return (kept.words, kept.pages)
    }

    /// Keeps the words OCR placed on a page (reading them again costs seconds), within the budget.
    package func keepOCRWords(_ words: [PageWord], pages: Int, contentHash: String, page: Int) {
        guard let data = try? JSONEncoder().encode(KeptWords(pages: pages, words: words)), data.count <= budget else { return }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? data.write(to: URL(fileURLWithPath: wordsFile(contentHash: contentHash, page: page)), options: .atomic)
        trim()
    }

    struct KeptWords: Codable {
        var pages: Int
        var words: [PageWord]
    }

    /// The file that keeps how many pages a source has, beside its pictures.
    package func countFile(contentHash: String) -> String { folder + "/" + Self.key(contentHash) + ".pages" }

    /// The kept picture of a page, touched as just shown, with the source's page count; nil when
    /// there is none (then the source's bytes are needed).
    package func cached(contentHash: String, page: Int, width: Int) -> (png: Data, pages: Int)? {
        let path = file(contentHash: contentHash, page: page, width: width)
        let files = FileManager.default
        guard let count = files.contents(atPath: countFile(contentHash: contentHash)).flatMap({ Int(String(decoding: $0, as: UTF8.self)) }),
              let kept = files.contents(atPath: path) else { return nil }
        try? files.setAttributes([.modificationDate: Date()], ofItemAtPath: path)
        return (kept, count)
    }

    /// The picture of a page: the one kept, touched as just shown, else what `render` writes at
    /// the path it is given (kept if the budget allows), `render` answering the source's page
    /// count. `cached` says which.
    package func picture(contentHash: String, page: Int, width: Int, render: (String) throws -> Int) throws -> (png: Data, pages: Int, cached: Bool) {
        if let kept = cached(contentHash: contentHash, page: page, width: width) { return (kept.png, kept.pages, true) }
        let path = file(contentHash: contentHash, page: page, width: width)
        let files = FileManager.default
        do {
            try files.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw KBError(.database, "Cannot make the page pictures' folder \(folder): \(error.localizedDescription). Set KB_PAGE_CACHE_DIR to a folder kb may write.")
        }
        let temporary = folder + "/.rendering-\(UUID().uuidString).png"
        defer { try? files.removeItem(atPath: temporary) }
        let pages = try render(temporary)
        guard let png = files.contents(atPath: temporary) else {
            throw KBError(.unprocessable, "The picture of page \(page) was not written.")
        }
        if png.count <= budget {
            try? files.removeItem(atPath: path)
            try? files.moveItem(atPath: temporary, toPath: path)
            try? Data(String(pages).utf8).write(to: URL(fileURLWithPath: countFile(contentHash: contentHash)), options: .atomic)
            trim()
        }
        return (png, pages, false)
    }

    /// Removes every picture of a source the index no longer holds.
    package func keep(onlyContentHashes hashes: Set<String>) {
        let keys = Set(hashes.map(Self.key))
        let all = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in all where !name.hasPrefix(".") && !keys.contains(String(name.prefix { $0 != "-" && $0 != "." })) {
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }

    /// The pictures kept now, in bytes.
    public func bytes() -> Int {
        names().reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + $1)[.size] as? Int) ?? 0) }
    }

    /// Drops the least recently shown pictures until the rest fit the budget.
    package func trim() {
        let files = FileManager.default
        var kept = names().compactMap { name -> (path: String, size: Int, shown: Date)? in
            let path = folder + "/" + name
            guard let attributes = try? files.attributesOfItem(atPath: path) else { return nil }
            return (path, (attributes[.size] as? Int) ?? 0, (attributes[.modificationDate] as? Date) ?? .distantPast)
        }
        var total = kept.reduce(0) { $0 + $1.size }
        guard total > budget else { return }
        kept.sort { $0.shown < $1.shown }
        for file in kept where total > budget {
            try? files.removeItem(atPath: file.path)
            total -= file.size
        }
    }

    /// The names of the kept pictures and word lists (not those being written).
    package func names() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
            ($0.hasSuffix(".png") || $0.hasSuffix(".words.json")) && !$0.hasPrefix(".")
        }
    }
}
