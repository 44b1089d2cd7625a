public import Foundation
public import KBCore

/// A memory with its earlier versions: one line of an export.
public struct MemoryRecord: Sendable, Hashable {
    public var memory: Memory
    /// Earlier versions, oldest first (the current one is `memory` itself).
    public var history: [MemoryVersion]

    public init(memory: Memory, history: [MemoryVersion]) {
        self.memory = memory
        self.history = history
    }
}

/// The JSON Lines form of memories, `kb memory export` / `import`: one memory per line, keys
/// sorted, times in ISO 8601 UTC with milliseconds. Export then import gives back the same
/// memories (ids, times, versions and history), and exporting again the same bytes. Pure.
///
/// ```swift
/// let line = try MemoryArchive.encode(record)
/// let parsed = MemoryArchive.decode(lines: text, options: MemoryOptions())
/// ```
public enum MemoryArchive {
    struct Line: Codable {
        var id: String
        var scope: String
        var title: String?
        var content: String
        var tags: [String]?
        var created_at: String
        var updated_at: String
        var version: Int?
        var superseded_by: String?
        /// Written when it differs from `created_at`.
        var valid_from: String?
        var valid_to: String?
        var expires_at: String?
        var flagged_wrong: Bool?
        var useful: Int?
        var history: [Version]?
    }

    struct Version: Codable {
        var version: Int
        var title: String?
        var content: String
        var tags: [String]?
        var updated_at: String
    }

    /// One line (without the newline).
    public static func encode(_ record: MemoryRecord) throws -> String {
        let m = record.memory
        let line = Line(
            id: m.id, scope: m.scope.name, title: m.title, content: m.content, tags: m.tags.map(\.name),
            created_at: format(m.createdAt), updated_at: format(m.updatedAt), version: m.version,
            superseded_by: m.supersededBy,
            valid_from: m.validFrom == m.createdAt ? nil : format(m.validFrom), valid_to: m.validTo.map(format),
            expires_at: m.expiresAt.map(format), flagged_wrong: m.flaggedWrong ? true : nil, useful: m.useful > 0 ? m.useful : nil,
            history: record.history.map {
                Version(version: $0.version, title: $0.title, content: $0.content, tags: $0.tags.map(\.name), updated_at: format($0.updatedAt))
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(line), as: UTF8.self)
    }

    /// Every non-blank line parsed and checked, with its 1-based line number; a bad line is a
    /// failure that names the problem, and does not stop the others.
    public static func decode(lines text: String, options: MemoryOptions) -> [(line: Int, result: Result<MemoryRecord, KBError>)] {
        var results: [(Int, Result<MemoryRecord, KBError>)] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            do {
                results.append((index + 1, .success(try decode(String(line), options: options))))
            } catch let error as KBError {
                results.append((index + 1, .failure(error)))
            } catch {
                results.append((index + 1, .failure(KBError(.invalidArgument, "\(error)"))))
            }
        }
        return results
    }

    static func decode(_ text: String, options: MemoryOptions) throws -> MemoryRecord {
        let line: Line
        do {
            line = try JSONDecoder().decode(Line.self, from: Data(text.utf8))
        } catch let DecodingError.keyNotFound(key, _) {
            throw KBError(.invalidArgument, "missing \"\(key.stringValue)\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw KBError(.invalidArgument, "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\"")
        } catch {
            throw KBError(.invalidArgument, "not a JSON object (each line must be one memory as `kb memory export` writes it)")
        }
        guard let uuid = UUID(uuidString: line.id) else {
            throw KBError(.invalidArgument, "\"id\" must be a UUID; got \"\(line.id)\"")
        }
        let version = line.version ?? 1
        guard version >= 1 else { throw KBError(.invalidArgument, "\"version\" must be 1 or more") }
        let history = try (line.history ?? []).map { v in
            MemoryVersion(
                version: v.version, title: try MemoryRules.validTitle(v.title),
                content: try MemoryRules.validContent(v.content, options: options),
                tags: try MemoryRules.validTags((v.tags ?? []).map { Tag($0) }), updatedAt: try parse(v.updated_at, key: "history.updated_at"))
        }
        let versions = history.map(\.version)
        guard versions == versions.sorted(), Set(versions).count == versions.count, versions.allSatisfy({ $0 >= 1 && $0 < version }) else {
            throw KBError(.invalidArgument, "\"history\" versions must be distinct, increasing and below \"version\" (\(version))")
        }
        if let superseding = line.superseded_by {
            guard let other = UUID(uuidString: superseding), other != uuid else {
                throw KBError(.invalidArgument, "\"superseded_by\" must be the UUID of another memory")
            }
        }
        let memory = Memory(
            id: uuid.uuidString.lowercased(), scope: try MemoryScope(line.scope), title: try MemoryRules.validTitle(line.title),
            content: try MemoryRules.validContent(line.content, options: options),
            tags: try MemoryRules.validTags((line.tags ?? []).map { Tag($0) }),
            createdAt: try parse(line.created_at, key: "created_at"), updatedAt: try parse(line.updated_at, key: "updated_at"),
            version: version, supersededBy: line.superseded_by?.lowercased(),
            validFrom: try line.valid_from.map { try parse($0, key: "valid_from") }, validTo: try line.valid_to.map { try parse($0, key: "valid_to") },
            expiresAt: try line.expires_at.map { try parse($0, key: "expires_at") }, flaggedWrong: line.flagged_wrong ?? false,
            useful: max(0, line.useful ?? 0))
        if let validTo = memory.validTo, validTo < memory.validFrom {
            throw KBError(.invalidArgument, "\"valid_to\" must not be before \"valid_from\"")
        }
        return MemoryRecord(memory: memory, history: history)
    }

    /// ISO 8601 UTC with milliseconds: `2026-11-21T09:30:00.125Z`. (Foundation's fractional
    /// style truncates binary fractions, so 0.123 can print as .122; whole milliseconds are
    /// counted here instead.)
    public static func format(_ date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = milliseconds - seconds * 1000
        let whole = Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(Date.ISO8601FormatStyle())
        let digits = String(fraction)
        return whole.dropLast() + "." + String(repeating: "0", count: 3 - digits.count) + digits + "Z"
    }

    static func parse(_ text: String, key: String) throws -> Date {
        // The fraction (up to milliseconds) is read by hand, for the reason given at `format`.
        var base = text
        var milliseconds = 0.0
        if let dot = text.firstIndex(of: "."), text.hasSuffix("Z") {
            let digits = text[text.index(after: dot)..<text.index(before: text.endIndex)]
            if !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), let value = Double("0." + digits) {
                milliseconds = (value * 1000).rounded()
                base = String(text[..<dot]) + "Z"
            }
        }
        if let date = try? Date.ISO8601FormatStyle().parse(base) {
            return Date(timeIntervalSince1970: date.timeIntervalSince1970 + milliseconds / 1000)
        }
        throw KBError(.invalidArgument, "\"\(key)\" must be an ISO 8601 time like 2026-11-21T09:30:00.000Z; got \"\(text)\"")
    }

    /// A time rounded to whole milliseconds: what memories store, so exports round-trip exactly.
    public static func roundedToMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}
