import Foundation
public import KBCore
import KBRequests
import KBStore
import KBSystem

/// A part of a source's text, with what a citation needs (the fields a search hit has).
public struct SourceText: Sendable, Hashable, Codable {
    /// The source's id, as listed.
    public var sourceID: String
    public var sourcePath: String
    public var sourceTitle: String
    public var kind: SourceKind
    /// The pages the text spans (books), with their printed labels.
    public var pages: PageRange?
    /// `p. 15` / `pp. 15–16`, with printed labels (books).
    public var pageLabel: String?
    /// The headings above the text's start, outermost first.
    public var headingPath: [String]
    /// Where this piece of text starts and ends in the source's text (Unicode scalars).
    public var pieceStart: Int
    public var pieceEnd: Int
    /// `pieceStart` and `pieceEnd` under their old names, kept for a release: `end` read as the
    /// end of the part asked for, which is `partEnd`.
    public var start: Int
    public var end: Int
    /// The text as kb holds it: its snippets joined, overlaps once; what no snippet holds (page
    /// furniture, markup) is left out, a line break marking the gap.
    public var text: String
    /// Where the next piece of the part asked for starts (give it as `start`); nil when the part
    /// is all here.
    public var next: Int?
    /// The part asked for ends here.
    public var partEnd: Int
}

extension SourceText: SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = [
        "start": ["deprecated": true, "description": "pieceStart's old name, kept for a release."],
        "end": ["deprecated": true, "description": "pieceEnd's old name (not the part's end: that is partEnd), kept for a release."],
    ]
}

/// Matches of a pattern in the sources a caller may read.
public struct SourceMatches: Sendable, Hashable, Codable, SchemaFieldNotes {
    public static let fieldNotes: [String: JSONValue] = ["truncated": ["enum": ["limit", "time"]]]

    public struct Match: Sendable, Hashable, Codable {
        public var sourceID: String
        public var sourcePath: String
        public var sourceTitle: String
        public var kind: SourceKind
        public var snippetID: Int64
        public var pages: PageRange?
        public var pageLabel: String?
        public var headingPath: [String]
        /// Where the match starts in the source's text (Unicode scalars): `read_source`'s `start`.
        public var offset: Int
        /// The text matched.
        public var match: String
        /// The line the match is on (at most 240 characters around it).
        public var line: String
        /// Set when the match is in a heading that is not part of the snippets' text (a note's
        /// `## Heading` line): `line` is the heading, `offset` the start of the text under it.
        public var inHeading: Bool?
    }

    public var pattern: String
    public var matches: [Match]
    public var sourcesSearched: Int
    /// Set when the search stopped early: `limit` (that many matches found) or `time` (the
    /// search's time bound passed; narrow the pattern or the sources).
    public var truncated: String?
}

extension SourceDesk {
    /// The filters that pass what a caller may read: what a bot sees (a scoped token must name
    /// one of its bots), shared sources, and the private sources of `user` (a scoped token's
    /// scopes must cover the user). The admin without a user reads every source.
    static func readable(bot name: String?, user: String?, as caller: Caller, in snapshot: any IndexSnapshot) throws -> SearchQuery? {
        try caller.requireBot(name)
        if let user, case .token(let token) = caller, !token.covers(try MemoryScope.user(user)) {
            throw caller.refuse(token, "may not read the private sources of \(user): its scopes are \(Caller.list(token.scopes))")
        }
        var query = SearchQuery("")
        query.user = user
        if case .admin = caller, user == nil { query.everyUser = true }
        if let name {
            let bot = try snapshot.bot(named: name)
            guard !bot.sources.isEmpty else { return nil }
            query.selectors = bot.sources
        }
        return query
    }

    /// The source at `id` if the caller may read it; `notFound` otherwise (a private source of
    /// another user is not found, as for search).
    static func readableSource(_ id: String, bot: String?, user: String?, as caller: Caller,
                               in snapshot: any IndexSnapshot) throws -> (info: StoredSource, document: SourceDocument) {
        let stored = try readableStored(id, bot: bot, user: user, as: caller, in: snapshot)
        guard let document = try snapshot.document(path: stored.path) else { throw noSuchSource(id) }
        return (stored, document)
    }

