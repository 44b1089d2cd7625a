public import Foundation
import KBCore
public import KBIngest
import KBRequests
import KBStore

/// A page of a source as a picture (`GET /v1/sources/{id}/pages/{n}`).
public struct PagePicture: Sendable, Hashable {
    /// The picture, PNG.
    public var png: Data
    /// The page (from 1), and how many the source has.
    public var page: Int
    public var pages: Int
    /// Whether it came from the cache rather than the renderer.
    public var cached: Bool
}

/// The words on a page of a source and where they stand (`GET /v1/sources/{id}/pages/{n}/words`):
/// every word, or those of one snippet, to be drawn over the page's picture.
public struct PageWords: Sendable, Hashable, Codable {
    public var sourceID: String
    /// The page (from 1), its printed label, and how many pages the source has.
    public var page: Int
    public var pageLabel: String
    public var pages: Int
    /// The snippet (its ordinal in the source) whose words these are; nil for every word.
    public var snippet: Int?
    /// The words, boxes as fractions of the page from its top-left corner.
    public var words: [PageWord]
}

extension SourceDesk {
    /// A page of a PDF source as a PNG `width` pixels wide, rendered from the upload's kept
    /// original or the ingested file, and kept in the page cache. The rights of `readSource`: a
    /// private source is only its user's; a scoped token reads what its bots see.
    func pagePicture(_ id: String, page: Int, width: Int?, bot: String?, user: String?, as caller: Caller) async throws -> PagePicture {
        let width = width ?? PageReadRequest.defaultWidth
        guard PageReadRequest.widths.contains(width) else {
            throw KBError(.invalidArgument, "A page picture is \(PageReadRequest.widths.lowerBound)–\(PageReadRequest.widths.upperBound) pixels wide; \(width) was asked. Give width=\(PageReadRequest.defaultWidth), say.")
        }
        let source = try SourceRemoveRequest(id: id).validated(limits)
        let (stored, held) = try await store.snapshot { snapshot in
            (try Self.readableStored(source, bot: bot, user: user, as: caller, in: snapshot), Set(try snapshot.contentHashes().values))
        }
        guard stored.kind.hasPages else { throw Self.noPages(source, stored) }
        guard page >= 1 else { throw Self.noPage(page) }
        let cache = pages
        // A kept picture needs neither the source's bytes nor poppler.
        if let kept = await OffPool.run({ cache.cached(contentHash: stored.contentHash, page: page, width: width) }) {
            return PagePicture(png: kept.png, page: page, pages: kept.pages, cached: true)
        }
        let (_, bytes) = try await original(id, page: page, bot: bot, user: user, as: caller)
        return try await OffPool.run {
            // Pictures of sources the index no longer holds (removed by any path) go first.
            cache.keep(onlyContentHashes: held)
            let name = stored.title.isEmpty ? id : stored.title
            let (png, count, cached) = try cache.picture(contentHash: stored.contentHash, page: page, width: width) { path in
                stored.kind == .image
                    ? try ScanPages.renderPNG(bytes, name: name, page: page, width: width, to: path).pages
                    : try PDFPages.renderPNG(bytes, name: name, page: page, width: width, to: path).pages
            }
            return PagePicture(png: png, page: page, pages: count, cached: cached)
        }
    }

    /// The words on a page of a PDF or scanned source with their boxes: all of them, or those of
    /// the snippet whose ordinal is `snippet` (its words found on the page; none when it is not on
    /// it). A PDF page's words come from its text layer; a scan's, or a PDF page without a text
    /// layer that OCR read at ingest, from Tesseract with the languages it was read with (seconds
    /// the first time; then kept in the page cache).
    func pageWords(_ id: String, page: Int, snippet ordinal: Int?, bot: String?, user: String?, as caller: Caller) async throws -> PageWords {
        let (stored, bytes, document, turns) = try await originalAndDocument(id, page: page, bot: bot, user: user, as: caller)
        let snippet = try ordinal.map { ordinal in
            guard let found = document.snippets.first(where: { $0.ordinal == ordinal }) else {
                throw KBError(.notFound, "\(id) has no snippet \(ordinal); its snippets are 0–\(max(0, document.snippets.count - 1)) (`GET /v1/sources/\(id)/snippets`).")
            }
            return found
        }
        let cache = pages
        let (words, count) = try await OffPool.run {
            let name = stored.title.isEmpty ? id : stored.title
            if stored.kind == .pdf {
                let layer = try PDFPages.words(bytes, name: name, page: page)
                // A page OCR read at ingest has no text layer to place its words by.
                guard layer.words.isEmpty, turns != nil else { return layer }
            }
            if let kept = cache.ocrWords(contentHash: stored.contentHash, page: page) { return kept }
            guard let settings = OCRSettings(record: stored.ocr) else {
                throw KBError(.unprocessable, "\(name) was not read by OCR, so the words of its page \(page) cannot be placed. Read it again with `--ocr auto`.")
            }
            let found = stored.kind == .image
                ? try ScanPages.words(bytes, name: name, page: page, settings: settings, quarterTurns: turns ?? 0)
                : try PDFPages.ocrWords(bytes, name: name, page: page, settings: settings, quarterTurns: turns ?? 0)
            cache.keepOCRWords(found.words, pages: found.pages, contentHash: stored.contentHash, page: page)
            return found
        }
        let label = document.pageStarts?.first { $0.page == page }?.label ?? String(page)
        let chosen = snippet.map { PageHighlight.words(of: $0.text, among: words) } ?? words
        return PageWords(sourceID: SourceInfo(stored).id, page: page, pageLabel: label, pages: count, snippet: ordinal, words: chosen)
    }

