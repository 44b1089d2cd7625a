public import Foundation
public import KBCore

/// Turns a Word document (`.docx`) into a source and its snippets: paragraphs in order, Heading
/// 1–6 (and Title) styles — or a paragraph's outline level — as the heading path, each table
/// row as one line of cells joined by ` | `, the core properties as title (`dc:title`), tags
/// (`cp:keywords`, `author:` from `dc:creator`) and keywords (`dc:subject`, `dc:description`).
/// Pure: bytes in, document out.
///
/// ```swift
/// let document = try DOCXLoader(options: options).load(data, path: "/docs/lease.docx", contentHash: hash)
/// ```
public struct DOCXLoader: Sendable {
    public var options: IngestOptions

    public init(options: IngestOptions) { self.options = options }

    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        let zip = try ZipContainer(data, name: name, format: "a Word document")
        if zip.contains("EncryptionInfo") || zip.contains("EncryptedPackage") {
            throw KBError(.unreadableFile, "\(name) is password-protected; save an unprotected copy in Word and ingest that.")
        }
        guard let document = try zip.xml("word/document.xml") else {
            throw KBError(.unreadableFile, "\(name) is not a Word document: it has no word/document.xml (is it another Office format?).")
        }
        let levels = Self.headingLevels(try zip.xml("word/styles.xml"))

        // The body as markup MarkupText reads: h1–h6, p and table rows.
        let body = document.first("body") ?? document
        let html = MarkupElement(name: "body", attributes: [:], children: Self.blocks(body.elements, levels: levels))
        var text = MarkupText()
        text.read(html)
        text.finish()

        let core = try zip.xml("docProps/core.xml")
        func value(_ element: String) -> String? {
            core?.first(element).map { MarkupText.collapse($0.text) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let title = value("title") ?? text.firstHeading ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        var tags = (value("keywords") ?? "").split(whereSeparator: { $0 == "," || $0 == ";" }).map { Tag(String($0)) }
        if let creator = value("creator") { tags.append(Tag(key: "author", value: creator)) }
        if let language = HTMLLoader.languageTag(value("language")) { tags.append(language) }
        let sourceTags = unique(tags + options.tags)
        let keywords = [value("subject"), value("description")].compactMap { $0 }

        let source = Source(path: path, kind: .docx, title: title, contentHash: contentHash, size: data.count,
                            modifiedAt: modifiedAt, tags: sourceTags, keywords: keywords)
        let snippets = DocumentAssembly.snippets(text.scalars, sections: text.sections, options: options, title: title, sourceTags: sourceTags)
        return SourceDocument(source: source, snippets: snippets, warnings: snippets.isEmpty ? ["\(name) has no text."] : [])
    }

    /// Heading level by style id: `Heading N` styles (by name, whatever the id), `Title` as 1,
    /// and styles with an outline level.
    static func headingLevels(_ styles: MarkupElement?) -> [String: Int] {
        var levels: [String: Int] = [:]
        for style in styles?.all("style") ?? [] {
            guard let id = style.attributes["styleId"] else { continue }
            let name = (style.first("name")?.attributes["val"] ?? id).lowercased()
            if name == "title" {
                levels[id] = 1
            } else if name.hasPrefix("heading"), let level = Int(name.dropFirst("heading".count).trimmingCharacters(in: .whitespaces)), (1...6).contains(level) {
                levels[id] = level
            } else if let outline = style.first("outlinelvl")?.attributes["val"].flatMap(Int.init), (0...5).contains(outline) {
                levels[id] = outline + 1
            }
        }
        return levels
    }

    /// Body elements as markup: paragraphs (headings by style or outline level), tables by
    /// rows, content controls unwrapped.
    static func blocks(_ elements: [MarkupElement], levels: [String: Int]) -> [MarkupNode] {
        var nodes: [MarkupNode] = []
        for element in elements {
            switch element.name {
            case "p":
                let properties = element.first("ppr")
                let style = properties?.first("pstyle")?.attributes["val"]
                let outline = properties?.first("outlinelvl")?.attributes["val"].flatMap(Int.init).map { $0 + 1 }
                let level = style.flatMap { levels[$0] } ?? outline.flatMap { (1...6).contains($0) ? $0 : nil }
                nodes.append(.element(MarkupElement(name: level.map { "h\($0)" } ?? "p", attributes: [:], children: runs(element))))
            case "tbl":
                let rows = element.elements("tr").map { row in
                    MarkupElement(name: "tr", attributes: [:], children: row.elements("tc").map { cell in
                        .element(MarkupElement(name: "td", attributes: [:],
                                               children: cell.elements("p").flatMap { runs($0) + [.text(" ")] }))
                    })
                }
                nodes.append(.element(MarkupElement(name: "table", attributes: [:], children: rows.map { .element($0) })))
            case "sdt":
                nodes += blocks(element.first("sdtcontent")?.elements ?? [], levels: levels)
            default:
                continue
            }
        }
        return nodes
    }

    /// A paragraph's text: runs' text, tabs and breaks, in order (hyperlinks and fields'
    /// results included; deleted text and field codes left out).
    static func runs(_ paragraph: MarkupElement) -> [MarkupNode] {
        var nodes: [MarkupNode] = []
        func visit(_ element: MarkupElement) {
            switch element.name {
            case "t": nodes.append(.text(element.text))
            case "tab": nodes.append(.text("\t"))
            case "br", "cr": nodes.append(.element(MarkupElement(name: "br", attributes: [:], children: [])))
            case "deltext", "instrtext", "ppr", "rpr", "footnotereference", "endnotereference": break
            default: element.elements.forEach(visit)
            }
        }
        paragraph.elements.forEach(visit)
        return nodes
    }
}
