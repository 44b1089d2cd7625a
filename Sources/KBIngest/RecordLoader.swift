public import Foundation
public import KBCore
import SwiftCSV

/// Which fields of a record say what: given on the command line (`--record-text` …) or in the
/// tag vocabulary's `records:` entry.
///
/// ```yaml
/// records: {text: text, title: name, tags: [planet, aspect, tags], weight: weight, id: id}
/// ```
public struct RecordMapping: Sendable, Hashable {
    /// Fields whose values, joined by blank lines, are a record's text. The default is `text`.
    public var text: [String] = ["text"]
    /// The field shown as the record's location in citations (else its id, else its number).
    /// The default is `title`.
    public var title: String?
    /// Fields that become tags: `planet: Saturn` becomes `planet:saturn`; the values of a field
    /// named `tags` become tags as they are. Lists give one tag per element.
    public var tags: [String] = []
    /// The field holding the record's weight (a number above 0; a record without one weighs 1).
    /// The default is `weight`.
    public var weight: String?
    /// The field that identifies a record; ids must be unique in a file. The default is `id`.
    public var id: String?

    /// The defaults read `text`, `title`, `weight` and `id` where records have them.
    public init(text: [String] = ["text"], title: String? = "title", tags: [String] = [], weight: String? = "weight", id: String? = "id") {
        self.text = text
        self.title = title
        self.tags = tags
        self.weight = weight
        self.id = id
    }

    /// This mapping with the fields `other` sets (the command line over the vocabulary file).
    public func overriding(with other: RecordMapping.Overrides) -> RecordMapping {
        var merged = self
        if let text = other.text { merged.text = text }
        if let title = other.title { merged.title = title }
        if let tags = other.tags { merged.tags = tags }
        if let weight = other.weight { merged.weight = weight }
        if let id = other.id { merged.id = id }
        return merged
    }

    /// Fields given on the command line; nil ones leave the mapping as it was.
    public struct Overrides: Sendable, Hashable {
        public var text: [String]?
        public var title: String?
        public var tags: [String]?
        public var weight: String?
        public var id: String?
        public init(text: [String]? = nil, title: String? = nil, tags: [String]? = nil, weight: String? = nil, id: String? = nil) {
            self.text = text
            self.title = title
            self.tags = tags
            self.weight = weight
            self.id = id
        }
    }
}

/// Turns a file of records (`.json` array of objects, `.jsonl`, `.csv` with a header row) into a
/// source with one snippet per record — never merged with the next; a record longer than the
/// chunk size is cut within itself. Chosen fields become tags, the weight field a per-snippet
/// boost every ranking applies (`SearchHit.weighted`), the title (or id) the record's location.
/// Pure: bytes in, document out.
public struct RecordLoader: Sendable {
    public var options: IngestOptions

    public init(options: IngestOptions) { self.options = options }

    /// A field's value, as records hold them.
    enum Value {
        case string(String)
        case list([String])

        var strings: [String] {
            switch self {
            case .string(let value): [value]
            case .list(let values): values
            }
        }
    }