    /// Drops the pictures of sources the index no longer holds (after a source is removed).
    func dropPicturesOfRemovedSources() async {
        guard let held = try? await store.snapshot({ try $0.contentHashes() }) else { return }
        let cache = pages
        await OffPool.run { cache.keep(onlyContentHashes: Set(held.values)) }
    }

    func original(_ id: String, page: Int, bot: String?, user: String?, as caller: Caller) async throws -> (StoredSource, Data) {
        let (stored, bytes, _, _) = try await originalAndDocument(id, page: page, bot: bot, user: user, as: caller)
        return (stored, bytes)
    }

    static func noPages(_ id: String, _ stored: StoredSource) -> KBError {
        KBError(.unsupportedMediaType, "\(id) is a \(stored.kind.rawValue) source: only PDF and scanned-image sources have pages to show. Read its text with `GET /v1/sources/\(id)/text`.")
    }

    static func noPage(_ page: Int) -> KBError { KBError(.notFound, "Pages are numbered from 1; there is no page \(page).") }

    /// The source if the caller may read it, its PDF's or image's bytes — an upload's kept
    /// original, or the ingested file as it was read — its document, and, when OCR read the page
    /// at ingest, how many quarter turns it was given to be read (nil when OCR did not read it). A
    /// source without pages is `unsupportedMediaType`; a file gone or changed since it was read is
    /// a `conflict`.
    func originalAndDocument(_ id: String, page: Int, bot: String?, user: String?, as caller: Caller) async throws
        -> (StoredSource, Data, SourceDocument, Int?) {
        let id = try SourceRemoveRequest(id: id).validated(limits)
        let (stored, document, kept, turns) = try await store.snapshot { snapshot in
            let (stored, document) = try Self.readableSource(id, bot: bot, user: user, as: caller, in: snapshot)
            let kept = try snapshot.originalJobID(sourcePath: stored.path).map { try snapshot.jobChunks(id: $0).reduce(into: Data()) { $0.append($1) } }
            let turns = try OCRSettings(record: stored.ocr).flatMap { settings in
                try snapshot.ocrPages(contentHash: stored.contentHash, key: settings.cacheKey).first { $0.page == page }?.quarterTurns
            }
            return (stored, document, kept, turns)
        }
        guard stored.kind.hasPages else { throw Self.noPages(id, stored) }
        guard page >= 1 else { throw Self.noPage(page) }
        let bytes: Data
        if let kept {
            bytes = kept
        } else if Source.uploadID(path: stored.path) != nil {
            throw KBError(.conflict, "The original of \(id) is not kept with the index, so its pages cannot be shown. Upload it again.")
        } else {
            guard let read = try? await OffPool.run({ try FileBytes.read(stored.path, name: stored.path) }) else {
                throw KBError(.conflict, "\(stored.path), the file \(id) was read from, is gone: its pages cannot be shown (its text still can). Put it back, or run `kb ingest` to drop it.")
            }
            guard DocumentReader.contentHash(read) == stored.contentHash else {
                throw KBError(.conflict, "\(stored.path) has changed since kb read it: its pages would not match its snippets. Run `kb ingest \(stored.path)` again.")
            }
            bytes = read
        }
        return (stored, bytes, document, turns)
    }
}

/// Which words on a page are a snippet's: the page's words (poppler's, in reading order) that
/// stand in a run of three or more the snippet also has, in the same order (all of a snippet
/// shorter than that). Words compare by their letters and digits, case folded, so punctuation
/// and line-end hyphens around them do not matter. Pure.
enum PageHighlight {
    static func words(of text: String, among words: [PageWord]) -> [PageWord] {
        let wanted = tokens(text)
        guard !wanted.isEmpty else { return [] }
        let run = min(3, wanted.count)
        var grams = Set<[String]>()
        for start in 0...(wanted.count - run) { grams.insert(Array(wanted[start..<start + run])) }
        // The page's words that have letters or digits, with their places.
        let page = words.enumerated().compactMap { index, word -> (index: Int, token: String)? in
            let token = normalised(word.text)
            return token.isEmpty ? nil : (index, token)
        }
        guard page.count >= run else { return [] }
        var marked = Set<Int>()
        for start in 0...(page.count - run) where grams.contains(page[start..<start + run].map(\.token)) {
            for offset in 0..<run { marked.insert(page[start + offset].index) }
        }
        return words.indices.filter(marked.contains).map { words[$0] }
    }

    static func tokens(_ text: String) -> [String] {
        text.split(whereSeparator: { $0.isWhitespace }).map { normalised(String($0)) }.filter { !$0.isEmpty }
    }

    static func normalised(_ word: String) -> String {
        String(String.UnicodeScalarView(word.lowercased().unicodeScalars.filter {
            $0.properties.isAlphabetic || $0.properties.numericType != nil || $0.properties.generalCategory == .nonspacingMark
        }))
    }
}
