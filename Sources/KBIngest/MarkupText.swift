import Foundation
import KBCore

/// Text and sections from HTML-like markup (web pages, EPUB chapters): block elements become
/// blocks, headings open sections, whitespace is collapsed outside `<pre>`, a table row becomes
/// one line of cells, and navigation, scripts, styles, footers and asides are left out.
/// Footnotes (`epub:type="footnote"`, `role="doc-footnote"`) are moved to the end of the block
/// that refers to them, so a snippet holds the paragraph with its notes.
struct MarkupText {
    private(set) var scalars: [Unicode.Scalar] = []
    private(set) var sections: [TextSection] = []
    /// The first `<h1>` (or other heading, when there is none) seen.
    var firstHeading: String? { firstH1 ?? firstAnyHeading }
    private var firstH1: String?
    private var firstAnyHeading: String?

    /// Heading path set from outside (an EPUB's table of contents); in-document headings go below it.
    private var outerPath: [String] = []
    private var headings: [(level: Int, title: String)] = []
    private var blocks: [Range<Int>] = []
    private var pending = ""
    private var preformatted = 0
    /// Footnotes that some link refers to, by `file#id`: read where they are referred to.
    private let notes: [String: MarkupElement]
    private var pendingNotes: [String] = []
    private var file = ""
    /// Element ids of the file being read where the heading path changes (an EPUB's TOC anchors).
    var anchors: [String: [String]] = [:]
    /// Whether in-document headings add to the path (false when a TOC gives it).
    private var headingsShape = true

    static let skipped: Set<String> = ["script", "style", "noscript", "template", "nav", "aside", "footer", "form", "button",
                                       "select", "svg", "math", "iframe", "object", "embed", "canvas", "head", "title", "img", "video", "audio"]
    static let blockElements: Set<String> = ["p", "div", "li", "blockquote", "pre", "dd", "dt", "figcaption", "figure", "section", "article",
                                             "main", "body", "ul", "ol", "dl", "table", "thead", "tbody", "tfoot", "caption", "address",
                                             "center", "details", "summary", "hr", "header", "html", "tr", "fieldset", "legend"]
    /// ARIA roles and class or id words of page furniture.
    static let furnitureRoles: Set<String> = ["navigation", "banner", "contentinfo", "complementary", "search"]
    static let furnitureWords: Set<String> = ["nav", "navbar", "navigation", "menu", "sidebar", "footer", "breadcrumb", "breadcrumbs",
                                              "skip-link", "cookie-banner"]

    /// - Parameters:
    ///   - anchors: element id → heading path to use from that element on (TOC entries).
    ///   - headingsShape: whether `<h1>`–`<h6>` change the heading path.
    ///   - notes: the footnotes some link refers to (`MarkupText.referencedNotes`).
    init(headingsShape: Bool = true, notes: [String: MarkupElement] = [:]) {
        self.headingsShape = headingsShape
        self.notes = notes
    }

    /// Sets the heading path from outside (a TOC entry for the start of a chapter file).
    mutating func setOuterPath(_ path: [String]) {
        guard path != outerPath else { return }
        flushSection()
        outerPath = path
        headings = []
    }

    /// Reads `root` (a document or the part of it chosen as the main text) of `file` (its path
    /// in an EPUB, for links between files).
    mutating func read(_ root: MarkupElement, file: String = "") {
        self.file = file
        visit(root)
        flushBlock()
    }

    /// Ends the text: the last section is closed.
    mutating func finish() { flushSection() }

    /// The footnotes of `documents` (file, root) that a link in them refers to, by `file#id`.
    static func referencedNotes(_ documents: [(file: String, root: MarkupElement)]) -> [String: MarkupElement] {
        var notes: [String: MarkupElement] = [:]
        var links = Set<String>()
        func visit(_ element: MarkupElement, _ file: String) {
            if isNote(element), let id = element.attributes["id"] { notes[file + "#" + id] = element }
            if element.name == "a", let href = element.attributes["href"], let key = noteKey(href, from: file) { links.insert(key) }
            for case .element(let child) in element.children { visit(child, file) }
        }
        for document in documents { visit(document.root, document.file) }
        return notes.filter { links.contains($0.key) }
    }

    /// `file#id` for a link from `file`: `#id` stays in the file, `other.xhtml#id` is resolved
    /// against its folder; nil for a link without a fragment.
    static func noteKey(_ href: String, from file: String) -> String? {
        guard let hash = href.firstIndex(of: "#") else { return nil }
        let target = String(href[..<hash]), id = String(href[href.index(after: hash)...])
        guard !id.isEmpty else { return nil }
        return (target.isEmpty ? file : ArchivePath.resolve(target, against: file)) + "#" + id
    }