    /// The source at `id` if the caller may read it (as `readableSource`), without its snippets.
    static func readableStored(_ id: String, bot: String?, user: String?, as caller: Caller, in snapshot: any IndexSnapshot) throws -> StoredSource {
        let stored = try find(id, in: try snapshot.sources())
        guard let query = try readable(bot: bot, user: user, as: caller, in: snapshot),
              try snapshot.sourcePaths(passing: query).contains(stored.path) else {
            throw noSuchSource(id)
        }
        return stored
    }

    /// A part of one source's text (`SourceReadRequest`).
    func readSource(_ checked: Checked<SourceReadRequest>, as caller: Caller) async throws -> SourceText {
        let request = checked.valid
        if let from = request.start, let to = request.end, to <= from {
            throw KBError(.unprocessable, "\"end\" (\(to)) is not after \"start\" (\(from)): that part holds no text. Give an end past the start.")
        }
        let (stored, document) = try await store.snapshot { snapshot in
            try Self.readableSource(request.source, bot: request.bot, user: request.user, as: caller, in: snapshot)
        }
        let snippets = document.snippets.sorted { $0.start < $1.start }
        let chosen = try Self.part(of: snippets, request, title: stored.title)
        var from = chosen.map(\.start).min() ?? 0, to = chosen.map(\.end).max() ?? 0
        // Pages asked for, exact where the index knows where each page starts.
        if let window = Self.pageWindow(request, pageStarts: document.pageStarts ?? [], textEnd: snippets.map(\.end).max() ?? 0) {
            from = max(from, window.lowerBound)
            to = min(to, window.upperBound)
        }
        if let start = request.start { from = max(from, start) }
        if let end = request.end { to = min(to, end) }
        guard from < to else {
            throw KBError(.notFound, "The part of \(request.source) asked for holds no text (the source's text ends at \(snippets.last?.end ?? 0)).")
        }
        var text = String.UnicodeScalarView(), length = 0, cursor = from, used: [Snippet] = []
        let limit = request.maxCharacters ?? 8_000
        var next: Int?
        for snippet in chosen where snippet.end > cursor && snippet.start < to {
            let scalars = Array(snippet.text.unicodeScalars)
            let skip = max(0, cursor - snippet.start), take = min(scalars.count, to - snippet.start)
            guard skip < take else { continue }
            if length > 0 && snippet.start > cursor { text.append("\n"); length += 1 }
            var piece = scalars[skip..<take]
            if length + piece.count > limit {
                // Cut at a white space near the limit, so a word is not split.
                let room = max(0, limit - length)
                var cut = room
                while cut > room / 2, cut > 0, !piece[piece.startIndex + cut - 1].properties.isWhitespace { cut -= 1 }
                if cut <= room / 2 { cut = room }
                piece = piece.prefix(cut)
                next = snippet.start + skip + cut
            }
            if used.isEmpty { from = max(from, snippet.start + skip) }
            text.append(contentsOf: piece)
            length += piece.count
            used.append(snippet)
            cursor = snippet.start + skip + piece.count
            if next != nil { break }
        }
        let pages = used.compactMap(\.pages)
        let span = document.pageStarts?.range(from: from, to: cursor) ?? pages.first.map { first in
            let last = pages.max { $0.end < $1.end } ?? first
            return PageRange(start: first.start, end: last.end, startLabel: first.startLabel, endLabel: last.endLabel)
        }
        let info = SourceInfo(stored)
        return SourceText(sourceID: info.id, sourcePath: stored.path, sourceTitle: stored.title, kind: stored.kind, pages: span,
                          pageLabel: span?.citation, headingPath: used.first?.headingPath ?? [],
                          pieceStart: from, pieceEnd: cursor, start: from, end: cursor,
                          text: String(text), next: next, partEnd: to)
    }

    /// Where the pages a request names (by number, or by printed label) start and end in the
    /// text; nil when it names none or the index does not know where its pages start.
    static func pageWindow(_ request: SourceReadRequest, pageStarts: [PageStart], textEnd: Int) -> Range<Int>? {
        guard !pageStarts.isEmpty else { return nil }
        var window: Range<Int>?
        func narrow(_ low: Int, _ high: Int) {
            guard let range = pageStarts.offsets(pages: low, high, textEnd: textEnd) else { return }
            window = window.map { $0.clamped(to: range) } ?? range
        }
        if let pages = request.pages {
            let bounds = pages.split(separator: "-", maxSplits: 1).compactMap { Int($0) }
            if let low = bounds.first, let high = bounds.last { narrow(low, high) }
        }
        if let labels = request.labels {
            let bounds = labels.split(separator: "-", maxSplits: 1).map(String.init)
            if let low = pageStarts.first(where: { $0.label == bounds.first })?.page,
               let high = pageStarts.last(where: { $0.label == bounds.last })?.page, low <= high {
                narrow(low, high)
            }
        }
        return window
    }

