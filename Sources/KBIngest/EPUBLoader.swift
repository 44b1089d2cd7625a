public import Foundation
public import KBCore

/// Turns an EPUB (2 or 3) into a source and its snippets: the chapters in the spine's reading
/// order, the table of contents (EPUB 3 nav, else the EPUB 2 NCX) as the heading path of the
/// text from each entry on, the metadata as title and tags (`author:…`, `lang:…`, subjects),
/// footnotes kept with the paragraph that refers to them. Images are skipped. Right-to-left and
/// any script are kept as written. Pure: bytes in, document out.
///
/// ```swift
/// let document = try EPUBLoader(options: options).load(data, path: "/books/saturn.epub", contentHash: hash)
/// document.snippets[9].headingPathString   // "Chapter 3 › The Saturn return"
/// ```
public struct EPUBLoader: Sendable {
    public var options: IngestOptions

    public init(options: IngestOptions) { self.options = options }

    /// A table-of-contents entry: where it points and the titles down to it.
    struct TOCEntry: Hashable {
        var file: String
        var fragment: String?
        var path: [String]
    }

    /// Encryption algorithms that only obfuscate embedded fonts: such a book is not locked.
    static let fontObfuscation: Set<String> = ["http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"]

    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        let zip = try ZipContainer(data, name: name, format: "an EPUB")
        try Self.checkNotLocked(zip)
        guard let container = try zip.xml("META-INF/container.xml") else {
            throw KBError(.unreadableFile, "\(name) is not an EPUB: it has no META-INF/container.xml.")
        }
        guard let packagePath = container.first("rootfile")?.attributes["full-path"], let package = try zip.xml(packagePath) else {
            throw KBError(.unreadableFile, "\(name): META-INF/container.xml names no package document (OPF) that the file holds.")
        }

        // The manifest, by id, and the spine in reading order.
        var manifest: [String: (href: String, type: String, properties: String)] = [:]
        for item in package.first("manifest")?.elements("item") ?? [] {
            guard let id = item.attributes["id"], let href = item.attributes["href"] else { continue }
            manifest[id] = (ArchivePath.resolve(href, against: packagePath), item.attributes["media-type"] ?? "", item.attributes["properties"] ?? "")
        }
        let spine = package.first("spine")
        let chapters = (spine?.elements("itemref") ?? []).compactMap { manifest[$0.attributes["idref"] ?? ""] }
            .filter { $0.type.contains("html") || $0.href.hasSuffix("html") || $0.href.hasSuffix(".htm") }.map(\.href)
        guard !chapters.isEmpty else { throw KBError(.unreadableFile, "\(name): the EPUB's spine lists no chapters (XHTML documents).") }

        // The table of contents: the EPUB 3 nav document, else the NCX.
        var toc: [TOCEntry] = []
        if let nav = manifest.values.first(where: { $0.properties.split(separator: " ").contains("nav") }),
           let data = try zip.part(nav.href) {
            toc = Self.navEntries(try Markup.html(data, name: "\(name) (\(nav.href))"), file: nav.href)
        }
        if toc.isEmpty {
            let ncx = spine?.attributes["toc"].flatMap { manifest[$0]?.href }
                ?? manifest.values.first { $0.type == "application/x-dtbncx+xml" }?.href
            if let ncx, let document = try zip.xml(ncx) { toc = Self.ncxEntries(document, file: ncx) }
        }

        // Every chapter parsed once; footnotes are gathered across them first.
        var documents: [(file: String, root: MarkupElement)] = []
        for chapter in chapters where !documents.contains(where: { $0.file == chapter }) {
            guard let data = try zip.part(chapter) else {
                throw KBError(.unreadableFile, "\(name): the spine lists \(chapter), which the file does not hold.")
            }
            let root = try Markup.html(data, name: "\(name) (\(chapter))")
            documents.append((chapter, root.first("body") ?? root))
        }
        var text = MarkupText(headingsShape: toc.isEmpty, notes: MarkupText.referencedNotes(documents))
        let tocByFile = Dictionary(grouping: toc, by: \.file)
        for document in documents {
            let entries = tocByFile[document.file] ?? []
            let ids = entries.contains { $0.fragment != nil } ? document.root.ids : []
            if let start = entries.first(where: { $0.fragment == nil }) ?? entries.first(where: { !ids.contains($0.fragment ?? "") }) {
                text.setOuterPath(start.path)
            }
            text.anchors = Dictionary(entries.compactMap { entry in entry.fragment.map { ($0, entry.path) } }, uniquingKeysWith: { first, _ in first })
            text.read(document.root, file: document.file)
        }
        text.finish()