    static func isNote(_ element: MarkupElement) -> Bool {
        let kinds = Set(((element.attributes["epub:type"] ?? "") + " " + (element.attributes["role"] ?? "")).split(separator: " ").map(String.init))
        return !kinds.isDisjoint(with: ["footnote", "endnote", "rearnote", "note", "doc-footnote", "doc-endnote"])
    }

    static func isFurniture(_ element: MarkupElement) -> Bool {
        if let role = element.attributes["role"], furnitureRoles.contains(role.lowercased()) { return true }
        let words = ((element.attributes["class"] ?? "") + " " + (element.attributes["id"] ?? "")).lowercased().split(separator: " ")
        return words.contains { furnitureWords.contains(String($0)) }
    }

    private mutating func visit(_ element: MarkupElement) {
        if let id = element.attributes["id"], let path = anchors[id] {
            flushBlock()
            setOuterPath(path)
        }
        let name = element.name
        if Self.skipped.contains(name) && !Self.isNote(element) || Self.isFurniture(element)
            || Self.isNote(element) && element.attributes["id"].map({ notes[file + "#" + $0] != nil }) == true {
            return
        }
        if name.count == 2, name.first == "h", let level = Int(String(name.last!)), (1...6).contains(level) {
            flushBlock()
            let title = Self.collapse(element.text)
            guard !title.isEmpty else { return }
            if level == 1, firstH1 == nil { firstH1 = title }
            if firstAnyHeading == nil { firstAnyHeading = title }
            if headingsShape {
                flushSection()
                headings.removeAll { $0.level >= level }
                headings.append((level, title))
            }
            return
        }
        if name == "tr" {
            flushBlock()
            let cells = element.elements.filter { $0.name == "td" || $0.name == "th" }.map { Self.collapse($0.text) }
            pending = cells.joined(separator: " | ")
            flushBlock(collapsing: false)
            return
        }
        if name == "br" {
            pending += preformatted > 0 ? "\n" : "\u{2028}"
            return
        }
        if name == "a", let href = element.attributes["href"], let key = Self.noteKey(href, from: file) {
            if let note = notes[key] {
                for child in element.children { visit(child) }
                let text = Self.collapse(note.text)
                if !text.isEmpty { pendingNotes.append(text) }
                return
            }
        }
        let isBlock = Self.blockElements.contains(name)
        if isBlock { flushBlock() }
        if name == "pre" { preformatted += 1 }
        for child in element.children { visit(child) }
        if name == "pre" {
            flushBlock(collapsing: false)
            preformatted -= 1
        }
        if isBlock { flushBlock() }
    }

    private mutating func visit(_ node: MarkupNode) {
        switch node {
        case .text(let text): pending += text
        case .element(let element): visit(element)
        }
    }

    /// Collapses runs of whitespace into one space and trims; a `<br>` (U+2028 here) becomes a line break.
    static func collapse(_ text: String) -> String {
        var out = ""
        var space = false
        for scalar in text.unicodeScalars {
            if scalar == "\u{2028}" {
                while out.unicodeScalars.last == " " { out.unicodeScalars.removeLast() }
                out.unicodeScalars.append("\n")
                space = false
            } else if scalar.properties.isWhitespace {
                space = !out.isEmpty && out.unicodeScalars.last != "\n"
            } else {
                if space { out.unicodeScalars.append(" ") }
                out.unicodeScalars.append(scalar)
                space = false
            }
        }
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private mutating func flushBlock(collapsing: Bool = true) {
        var text = TextHygiene.clean(collapsing && preformatted == 0 ? Self.collapse(pending) : pending.trimmingCharacters(in: .newlines))
        pending = ""
        if !pendingNotes.isEmpty {
            text += (text.isEmpty ? "" : "\n") + pendingNotes.joined(separator: "\n")
            pendingNotes = []
        }
        guard !text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) else { return }
        if !scalars.isEmpty { scalars += ["\n", "\n"] }
        let start = scalars.count
        scalars += text.unicodeScalars
        blocks.append(start..<scalars.count)
    }

    mutating func flushSection() {
        flushBlock()
        guard !blocks.isEmpty else { return }
        sections.append(TextSection(headingPath: outerPath + headings.map(\.title), blocks: blocks))
        blocks = []
    }
}
