import KBCore

/// The last step every text loader shares: sections cut into snippets by the chunker, each
/// tagged with its source's tags and the vocabulary's matches.
enum DocumentAssembly {
    /// Snippets of `sections` of `scalars`, numbered from `firstOrdinal`; `extraTags` and
    /// `weight` go on each of them (a record's field tags and boost).
    static func snippets(
        _ scalars: [Unicode.Scalar], sections: [TextSection], options: IngestOptions, title: String, sourceTags: [Tag],
        firstOrdinal: Int = 0, extraTags: [Tag] = [], weight: Double? = nil
    ) -> [Snippet] {
        options.chunker.chunk(scalars, sections: sections).enumerated().map { index, span in
            let text = String(String.UnicodeScalarView(scalars[span.range]))
            var tags = unique(sourceTags + extraTags)
            if let vocabulary = options.vocabulary {
                let haystack = ([title] + span.headingPath + [text]).joined(separator: "\n")
                tags = unique(tags + vocabulary.tags(for: haystack))
            }
            return Snippet(
                ordinal: firstOrdinal + index, text: text, start: span.range.lowerBound, end: span.range.upperBound,
                headingPath: span.headingPath, tags: tags, weight: weight)
        }
    }
}
