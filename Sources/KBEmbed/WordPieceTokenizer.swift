public import Foundation
import KBCore

/// BERT's WordPiece tokenizer, as Hugging Face's `tokenizer.json` for uncased BERT models does it:
/// clean the text (drop NUL, U+FFFD and control/format characters; whitespace becomes a space),
/// put spaces around CJK ideographs, strip accents (NFD, drop non-spacing marks) and lower-case
/// character by character, split at whitespace and punctuation, then greedy longest-match-first
/// word pieces with `##` continuations; a word over 100 characters, or one with no pieces, is `[UNK]`.
///
/// ```swift
/// let tokenizer = try WordPieceTokenizer(vocabulary: vocabData, lowercase: true)
/// tokenizer.encode("Hello world", maxLength: 256)   // [101, 7592, 2088, 102]
/// ```
public struct WordPieceTokenizer: Sendable {
    /// Vocabulary keyed by UTF-8 bytes, not `String`: Swift strings compare by canonical
    /// equivalence, which would match decomposed Hangul to precomposed vocabulary entries where
    /// the reference tokenizer does not.
    private let ids: [ByteKey: Int32]
    public let tokens: [String]
    public let lowercase: Bool
    public let unknownID: Int32
    public let classifierID: Int32
    public let separatorID: Int32
    public let paddingID: Int32
    public static let maximumCharactersPerWord = 100

    struct ByteKey: Hashable {
        var bytes: [UInt8]
    }

    /// - Parameter vocabulary: the bytes of `vocab.txt`, one token per line, id = line number.
    public init(vocabulary: Data, lowercase: Bool) throws {
        var ids: [ByteKey: Int32] = [:]
        var tokens: [String] = []
        var line: [UInt8] = []
        func add() {
            var bytes = line
            if bytes.last == 0x0D { bytes.removeLast() }
            let id = Int32(tokens.count)
            if ids[ByteKey(bytes: bytes)] == nil { ids[ByteKey(bytes: bytes)] = id }
            tokens.append(String(decoding: bytes, as: UTF8.self))
            line.removeAll(keepingCapacity: true)
        }
        for byte in vocabulary {
            if byte == 0x0A { add() } else { line.append(byte) }
        }
        if !line.isEmpty { add() }
        func special(_ name: String) throws -> Int32 {
            guard let id = ids[ByteKey(bytes: Array(name.utf8))] else {
                throw KBError(.invalidModel, "The vocabulary has no \(name) token; it is not a BERT vocabulary.")
            }
            return id
        }
        self.ids = ids
        self.tokens = tokens
        self.lowercase = lowercase
        unknownID = try special("[UNK]")
        classifierID = try special("[CLS]")
        separatorID = try special("[SEP]")
        paddingID = try special("[PAD]")
    }

    /// Token ids with `[CLS]` and `[SEP]`, truncated to `maxLength` ids in all.
    public func encode(_ text: String, maxLength: Int) -> [Int32] {
        var pieces = pieceIDs(text)
        if pieces.count > maxLength - 2 { pieces.removeLast(pieces.count - (maxLength - 2)) }
        return [classifierID] + pieces + [separatorID]
    }

    /// The word-piece ids of a text, without special tokens or truncation.
    public func pieceIDs(_ text: String) -> [Int32] {
        var result: [Int32] = []
        for word in words(normalize(text)) { appendPieces(of: word, to: &result) }
        return result
    }

    /// The word-piece strings of a text, for debugging.
    public func pieces(_ text: String) -> [String] { pieceIDs(text).map { tokens[Int($0)] } }

    // MARK: - Normalisation

    func normalize(_ text: String) -> [Unicode.Scalar] {
        var cleaned = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar.value == 0 || scalar.value == 0xFFFD || Self.isControl(scalar) { continue }
            if Self.isWhitespace(scalar) {
                cleaned.append(" ")
            } else if Self.isCJK(scalar) {
                cleaned.append(" ")
                cleaned.append(scalar)
                cleaned.append(" ")
            } else {
                cleaned.append(scalar)
            }
        }
        guard lowercase else { return Array(cleaned) }
        // Strip accents (NFD, drop Mn), then lower-case scalar by scalar (no context rules).
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(cleaned.count)
        let decomposed = String(cleaned).decomposedStringWithCanonicalMapping
        for scalar in decomposed.unicodeScalars where scalar.properties.generalCategory != .nonspacingMark {
            let lower = scalar.properties.lowercaseMapping
            if lower.unicodeScalars.count == 1 && lower.unicodeScalars.first == scalar {
                result.append(scalar)
            } else {
                result.append(contentsOf: lower.unicodeScalars)
            }
        }
        return result
    }

    /// Splits at whitespace; each punctuation character is a word of its own.
    func words(_ scalars: [Unicode.Scalar]) -> [ArraySlice<Unicode.Scalar>] {
        var words: [ArraySlice<Unicode.Scalar>] = []
        var start: Int?
        for (i, scalar) in scalars.enumerated() {
            if scalar.properties.isWhitespace {
                if let s = start { words.append(scalars[s..<i]); start = nil }
            } else if Self.isPunctuation(scalar) {
                if let s = start { words.append(scalars[s..<i]); start = nil }
                words.append(scalars[i..<i + 1])
            } else if start == nil {
                start = i
            }
        }
        if let s = start { words.append(scalars[s..<scalars.count]) }
        return words
    }

    private func appendPieces(of word: ArraySlice<Unicode.Scalar>, to result: inout [Int32]) {
        if word.count > Self.maximumCharactersPerWord {
            result.append(unknownID)
            return
        }
        // UTF-8 offsets of each scalar boundary, so candidate pieces are byte slices.
        var bytes: [UInt8] = []
        var boundaries: [Int] = [0]
        for scalar in word {
            bytes.append(contentsOf: String(scalar).utf8)
            boundaries.append(bytes.count)
        }
        var found: [Int32] = []
        var start = 0
        let count = word.count
        while start < count {
            var end = count
            var match: Int32?
            while end > start {
                var key: [UInt8] = start > 0 ? [0x23, 0x23] : []
                key.append(contentsOf: bytes[boundaries[start]..<boundaries[end]])
                if let id = ids[ByteKey(bytes: key)] { match = id; break }
                end -= 1
            }
            guard let id = match else {
                result.append(unknownID)
                return
            }
            found.append(id)
            start = end
        }
        result.append(contentsOf: found)
    }

    // MARK: - Character classes (as in Hugging Face tokenizers' BERT normaliser and pre-tokeniser)

    static func isWhitespace(_ s: Unicode.Scalar) -> Bool {
        s == "\t" || s == "\n" || s == "\r" || s.properties.isWhitespace
    }

    static func isControl(_ s: Unicode.Scalar) -> Bool {
        if s == "\t" || s == "\n" || s == "\r" { return false }
        switch s.properties.generalCategory {
        case .control, .format, .unassigned, .privateUse, .surrogate: return true
        default: return false
        }
    }

    static func isPunctuation(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        if (33...47).contains(v) || (58...64).contains(v) || (91...96).contains(v) || (123...126).contains(v) { return true }
        switch s.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
             .initialPunctuation, .finalPunctuation, .otherPunctuation:
            return true
        default:
            return false
        }
    }

    static func isCJK(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F,
             0x2B740...0x2B81F, 0x2B820...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default:
            return false
        }
    }
}