    /// The snippets of the part a request names: those on its pages (physical, then printed
    /// labels) and under its heading, each given; else all of them.
    static func part(of snippets: [Snippet], _ request: SourceReadRequest, title: String) throws -> [Snippet] {
        var chosen = snippets
        let paged = snippets.filter { $0.pages != nil }
        func pageSpan() -> String {
            guard let first = paged.first?.pages, let last = paged.map({ $0.pages! }).max(by: { $0.end < $1.end }) else { return "" }
            return "pages \(first.start)–\(last.end) (labelled \(first.startLabel)–\(last.endLabel))"
        }
        for (field, given) in [("pages", request.pages), ("labels", request.labels)] {
            guard let given else { continue }
            guard !paged.isEmpty else {
                throw KBError(.unprocessable, "\(request.source) (\(title)) has no pages; read it by \"heading\" or by \"start\" and \"end\".")
            }
            let bounds = given.split(separator: "-", maxSplits: 1).map(String.init)
            let low: Int, high: Int
            if field == "pages" {
                (low, high) = (Int(bounds[0])!, Int(bounds.last!)!)
                guard low <= high else {
                    throw KBError(.unprocessable, "\"pages\" is \(given): the last page comes before the first. Write it as \(high)-\(low).")
                }
            } else {
                func page(_ label: String, last: Bool) throws -> Int {
                    let numbers = paged.flatMap { snippet -> [Int] in
                        let range = snippet.pages!
                        return (range.startLabel == label ? [range.start] : []) + (range.endLabel == label ? [range.end] : [])
                    }
                    guard let number = last ? numbers.max() : numbers.min() else {
                        throw KBError(.notFound, "\(request.source) (\(title)) has no page labelled \(label); it has \(pageSpan()).")
                    }
                    return number
                }
                (low, high) = (try page(bounds[0], last: false), try page(bounds.last!, last: true))
                guard low <= high else {
                    throw KBError(.unprocessable, "\"labels\" is \(given), but the page labelled \(bounds[0]) comes after the one labelled \(bounds.last!).")
                }
            }
            chosen = chosen.filter { $0.pages.map { $0.end >= low && $0.start <= high } ?? false }
            guard !chosen.isEmpty else {
                throw KBError(.notFound, "\(request.source) (\(title)) holds no text on \(field == "pages" ? "pages" : "the pages labelled") \(given)"
                    + (request.pages != nil && request.labels != nil ? " within the other pages asked for" : "") + "; it has \(pageSpan()).")
            }
        }
        if let heading = request.heading {
            let wanted = heading.map { $0.lowercased() }
            let under = chosen.filter { snippet in
                snippet.headingPath.count >= wanted.count
                    && zip(snippet.headingPath, wanted).allSatisfy { $0.trimmingWhitespace.lowercased() == $1 }
            }
            guard !under.isEmpty else {
                var tops: [String] = []
                for path in chosen.map(\.headingPath) where path.count >= wanted.count {
                    let shown = path.prefix(wanted.count).joined(separator: Snippet.headingSeparator)
                    if !tops.contains(shown) { tops.append(shown) }
                }
                let list = tops.prefix(8).joined(separator: "; ") + (tops.count > 8 ? "; …" : "")
                let where_ = request.pages != nil || request.labels != nil ? " on the pages asked for" : ""
                throw KBError(.notFound, "\(request.source) (\(title)) has no heading \(heading.joined(separator: Snippet.headingSeparator))\(where_)"
                    + (list.isEmpty ? "." : "; its headings there are: \(list)."))
            }
            chosen = under
        }
        return chosen
    }

