/// A run of text under one heading: the unit the chunker never crosses.
public struct TextSection: Hashable, Sendable {
    /// Headings above this text, outermost first.
    public var headingPath: [String]
    /// Blocks (paragraphs, code blocks, lists) as scalar offset ranges, in order, trimmed.
    public var blocks: [Range<Int>]

    public init(headingPath: [String], blocks: [Range<Int>]) {
        self.headingPath = headingPath
        self.blocks = blocks
    }
}