    /// - Parameter format: `json`, `jsonl` or `csv`; nil: by the path's extension.
    public func load(_ data: Data, path: String, displayName: String? = nil, contentHash: String, modifiedAt: Date? = nil,
                     format: String? = nil) throws -> SourceDocument {
        let name = displayName ?? path
        let mapping = options.records
        let recordFormat = format ?? URL(fileURLWithPath: path).pathExtension.lowercased()
        let records = try Self.records(data, format: recordFormat, name: name)
        // JSON Lines of turns (a speaker and a text on every line) are a conversation, unless
        // fields were mapped.
        if ["jsonl", "ndjson"].contains(recordFormat), mapping == RecordMapping(), let turns = Transcript.turns(records) {
            return Transcript.document(turns, path: path, title: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                       contentHash: contentHash, size: data.count, modifiedAt: modifiedAt, options: options).document
        }
        let fields = Set(records.flatMap(\.keys))
        for field in mapping.text where !fields.contains(field) && !records.isEmpty {
            throw KBError(.invalidArgument,
                "\(name): no record has a field '\(field)' for its text. Map one with --record-text FIELD (its fields: \(fields.sorted().joined(separator: ", "))).")
        }

        var scalars: [Unicode.Scalar] = []
        var snippets: [Snippet] = []
        var seenIDs = Set<String>()
        let title = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let sourceTags = unique(options.tags)
        for (index, record) in records.enumerated() {
            let number = index + 1
            let text = mapping.text.compactMap { record[$0]?.strings.joined(separator: "\n") }.filter { !$0.isEmpty }.joined(separator: "\n\n")
            guard !text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) else { continue }
            let id = mapping.id.flatMap { record[$0]?.strings.first }
            if let id, !seenIDs.insert(id).inserted {
                throw KBError(.invalidArgument, "\(name): record \(number) repeats the id '\(id)'; ids must be unique in a file.")
            }
            var weight: Double?
            if let field = mapping.weight, let raw = record[field]?.strings.first, !raw.trimmingCharacters(in: .whitespaces).isEmpty {
                guard let value = Double(raw.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else {
                    throw KBError(.invalidArgument, "\(name): record \(number) has the weight '\(raw)'; a weight is a number above 0 (1 is the default).")
                }
                weight = value
            }
            var tags: [Tag] = []
            for field in mapping.tags {
                for value in record[field]?.strings ?? [] where !value.trimmingCharacters(in: .whitespaces).isEmpty {
                    tags.append(field == "tags" ? Tag(value) : Tag(key: field, value: value))
                }
            }
            let label = mapping.title.flatMap { record[$0]?.strings.first }.flatMap { $0.isEmpty ? nil : $0 }
                ?? id ?? "Record \(number)"
            if !scalars.isEmpty { scalars += ["\n", "\n"] }
            let start = scalars.count
            scalars += text.unicodeScalars
            let section = TextSection(headingPath: [label], blocks: [start..<scalars.count])
            snippets += DocumentAssembly.snippets(scalars, sections: [section], options: options, title: title, sourceTags: sourceTags,
                                                  firstOrdinal: snippets.count, extraTags: tags, weight: weight)
        }
        let source = Source(path: path, kind: .record, title: title, contentHash: contentHash, size: data.count,
                            modifiedAt: modifiedAt, tags: sourceTags)
        return SourceDocument(source: source, snippets: snippets, warnings: snippets.isEmpty ? ["\(name) holds no record with text."] : [])
    }

    /// The records of a JSON array, JSON Lines or CSV file, as field → value.
    static func records(_ data: Data, format: String, name: String) throws -> [[String: Value]] {
        let text = try TextDecoding.decode(data, name: name).text
        switch format {
        case "csv":
            // SwiftCSV reads an unterminated quoted field to the end of the file; refuse it instead.
            if text.unicodeScalars.filter({ $0 == "\"" }).count % 2 == 1 {
                throw KBError(.unreadableFile, "\(name) is not valid CSV: a quoted field is never closed (an odd number of \" marks). Close it, or double a \" inside a field.")
            }
            let csv: CSV<Named>
            do {
                csv = try CSV<Named>(string: text, delimiter: .comma, loadColumns: false)
            } catch {
                throw KBError(.unreadableFile, "\(name) is not valid CSV (\(error)). It needs a header row and quoted fields where they hold commas.")
            }
            return csv.rows.map { $0.mapValues { Value.string($0) } }
        case "jsonl", "ndjson":
            var records: [[String: Value]] = []
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                records.append(try record(Data(line.utf8), name: "\(name) line \(index + 1)"))
            }
            return records
        default:
            let json: Any
            do {
                json = try JSONSerialization.jsonObject(with: Data(text.utf8))
            } catch {
                throw KBError(.unreadableFile, "\(name) is not valid JSON (\(Self.reason(error))). Records are a JSON array of objects, or one object per line in a .jsonl file.")
            }
            guard let array = json as? [Any] else {
                throw KBError(.unreadableFile, "\(name) holds a JSON \(json is [String: Any] ? "object" : "value"), not an array of records. Put the records in a [ … ] array.")
            }
            return try array.enumerated().map { index, element in
                guard let object = element as? [String: Any] else {
                    throw KBError(.unreadableFile, "\(name): record \(index + 1) is not a JSON object.")
                }
                return values(object)
            }
        }
    }

    static func record(_ data: Data, name: String) throws -> [String: Value] {
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw KBError(.unreadableFile, "\(name) is not valid JSON (\(reason(error))). A .jsonl file holds one JSON object per line.")
        }
        guard let object = json as? [String: Any] else { throw KBError(.unreadableFile, "\(name) is not a JSON object.") }
        return values(object)
    }

    static func values(_ object: [String: Any]) -> [String: Value] {
        object.compactMapValues { value -> Value? in
            switch value {
            case let list as [Any]: .list(list.compactMap(scalar))
            default: scalar(value).map(Value.string)
            }
        }
    }

    static func scalar(_ value: Any) -> String? {
        switch value {
        case let string as String: string
        case let number as NSNumber: number.stringValue
        default: nil
        }
    }

    static func reason(_ error: any Error) -> String {
        (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
    }
}
