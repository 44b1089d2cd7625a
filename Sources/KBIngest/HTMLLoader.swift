public import Foundation
public import KBCore

/// A loader of one file format: bytes in, document out. `DocumentReader` picks one by kind.
/// Turns a saved web page or manual page (`.html`, `.htm`) into a source and its snippets: the
/// main text (`<main>`, else the `<article>`s, else the body) without navigation, asides,
/// footers, scripts and styles; headings as the heading path; `<title>` as the title,
/// `<meta name="keywords">` as tags, the description as a keyword and the document's `lang` as
/// a `lang:` tag. Pure: bytes in, document out.
///
/// ```swift
/// let document = try HTMLLoader(options: options).load(data, path: "/manual/install.html", contentHash: hash)
/// ```
public struct HTMLLoader: Sendable {
    public var options: IngestOptions

    public init(options: IngestOptions) { self.options = options }

    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        guard !data.isEmpty else { throw KBError(.unreadableFile, "\(name) is empty.") }
        if let binary = MediaType.binaryFormat(of: data.prefix(8192)) {
            throw KBError(.unreadableFile, "\(name) is \(binary), not an HTML page. Rename it to what it is, or re-save the page as HTML.")
        }
        let root = try Markup.html(data, name: name)
        var text = MarkupText(notes: MarkupText.referencedNotes([("", root)]))
        for part in Self.mainText(of: root) { text.read(part) }
        text.finish()

        let head = root.first("head")
        let metas = (head ?? root).all("meta")
        func meta(_ key: String) -> String? {
            metas.first { ($0.attributes["name"] ?? $0.attributes["property"])?.lowercased() == key }?.attributes["content"]
        }
        let pageTitle = head?.first("title").map { MarkupText.collapse($0.text) }.flatMap { $0.isEmpty ? nil : $0 }
        let title = pageTitle ?? text.firstHeading ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var tags = (meta("keywords") ?? "").split(whereSeparator: { $0 == "," || $0 == ";" }).map { Tag(String($0)) }
        if let language = Self.languageTag(root.attributes["lang"] ?? root.attributes["xml:lang"]) { tags.append(language) }
        let sourceTags = unique(tags + options.tags)
        let keywords = [meta("description") ?? meta("og:description")].compactMap { $0.map(MarkupText.collapse) }.filter { !$0.isEmpty }

        let source = Source(path: path, kind: .html, title: title, contentHash: contentHash, size: data.count,
                            modifiedAt: modifiedAt, tags: sourceTags, keywords: keywords)
        let snippets = DocumentAssembly.snippets(text.scalars, sections: text.sections, options: options, title: title, sourceTags: sourceTags)
        let warnings = snippets.isEmpty ? ["\(name) has no text outside navigation, scripts and footers."] : []
        return SourceDocument(source: source, snippets: snippets, warnings: warnings)
    }

    /// The parts of a page that hold its text: its `<main>`, else its outermost `<article>`s,
    /// else its body.
    static func mainText(of root: MarkupElement) -> [MarkupElement] {
        let body = root.first("body") ?? root
        if let main = body.first("main") { return [main] }
        var articles: [MarkupElement] = []
        func outermost(_ element: MarkupElement) {
            if element.name == "article" { articles.append(element); return }
            element.elements.forEach(outermost)
        }
        outermost(body)
        return articles.isEmpty ? [body] : articles
    }

    /// `lang:uk` for `uk-UA`; nil for none.
    static func languageTag(_ code: String?) -> Tag? {
        guard let primary = code?.split(whereSeparator: { $0 == "-" || $0 == "_" }).first, (2...3).contains(primary.count),
              primary.allSatisfy(\.isLetter) else { return nil }
        return Tag(key: "lang", value: primary.lowercased())
    }
}
