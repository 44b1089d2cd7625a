public import Foundation
public import KBCore

/// Turns a Markdown or plain-text file into a source and its snippets. Pure: bytes in, document out.
///
/// ```swift
/// let document = try NoteLoader(options: options).load(data, path: "/notes/venus.md", contentHash: hash)
/// ```
public struct NoteLoader: Sendable {
    public var options: IngestOptions

    public init(options: IngestOptions) { self.options = options }

    /// - Parameters:
    ///   - path: the path recorded in the index; unless `markdown` says, its extension picks the format.
    ///   - displayName: how errors name the file (the path as the user typed it).
    ///   - markdown: read the text as Markdown (true) or plain (false); nil: by the extension.
    public func load(
        _ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil, markdown: Bool? = nil
    ) throws -> SourceDocument {
        let name = displayName ?? path
        let decoded = try TextDecoding.decode(data, name: name)
        let scalars = Array(decoded.text.unicodeScalars)
        let url = URL(fileURLWithPath: path)
        let isMarkdown = markdown ?? FileTypes.markdown.contains(url.pathExtension.lowercased())

        var frontMatter = FrontMatter()
        let sections: [TextSection]
        var firstTitle: String?
        if isMarkdown {
            frontMatter = try FrontMatter.parse(scalars, name: name)
            let structure = MarkdownStructure.parse(scalars, from: frontMatter.bodyStart)
            sections = structure.sections
            firstTitle = structure.firstTitle
        } else {
            sections = MarkdownStructure.paragraphs(scalars)
        }
        let title = frontMatter.title ?? firstTitle ?? url.deletingPathExtension().lastPathComponent
        let sourceTags = unique(frontMatter.tags + options.tags)
        let source = Source(
            path: path, kind: .note, title: title, contentHash: contentHash, size: data.count,
            modifiedAt: modifiedAt, tags: sourceTags, keywords: frontMatter.keywords)

        let snippets = DocumentAssembly.snippets(scalars, sections: sections, options: options, title: title, sourceTags: sourceTags)
        return SourceDocument(source: source, snippets: snippets, warnings: decoded.warnings)
    }
}

func unique(_ tags: [Tag]) -> [Tag] {
    var seen = Set<Tag>()
    return tags.filter { !$0.isEmpty && seen.insert($0).inserted }
}
