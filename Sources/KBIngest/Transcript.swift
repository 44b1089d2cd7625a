public import Foundation
public import KBCore

/// A conversation as one source of kind `conversation`: one snippet per turn, `Speaker: text`
/// (a turn longer than the chunk size is cut within itself), its speaker as the tag
/// `speaker:NAME` and its day as `date:YYYY-MM-DD` (from `time`), its session (else its day) as
/// its heading. Search lifts a turn by the turns around it (`Ranking.neighbourSmoothing`).
///
/// A JSON Lines file whose every line has a `speaker` (or `role`) and a `text` (or `content`)
/// is read as a transcript; `time` (ISO 8601), `id` and `session` are kept where given:
///
/// ```json
/// {"speaker": "Ada", "text": "I started pottery classes.", "time": "2026-05-08T13:56:00Z", "session": "Monday chat"}
/// {"speaker": "Bot", "text": "How were they?", "time": "2026-05-08T13:57:00Z"}
/// ```
public enum Transcript {
    public struct Turn: Sendable, Hashable {
        public var speaker: String
        public var text: String
        /// When it was said, ISO 8601 as given.
        public var time: String?
        public var id: String?
        /// The session or title it belongs to.
        public var session: String?

        public init(speaker: String, text: String, time: String? = nil, id: String? = nil, session: String? = nil) {
            self.speaker = speaker
            self.text = text
            self.time = time
            self.id = id
            self.session = session
        }

        /// `Speaker: text`, unless the text already starts so.
        public var line: String {
            let prefix = speaker + ":"
            return speaker.isEmpty || text.hasPrefix(prefix) ? text : prefix + " " + text
        }

        /// The day of `time` (`YYYY-MM-DD`), when it starts with one.
        public var day: String? {
            guard let time, time.count >= 10 else { return nil }
            let day = String(time.prefix(10))
            let digits = day.enumerated().allSatisfy { index, character in index == 4 || index == 7 ? character == "-" : character.isASCII && character.isNumber }
            return digits ? day : nil
        }
    }

    /// The turns a file's records are, or nil when they are not all turns (no record, or one
    /// without a speaker or role, or without a text or content).
    static func turns(_ records: [[String: RecordLoader.Value]]) -> [Turn]? {
        guard !records.isEmpty else { return nil }
        var turns: [Turn] = []
        for record in records {
            guard let speaker = (record["speaker"] ?? record["role"])?.strings.first, !speaker.isEmpty,
                  let text = (record["text"] ?? record["content"])?.strings.joined(separator: "\n") else { return nil }
            turns.append(Turn(speaker: speaker, text: text, time: record["time"]?.strings.first, id: record["id"]?.strings.first,
                              session: (record["session"] ?? record["title"])?.strings.first))
        }
        return turns
    }

    /// The source a conversation's turns make, and where each turn starts in its text (in
    /// Unicode scalars; the turns stand one per line).
    public static func document(
        _ turns: [Turn], path: String, title: String, contentHash: String, size: Int, modifiedAt: Date? = nil, options: IngestOptions
    ) -> (document: SourceDocument, turnStarts: [Int]) {
        var scalars: [Unicode.Scalar] = []
        var snippets: [Snippet] = []
        var starts: [Int] = []
        let sourceTags = unique(options.tags)
        for turn in turns {
            if !scalars.isEmpty { scalars.append("\n") }
            let start = scalars.count
            starts.append(start)
            scalars += turn.line.unicodeScalars
            guard !turn.text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) else { continue }
            var tags = [Tag(key: "speaker", value: turn.speaker)]
            if let day = turn.day { tags.append(Tag(key: "date", value: day)) }
            let heading = turn.session.flatMap { $0.isEmpty ? nil : $0 } ?? turn.day
            let section = TextSection(headingPath: heading.map { [$0] } ?? [], blocks: [start..<scalars.count])
            snippets += DocumentAssembly.snippets(scalars, sections: [section], options: options, title: title, sourceTags: sourceTags,
                                                  firstOrdinal: snippets.count, extraTags: tags)
        }
        let source = Source(path: path, kind: .conversation, title: title, contentHash: contentHash, size: size,
                            modifiedAt: modifiedAt, tags: sourceTags)
        let warnings = snippets.isEmpty ? ["\(path) holds no turn with text."] : []
        return (SourceDocument(source: source, snippets: snippets, warnings: warnings), starts)
    }
}