    /// Matches of a pattern in the sources a caller may read (`SourceGrepRequest`), source by
    /// source in path order, within the time bound (`Limits.grepSeconds`). Runs on the store's
    /// snapshot thread, off the cooperative pool.
    func grepSources(_ checked: Checked<SourceGrepRequest>, as caller: Caller) async throws -> SourceMatches {
        let request = checked.valid
        let seconds = limits.grepSeconds
        let limit = request.limit ?? 50
        return try await store.snapshot { snapshot in
            var answer = SourceMatches(pattern: request.pattern, matches: [], sourcesSearched: 0)
            guard var query = try Self.readable(bot: request.bot, user: request.user, as: caller, in: snapshot) else { return answer }
            query.tags = (request.tags ?? []).map { Tag($0) }
            query.kinds = Set((request.kinds ?? []).compactMap(SourceKind.init(rawValue:)))
            let all = try snapshot.sources()
            var paths = try snapshot.sourcePaths(passing: query)
            if let ids = request.sources, !ids.isEmpty {
                let named = Set(try ids.map { try Self.find($0, in: all).path })
                paths.formIntersection(named)
            }
            let byPath = Dictionary(all.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
            let pattern = try GrepPattern(request.pattern, literal: request.literal == true, ignoreCase: request.ignoreCase == true)
            // The bound is on searching, not on waiting for the store's connection or listing the
            // sources (a loaded PostgreSQL server took the whole bound over those and found nothing).
            let deadline = Date().addingTimeInterval(seconds)
            search: for path in paths.sorted() {
                guard Date() < deadline else { answer.truncated = "time"; break }
                guard let source = byPath[path], let document = try snapshot.document(path: path) else { continue }
                answer.sourcesSearched += 1
                let ids = try snapshot.snippetIDs(ofSource: path)
                let pageStarts = document.pageStarts ?? []
                /// The page a match is on (the span, when it runs over): the snippet's pages
                /// where the index does not know where its pages start.
                func pages(_ snippet: Snippet, _ start: Int, _ end: Int) -> PageRange? {
                    pageStarts.range(from: start, to: end) ?? snippet.pages
                }
                var seen = Set<Int>()   // overlapping snippets find a match twice
                var heading: [String] = []
                for (id, snippet) in zip(ids, document.snippets) {
                    // A heading kept beside the text (a note's), once where it starts.
                    if snippet.headingPath != heading, let title = snippet.headingPath.last, !snippet.text.hasPrefix(title),
                       let found = pattern.matches(in: title, deadline: deadline).first, seen.insert(-snippet.start - 1).inserted {
                        let page = pages(snippet, snippet.start, snippet.start + 1)
                        guard answer.matches.count < limit else { answer.truncated = "limit"; break search }
                        answer.matches.append(.init(
                            sourceID: SourceInfo(source).id, sourcePath: path, sourceTitle: source.title, kind: source.kind, snippetID: id,
                            pages: page, pageLabel: page?.citation, headingPath: snippet.headingPath, offset: snippet.start,
                            match: String(title[found]), line: title, inHeading: true))
                    }
                    heading = snippet.headingPath
                    for found in pattern.matches(in: snippet.text, deadline: deadline) {
                        let text = snippet.text
                        let offset = snippet.start + text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: found.lowerBound)
                        guard seen.insert(offset).inserted else { continue }
                        let page = pages(snippet, offset, offset + text[found].unicodeScalars.count)
                        guard answer.matches.count < limit else { answer.truncated = "limit"; break search }
                        answer.matches.append(.init(
                            sourceID: SourceInfo(source).id, sourcePath: path, sourceTitle: source.title, kind: source.kind, snippetID: id,
                            pages: page, pageLabel: page?.citation, headingPath: snippet.headingPath, offset: offset,
                            match: String(text[found]), line: Self.line(around: found, in: text)))
                    }
                    if Date() >= deadline { answer.truncated = "time"; break search }
                }
            }
            return answer
        }
    }

    /// The line a match is on, at most 240 characters of it around the match.
    static func line(around match: Range<String.Index>, in text: String) -> String {
        let start = text[..<match.lowerBound].lastIndex(where: \.isNewline).map { text.index(after: $0) } ?? text.startIndex
        let end = text[match.upperBound...].firstIndex(where: \.isNewline) ?? text.endIndex
        var line = String(text[start..<end])
        if line.count > 240 {
            let before = text.distance(from: start, to: match.lowerBound)
            let from = line.index(line.startIndex, offsetBy: max(0, min(before - 80, line.count - 240)))
            line = (from > line.startIndex ? "…" : "") + String(line[from...].prefix(240)) + "…"
        }
        return line.trimmingWhitespace
    }
}
