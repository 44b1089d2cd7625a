import CKBMarkup
public import Foundation
import KBCore

/// An element of a parsed XML or HTML document, copied out of libxml2's tree into values:
/// local names (no namespace prefixes), attributes by local name, children in order.
///
/// ```swift
/// let root = try Markup.html(data, name: "page.html")
/// root.first("title")?.text   // "Saturn returns"
/// ```
public struct MarkupElement: Sendable, Hashable {
    public var name: String
    public var attributes: [String: String]
    public var children: [MarkupNode]

    /// The text of the element and its descendants, in order.
    public var text: String {
        var out = ""
        func collect(_ nodes: [MarkupNode]) {
            for node in nodes {
                switch node {
                case .text(let text): out += text
                case .element(let element): collect(element.children)
                }
            }
        }
        collect(children)
        return out
    }

    /// Child elements, in order.
    public var elements: [MarkupElement] {
        children.compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// Child elements named `name`.
    public func elements(_ name: String) -> [MarkupElement] { elements.filter { $0.name == name } }

    /// The first element named `name` in document order (this one or a descendant).
    public func first(_ name: String) -> MarkupElement? {
        if self.name == name { return self }
        for case .element(let child) in children { if let found = child.first(name) { return found } }
        return nil
    }

    /// Every element named `name` in document order (this one and its descendants).
    public func all(_ name: String) -> [MarkupElement] {
        var found: [MarkupElement] = []
        func visit(_ element: MarkupElement) {
            if element.name == name { found.append(element) }
            for case .element(let child) in element.children { visit(child) }
        }
        visit(self)
        return found
    }

    /// The `id`s of this element and its descendants.
    public var ids: Set<String> {
        var ids = Set<String>()
        func visit(_ element: MarkupElement) {
            if let id = element.attributes["id"] { ids.insert(id) }
            for case .element(let child) in element.children { visit(child) }
        }
        visit(self)
        return ids
    }
}

public enum MarkupNode: Sendable, Hashable {
    case element(MarkupElement)
    case text(String)
}

/// libxml2's parsers (through CKBMarkup). Entities are not expanded from outside the document
/// and nothing is fetched from the network; HTML is read the way browsers read tag soup.
public enum Markup {
    /// Parses an XML document (an EPUB package, a DOCX part); the error names the file and part.
    public static func xml(_ data: Data, name: String) throws -> MarkupElement {
        let document = data.withUnsafeBytes { bytes in
            kb_markup_read_xml(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        }
        guard let document else {
            throw KBError(.unreadableFile, "\(name) is not well-formed XML; the file is damaged or not what its name says.")
        }
        defer { kb_markup_free_document(document) }
        guard let root = nodes(from: kb_markup_document_children(document)).lazy.compactMap({ node -> MarkupElement? in
            if case .element(let element) = node { element } else { nil }
        }).first else {
            throw KBError(.unreadableFile, "\(name) holds no XML element; the file is damaged.")
        }
        return root
    }

    /// Parses an HTML (or XHTML) document, repairing what browsers repair. Bytes that are valid
    /// UTF-8 are read as UTF-8 (libxml2 would otherwise assume Latin-1 without a `<meta charset>`).
    public static func html(_ data: Data, name: String) throws -> MarkupElement {
        let encoding: String? = String(data: data, encoding: .utf8) != nil ? "UTF-8" : nil
        let document = data.withUnsafeBytes { bytes in
            kb_markup_read_html(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), encoding)
        }
        guard let document else {
            throw KBError(.unreadableFile, "\(name) could not be read as HTML; the file is empty or damaged.")
        }
        defer { kb_markup_free_document(document) }
        // Without implied elements a fragment may have several top-level nodes: gather them.
        let children = nodes(from: kb_markup_document_children(document))
        let elements = children.compactMap { if case .element(let element) = $0 { element } else { nil } }
        if elements.count == 1, let only = elements.first, only.name == "html" { return only }
        return MarkupElement(name: "html", attributes: [:], children: children)
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }

    /// The node `first` and its following siblings, converted.
    private static func nodes(from first: UnsafeMutableRawPointer?) -> [MarkupNode] {
        var result: [MarkupNode] = []
        var node = first
        while let current = node {
            switch Int(kb_markup_type(current)) {
            case KB_MARKUP_ELEMENT:
                if let element = element(current) { result.append(.element(element)) }
            case KB_MARKUP_TEXT, KB_MARKUP_CDATA:
                if let text = string(kb_markup_content(current)) { result.append(.text(text)) }
            case KB_MARKUP_ENTITY_REF:
                // An entity the document does not define stays as it was written.
                if let name = string(kb_markup_name(current)) { result.append(.text("&\(name);")) }
            default: break
            }
            node = kb_markup_next(current)
        }
        return result
    }

    private static func element(_ node: UnsafeMutableRawPointer) -> MarkupElement? {
        guard let name = string(kb_markup_name(node)) else { return nil }
        var attributes: [String: String] = [:]
        var attribute = kb_markup_attributes(node)
        while let current = attribute {
            if let key = string(kb_markup_attribute_name(current)) {
                let raw = kb_markup_attribute_value(current)
                let value = raw.map { String(cString: $0) } ?? ""
                kb_markup_free_string(raw)
                // `epub:type` is kept under its prefixed name too; the plain name holds the first seen.
                if let prefix = string(kb_markup_attribute_prefix(current)) { attributes[prefix + ":" + key] = value }
                if attributes[key] == nil { attributes[key] = value }
            }
            attribute = kb_markup_next_attribute(current)
        }
        return MarkupElement(name: name.lowercased(), attributes: attributes, children: nodes(from: kb_markup_children(node)))
    }
}
