import Foundation
public import KBCore

/// A retrieval test collection in the BEIR layout: `corpus.jsonl` (`_id`, `title`, `text`),
/// `queries.jsonl` (`_id`, `text`), `qrels/<split>.tsv` (`query-id corpus-id score`, with or
/// without a header line; graded relevance allowed).
///
/// Transcripts (a kb extension): documents that carry `conversation`, `position`, `speaker` and
/// `time` (ISO 8601) beside `_id`, `title`, `text` are turns of a conversation; a query with a
/// `conversation` searches that conversation only.
///
/// ```swift
/// let dataset = try BEIRDataset.load(from: "datasets/scifact", split: "train")
/// ```
public struct BEIRDataset: Sendable {
    public struct Document: Sendable, Hashable {
        public var id: String
        public var title: String
        public var text: String
        /// The conversation the document is a turn of (transcripts only).
        public var conversation: String?
        /// The turn's place in its conversation (transcripts only).
        public var position: Int?
        public var speaker: String?
        /// When the turn was said, ISO 8601 as given.
        public var time: String?

        public init(id: String, title: String, text: String, conversation: String? = nil, position: Int? = nil,
                    speaker: String? = nil, time: String? = nil) {
            self.id = id
            self.title = title
            self.text = text
            self.conversation = conversation
            self.position = position
            self.speaker = speaker
            self.time = time
        }
    }
    public struct Query: Sendable, Hashable {
        public var id: String
        public var text: String
        /// Tags every hit must have (a kb extension: `"tags": [...]` in queries.jsonl).
        public var tags: [String]
        /// The conversation before the query, oldest first (a kb extension: `"history":
        /// [{"role": "user"|"assistant", "content": …}]` in queries.jsonl).
        public var history: [ConversationTurn] = []
        /// The conversation the query searches, alone (a kb extension for transcripts).
        public var conversation: String?
    }

    public var name: String
    public var documents: [Document]
    /// Queries that have judgements in the split, in file order.
    public var queries: [Query]
    /// Relevance grades: query id → document id → grade (> 0 is relevant).
    public var qrels: [String: [String: Int]]
    public var split: String

    /// Whether any query carries the conversation before it.
    public var isConversational: Bool { queries.contains { !$0.history.isEmpty } }

    /// Whether the documents are turns of conversations (see the type's note on transcripts).
    public var isTranscripts: Bool { documents.contains { $0.conversation != nil } }

    public init(name: String, documents: [Document], queries: [Query], qrels: [String: [String: Int]], split: String) {
        self.name = name
        self.documents = documents
        self.queries = queries
        self.qrels = qrels
        self.split = split
    }

    public static func load(from folder: String, split: String, corpus: Bool = true) throws -> BEIRDataset {
        let root = (folder as NSString).standardizingPath
        let qrelsPath = root + "/qrels/\(split).tsv"
        guard FileManager.default.fileExists(atPath: qrelsPath) else {
            let available = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/qrels")) ?? [])
                .filter { $0.hasSuffix(".tsv") }.map { String($0.dropLast(4)) }.sorted()
            throw KBError(.noSuchFile, "No qrels for split '\(split)' in \(root) (looked for qrels/\(split).tsv). "
                + (available.isEmpty ? "Is this a BEIR-layout folder?" : "Available splits: \(available.joined(separator: ", ")); pass --split."))
        }
        let qrels = try parseQrels(try read(qrelsPath), file: qrelsPath)
        var queries: [Query] = []
        try forEachJSONLine(root + "/queries.jsonl") { object, line in
            guard let id = stringID(object["_id"]), let text = object["text"] as? String else {
                throw KBError(.invalidArgument, "\(root)/queries.jsonl line \(line): needs \"_id\" and \"text\".")
            }
            guard qrels[id] != nil else { return }
            var query = Query(id: id, text: text, tags: object["tags"] as? [String] ?? [])
            query.conversation = stringID(object["conversation"])
            if let turns = object["history"] {
                guard let list = turns as? [[String: Any]] else {
                    throw KBError(.invalidArgument, "\(root)/queries.jsonl line \(line): \"history\" must be a list of {\"role\", \"content\"} objects.")
                }
                query.history = try list.enumerated().map { index, turn in
                    guard let role = (turn["role"] as? String).flatMap(ConversationTurn.Role.init(rawValue:)), let content = turn["content"] as? String else {
                        throw KBError(.invalidArgument,
                            "\(root)/queries.jsonl line \(line): history turn \(index + 1) needs \"role\" (user or assistant) and \"content\".")
                    }
                    return ConversationTurn(role, content)
                }
            }
            queries.append(query)
        }
        var documents: [Document] = []
        if corpus {
            try forEachJSONLine(root + "/corpus.jsonl") { object, line in
                guard let id = stringID(object["_id"]), let text = object["text"] as? String else {
                    throw KBError(.invalidArgument, "\(root)/corpus.jsonl line \(line): needs \"_id\" and \"text\".")
                }
                var document = Document(id: id, title: object["title"] as? String ?? "", text: text)
                if let conversation = stringID(object["conversation"]) {
                    guard let position = (object["position"] as? NSNumber)?.intValue else {
                        throw KBError(.invalidArgument, "\(root)/corpus.jsonl line \(line): a turn of a conversation needs \"position\" (a number).")
                    }
                    document.conversation = conversation
                    document.position = position
                    document.speaker = object["speaker"] as? String
                    document.time = object["time"] as? String
                }
                documents.append(document)
            }
        }
        return BEIRDataset(name: (root as NSString).lastPathComponent, documents: documents, queries: queries, qrels: qrels, split: split)
    }

    /// Parses qrels lines `query-id <tab> corpus-id <tab> score` (TREC's 4-column form with an
    /// iteration column is accepted too). A header line is skipped; other bad lines are errors
    /// naming the line.
    public static func parseQrels(_ text: String, file: String) throws -> [String: [String: Int]] {
        var qrels: [String: [String: Int]] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty { continue }
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).map(String.init)
            if index == 0 && fields.last.flatMap({ Int($0) }) == nil { continue }   // header
            guard fields.count == 3 || fields.count == 4, let grade = Int(fields.last!) else {
                throw KBError(.invalidArgument, "\(file) line \(index + 1): expected `query-id corpus-id score`, got \"\(line.prefix(80))\".")
            }
            qrels[fields[0], default: [:]][fields[fields.count - 2]] = grade
        }
        return qrels
    }

    static func read(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw KBError(.noSuchFile, "Cannot read \(path). Is this a BEIR-layout folder?")
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func forEachJSONLine(_ path: String, _ body: ([String: Any], Int) throws -> Void) throws {
        let text = try read(path)
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            if raw.allSatisfy(\.isWhitespace) { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any] else {
                throw KBError(.invalidArgument, "\(path) line \(lineNumber): not a JSON object.")
            }
            try body(object, lineNumber)
        }
    }

    static func stringID(_ value: Any?) -> String? {
        if let s = value as? String { return s }
        if let n = value as? NSNumber { return n.stringValue }
        return nil
    }
}