        // Metadata.
        let metadata = package.first("metadata")
        func values(_ element: String) -> [String] {
            (metadata?.all(element) ?? []).map { MarkupText.collapse($0.text) }.filter { !$0.isEmpty }
        }
        let title = values("title").first ?? text.firstHeading ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var tags = values("creator").map { Tag(key: "author", value: $0) } + values("subject").map { Tag($0) }
        if let language = HTMLLoader.languageTag(values("language").first) { tags.append(language) }
        let sourceTags = unique(tags + options.tags)
        let keywords = (values("title").dropFirst() + values("description")).map { $0 }

        let source = Source(path: path, kind: .epub, title: title, contentHash: contentHash, size: data.count,
                            modifiedAt: modifiedAt, tags: sourceTags, keywords: Array(keywords))
        let snippets = DocumentAssembly.snippets(text.scalars, sections: text.sections, options: options, title: title, sourceTags: sourceTags)
        let warnings = snippets.isEmpty ? ["\(name) has no text in its chapters (a book of images? try --ocr force on a PDF of it)."] : []
        return SourceDocument(source: source, snippets: snippets, warnings: warnings)
    }

    /// Refuses a book whose content is encrypted (DRM): only font obfuscation is allowed.
    static func checkNotLocked(_ zip: ZipContainer) throws {
        let advice = "kb cannot read DRM-protected books; use a DRM-free copy (or one exported without protection)."
        if zip.contains("META-INF/rights.xml") {
            throw KBError(.unreadableFile, "\(zip.name) is protected by DRM (META-INF/rights.xml). \(advice)")
        }
        guard let encryption = try zip.xml("META-INF/encryption.xml") else { return }
        let algorithms = encryption.all("encryptionmethod").compactMap { $0.attributes["Algorithm"] }
        if algorithms.contains(where: { !fontObfuscation.contains($0) }) {
            throw KBError(.unreadableFile, "\(zip.name) is protected by DRM (its content is encrypted). \(advice)")
        }
    }

    /// Entries of an EPUB 3 navigation document: the `<nav epub:type="toc">` (or the first nav) lists.
    static func navEntries(_ root: MarkupElement, file: String) -> [TOCEntry] {
        let navs = root.all("nav")
        guard let nav = navs.first(where: { ($0.attributes["epub:type"] ?? $0.attributes["type"] ?? "").split(separator: " ").contains("toc") })
                ?? navs.first, let list = nav.first("ol") ?? nav.first("ul") else { return [] }
        var entries: [TOCEntry] = []
        func walk(_ list: MarkupElement, _ path: [String]) {
            for item in list.elements("li") {
                let label = item.elements.first { $0.name == "a" || $0.name == "span" }
                let title = label.map { MarkupText.collapse($0.text) } ?? ""
                let itemPath = title.isEmpty ? path : path + [title]
                if let href = label?.attributes["href"] { entries.append(entry(href, from: file, path: itemPath)) }
                for sublist in item.elements.filter({ $0.name == "ol" || $0.name == "ul" }) { walk(sublist, itemPath) }
            }
        }
        walk(list, [])
        return entries
    }

    /// Entries of an EPUB 2 NCX: nested `navPoint`s with their labels and content sources.
    static func ncxEntries(_ root: MarkupElement, file: String) -> [TOCEntry] {
        var entries: [TOCEntry] = []
        func walk(_ parent: MarkupElement, _ path: [String]) {
            for point in parent.elements("navpoint") {
                let title = point.first("navlabel").map { MarkupText.collapse($0.text) } ?? ""
                let pointPath = title.isEmpty ? path : path + [title]
                if let src = point.first("content")?.attributes["src"] { entries.append(entry(src, from: file, path: pointPath)) }
                walk(point, pointPath)
            }
        }
        if let map = root.first("navmap") { walk(map, []) }
        return entries
    }

    static func entry(_ href: String, from file: String, path: [String]) -> TOCEntry {
        let parts = href.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let fragment = parts.count > 1 && !parts[1].isEmpty ? String(parts[1]) : nil
        return TOCEntry(file: ArchivePath.resolve(String(parts[0]), against: file), fragment: fragment, path: path)
    }
}
