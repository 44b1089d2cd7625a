public import Foundation
import KBCore

/// Turns text into a model's token ids: WordPiece (BERT) or SentencePiece Unigram (XLM-R).
public protocol TextTokenizer: Sendable {
    /// Token ids with the model's special tokens, truncated to `maxLength` ids in all.
    func encode(_ text: String, maxLength: Int) -> [Int32]
    /// How many token ids there are.
    var vocabularySize: Int { get }
}

extension WordPieceTokenizer: TextTokenizer {
    public var vocabularySize: Int { tokens.count }
}

/// A SentencePiece Unigram tokenizer read from a Hugging Face `tokenizer.json` (the XLM-R family:
/// multilingual-e5, paraphrase-multilingual-MiniLM), byte-exact with the `tokenizers` library:
///
/// 1. added tokens (`<s>`, `<mask>`…) are cut out of the raw text first and keep their ids;
/// 2. the normalizer: the SentencePiece precompiled charsmap (`Precompiled`: a double-array trie
///    over UTF-8, applied grapheme by grapheme as `tokenizers` does), `Replace`, `NFC`/`NFKC`/
///    `NFD`/`NFKD`, `Lowercase`, `Strip`, in a `Sequence`; and kb's own `CodepointMap` (each code
///    point replaced by a string, as models converted by `scripts/convert_e5s1.py` normalise);
/// 3. the `Metaspace` pre-tokenizer (spaces become `▁`, one prepended, split before each `▁`),
///    optionally after `WhitespaceSplit`;
/// 4. the Unigram model: the most probable segmentation (Viterbi over the pieces' scores);
///    characters no piece covers are `<unk>` (score: the lowest piece score − 10), runs of them
///    fused into one;
/// 5. the post-processor's special tokens (`<s> … </s>`, `TemplateProcessing` or
///    `RobertaProcessing`), after truncation to `maxLength`.
///
/// Anything else in the file (byte fallback, other pre-tokenizers) is refused by name.
public struct UnigramTokenizer: TextTokenizer {
    let pieces: ByteTrie
    let scores: [Float]
    let unknownID: Int32
    let unknownScore: Float
    /// Whether runs of unknown characters become one unknown piece (`fuse_unk`, true unless the file says).
    let fuseUnknown: Bool
    let normalizer: [NormalizerStep]
    let preTokenizer: [PreTokenizerStep]
    let added: [AddedToken]
    let prefixIDs: [Int32]
    let suffixIDs: [Int32]

    struct AddedToken {
        var content: [UInt8]
        var id: Int32
        var leftStrip: Bool
        var rightStrip: Bool
    }

    enum NormalizerStep {
        case precompiled(PrecompiledCharsMap)
        case codepointMap([UInt32: String])
        case replace(NSRegularExpression, String)
        case replaceString(String, String)
        case nfc, nfd, nfkc, nfkd, lowercase
        case strip(left: Bool, right: Bool)
    }

    enum PreTokenizerStep {
        case whitespaceSplit
        case metaspace(replacement: String, prepend: Prepend, split: Bool)
    }

    enum Prepend { case always, first, never }

    /// Reads `tokenizer.json`; fails naming what kb does not implement.
    public init(json data: Data, source: String) throws {
        // JSONDecoder, not JSONSerialization: a 250,000-piece vocabulary as Foundation objects
        // (and its scores parsed as Decimals) took seconds and hundreds of megabytes.
        // The vocabulary is read straight from the bytes (`VocabularyScanner`): decoding its
        // 250,000 pairs through Decodable took 0.15 s of multilingual-e5-small's load. The rest
        // of the file (and the vocabulary, when the scanner cannot read it) through JSONDecoder.
        let file: TokenizerFile
        let vocab: [(bytes: [UInt8], score: Float)]
        do {
            if let scanned = VocabularyScanner.vocabulary(in: data) {
                file = try JSONDecoder().decode(TokenizerFile.self, from: data)
                vocab = scanned
            } else {
                let decoded = try JSONDecoder().decode(TokenizerFileWithVocabulary.self, from: data)
                file = decoded.file
                vocab = decoded.model?.vocab?.map { (Array($0.text.utf8), $0.score) } ?? []
            }
        } catch {
            throw KBError(.invalidModel, "\(source) is not a tokenizer.json kb can read: \(error).")
        }
        func unsupported(_ what: String) -> KBError {
            KBError(.invalidModel, "\(source) uses \(what), which kb's tokenizer does not implement.")
        }
        guard let model = file.model, model.type == "Unigram", !vocab.isEmpty else {
            throw KBError(.invalidModel, "\(source) does not hold a Unigram model.")
        }
        if model.byte_fallback == true { throw unsupported("Unigram byte fallback") }
        var entries: [(bytes: [UInt8], id: Int32)] = []
        entries.reserveCapacity(vocab.count)
        for (index, piece) in vocab.enumerated() { entries.append((piece.bytes, Int32(index))) }
        let scores = vocab.map(\.score)
        guard let unk = model.unk_id, unk >= 0, unk < scores.count else {
            throw KBError(.invalidModel, "\(source): the Unigram model names no unknown-piece id (unk_id).")
        }
        pieces = ByteTrie(entries)
        self.scores = scores
        unknownID = Int32(unk)
        unknownScore = (scores.min() ?? 0) - 10
        fuseUnknown = model.fuse_unk ?? true

        var steps: [NormalizerStep] = []
        func readNormalizer(_ object: [String: Any]) throws {
            switch object["type"] as? String {
            case "Sequence": for child in object["normalizers"] as? [[String: Any]] ?? [] { try readNormalizer(child) }
            case "Precompiled":
                guard let text = object["precompiled_charsmap"] as? String, let blob = Data(base64Encoded: text) else {
                    throw KBError(.invalidModel, "\(source): the Precompiled normalizer has no charsmap.")
                }
                steps.append(.precompiled(try PrecompiledCharsMap(blob, source: source)))
            case "CodepointMap":
                guard let map = object["map"] as? [String: String] else {
                    throw KBError(.invalidModel, "\(source): the CodepointMap normalizer has no map of code points to strings.")
                }
                var table: [UInt32: String] = [:]
                for (key, value) in map {
                    guard let code = UInt32(key) else { throw KBError(.invalidModel, "\(source): CodepointMap key '\(key)' is not a code point.") }
                    table[code] = value
                }
                steps.append(.codepointMap(table))
            case "Replace":
                let content = object["content"] as? String ?? ""
                let pattern = object["pattern"] as? [String: Any]
                if let regex = pattern?["Regex"] as? String {
                    steps.append(.replace(try NSRegularExpression(pattern: regex), content))
                } else if let string = pattern?["String"] as? String {
                    steps.append(.replaceString(string, content))
                } else {
                    throw unsupported("a Replace normalizer without a pattern")
                }
            case "NFC": steps.append(.nfc)
            case "NFD": steps.append(.nfd)
            case "NFKC": steps.append(.nfkc)
            case "NFKD": steps.append(.nfkd)
            case "Lowercase": steps.append(.lowercase)
            case "Strip": steps.append(.strip(left: object["strip_left"] as? Bool ?? true, right: object["strip_right"] as? Bool ?? true))
            case let other: throw unsupported("the normalizer \(other ?? "?")")
            }
        }
        if let object = file.normalizer?.value as? [String: Any] { try readNormalizer(object) }
        normalizer = steps

        var preSteps: [PreTokenizerStep] = []
        func readPreTokenizer(_ object: [String: Any]) throws {
            switch object["type"] as? String {
            case "Sequence": for child in object["pretokenizers"] as? [[String: Any]] ?? [] { try readPreTokenizer(child) }
            case "WhitespaceSplit": preSteps.append(.whitespaceSplit)
            case "Metaspace":
                let replacement = object["replacement"] as? String ?? "\u{2581}"
                let prepend: Prepend
                switch object["prepend_scheme"] as? String {
                case "first": prepend = .first
                case "never": prepend = .never
                case "always": prepend = .always
                default: prepend = (object["add_prefix_space"] as? Bool ?? true) ? .always : .never
                }
                preSteps.append(.metaspace(replacement: replacement, prepend: prepend, split: object["split"] as? Bool ?? true))
            case let other: throw unsupported("the pre-tokenizer \(other ?? "?")")
            }
        }
        if let object = file.pre_tokenizer?.value as? [String: Any] { try readPreTokenizer(object) }
        guard preSteps.contains(where: { if case .metaspace = $0 { true } else { false } }) else {
            throw unsupported("a Unigram model without the Metaspace pre-tokenizer")
        }
        preTokenizer = preSteps

        added = (file.added_tokens?.value as? [[String: Any]] ?? []).compactMap { token in
            guard let content = token["content"] as? String, let id = token["id"] as? Int, !content.isEmpty,
                  (token["normalized"] as? Bool) != true else { return nil }
            return AddedToken(content: Array(content.utf8), id: Int32(id), leftStrip: token["lstrip"] as? Bool ?? false,
                              rightStrip: token["rstrip"] as? Bool ?? false)
        }.sorted { $0.content.count > $1.content.count }

        // The special tokens around a single sequence.
        let post = file.post_processor?.value as? [String: Any]
        switch post?["type"] as? String {
        case "TemplateProcessing":
            let specials = post?["special_tokens"] as? [String: [String: Any]] ?? [:]
            var before: [Int32] = [], after: [Int32] = [], seen = false
            for item in post?["single"] as? [[String: Any]] ?? [] {
                if item["Sequence"] != nil { seen = true; continue }
                guard let special = item["SpecialToken"] as? [String: Any], let name = special["id"] as? String,
                      let ids = specials[name]?["ids"] as? [Int] else { throw unsupported("a post-processor template it cannot read") }
                if seen { after += ids.map(Int32.init) } else { before += ids.map(Int32.init) }
            }
            prefixIDs = before
            suffixIDs = after
        case "RobertaProcessing", "BertProcessing":
            guard let cls = post?["cls"] as? [Any], let sep = post?["sep"] as? [Any], cls.count == 2, sep.count == 2,
                  let clsID = cls[1] as? Int, let sepID = sep[1] as? Int else { throw unsupported("a post-processor without cls/sep") }
            prefixIDs = [Int32(clsID)]
            suffixIDs = [Int32(sepID)]
        case nil:
            prefixIDs = []
            suffixIDs = []
        case let other?:
            throw unsupported("the post-processor \(other)")
        }
    }

    public var vocabularySize: Int { scores.count }

    public func encode(_ text: String, maxLength: Int) -> [Int32] {
        var ids = pieceIDs(text)
        let room = max(0, maxLength - prefixIDs.count - suffixIDs.count)
        if ids.count > room { ids.removeLast(ids.count - room) }
        return prefixIDs + ids + suffixIDs
    }

    /// The ids of a text without the special tokens around it and without truncation.
    public func pieceIDs(_ text: String) -> [Int32] {
        var ids: [Int32] = []
        for segment in split(Array(text.utf8)) {
            switch segment {
            case .added(let id): ids.append(id)
            case .text(let bytes, let atStart):
                let normalized = normalize(String(decoding: bytes, as: UTF8.self))
                for word in preTokenize(normalized, atStart: atStart) { ids += model(Array(word.utf8)) }
            }
        }
        return ids
    }

    // MARK: - Added tokens

    enum Segment {
        case text([UInt8], atStart: Bool)
        case added(Int32)
    }

    /// The raw text cut at added tokens (longest first at each position), with `lstrip`/`rstrip`
    /// taking the whitespace beside them.
    func split(_ bytes: [UInt8]) -> [Segment] {
        guard !added.isEmpty else { return [.text(bytes, atStart: true)] }
        var segments: [Segment] = []
        var start = 0, i = 0
        while i < bytes.count {
            guard let token = added.first(where: { bytes.count - i >= $0.content.count && bytes[i..<i + $0.content.count].elementsEqual($0.content) }) else {
                i += 1
                continue
            }
            var textEnd = i
            if token.leftStrip { while textEnd > start && Self.isWhitespace(bytes[textEnd - 1]) { textEnd -= 1 } }
            if textEnd > start { segments.append(.text(Array(bytes[start..<textEnd]), atStart: start == 0)) }
            segments.append(.added(token.id))
            i += token.content.count
            if token.rightStrip { while i < bytes.count && Self.isWhitespace(bytes[i]) { i += 1 } }
            start = i
        }
        if start < bytes.count { segments.append(.text(Array(bytes[start...]), atStart: start == 0)) }
        return segments
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    // MARK: - Normalizer

    func normalize(_ text: String) -> String {
        var text = text
        for step in normalizer {
            switch step {
            case .precompiled(let map): text = map.normalize(text)
            case .codepointMap(let table):
                var out = String.UnicodeScalarView()
                for scalar in text.unicodeScalars {
                    if let replacement = table[scalar.value] { out.append(contentsOf: replacement.unicodeScalars) } else { out.append(scalar) }
                }
                text = String(out)
            case .replace(let regex, let content):
                text = regex.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text),
                                                      withTemplate: NSRegularExpression.escapedTemplate(for: content))
            case .replaceString(let pattern, let content): text = text.replacingOccurrences(of: pattern, with: content)
            case .nfc: text = text.precomposedStringWithCanonicalMapping
            case .nfd: text = text.decomposedStringWithCanonicalMapping
            case .nfkc: text = text.precomposedStringWithCompatibilityMapping
            case .nfkd: text = text.decomposedStringWithCompatibilityMapping
            case .lowercase: text = text.lowercased()
            case .strip(let left, let right):
                var scalars = Substring(text).unicodeScalars[...]
                if left { while let first = scalars.first, first.properties.isWhitespace { scalars.removeFirst() } }
                if right { while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() } }
                text = String(String.UnicodeScalarView(scalars))
            }
        }
        return text
    }

    // MARK: - Pre-tokenizer

    func preTokenize(_ text: String, atStart: Bool) -> [String] {
        var words = [text]
        for step in preTokenizer {
            switch step {
            case .whitespaceSplit:
                words = words.flatMap { $0.unicodeScalars.split(whereSeparator: { $0.properties.isWhitespace }).map { String(String.UnicodeScalarView($0)) } }
            case .metaspace(let replacement, let prepend, let split):
                let marker = replacement.unicodeScalars.first ?? "\u{2581}"
                words = words.enumerated().flatMap { index, word -> [String] in
                    var scalars = Array(word.unicodeScalars.map { $0 == " " ? marker : $0 })
                    guard !scalars.isEmpty else { return [] }
                    if scalars.first != marker && (prepend == .always || (prepend == .first && atStart && index == 0)) {
                        scalars.insert(marker, at: 0)
                    }
                    guard split else { return [String(String.UnicodeScalarView(scalars))] }
                    var parts: [String] = []
                    var current = String.UnicodeScalarView()
                    for scalar in scalars {
                        if scalar == marker && !current.isEmpty {
                            parts.append(String(current))
                            current = String.UnicodeScalarView()
                        }
                        current.append(scalar)
                    }
                    if !current.isEmpty { parts.append(String(current)) }
                    return parts
                }
            }
        }
        return words.filter { !$0.isEmpty }
    }

    // MARK: - Unigram model

    /// The best segmentation of one pre-tokenized word (Viterbi), as ids.
    func model(_ bytes: [UInt8]) -> [Int32] {
        let size = bytes.count
        guard size > 0 else { return [] }
        var bestScore = [Float](repeating: 0, count: size + 1)
        var startsAt = [Int](repeating: -1, count: size + 1)
        var pieceID = [Int32](repeating: -1, count: size + 1)
        var position = 0
        while position < size {
            let here = bestScore[position]
            let characterLength = Self.utf8Length(bytes[position])
            var hasSingle = false
            pieces.forEachPrefix(of: bytes, from: position) { end, id in
                let candidate = here + scores[Int(id)]
                if startsAt[end] < 0 || candidate > bestScore[end] {
                    bestScore[end] = candidate
                    startsAt[end] = position
                    pieceID[end] = id
                }
                if end - position == characterLength { hasSingle = true }
            }
            let end = min(size, position + characterLength)
            if !hasSingle {
                let candidate = here + unknownScore
                if startsAt[end] < 0 || candidate > bestScore[end] {
                    bestScore[end] = candidate
                    startsAt[end] = position
                    pieceID[end] = unknownID
                }
            }
            position = end
        }
        var ids: [Int32] = []
        var end = size
        while end > 0 {
            let id = pieceID[end]
            // Runs of unknown characters become one unknown piece.
            if !(fuseUnknown && id == unknownID && ids.last == unknownID) { ids.append(id) }
            end = startsAt[end]
        }
        return ids.reversed()
    }

    static func utf8Length(_ lead: UInt8) -> Int {
        switch lead {
        case 0..<0x80: 1
        case 0xC0..<0xE0: 2
        case 0xE0..<0xF0: 3
        case 0xF0...: 4
        default: 1
        }
    }
}

/// The parts of `tokenizer.json` kb reads but the vocabulary: the model typed, the small parts
/// as plain values (`[String: Any]`, as the checks in `UnigramTokenizer.init` read them).
private struct TokenizerFile: Decodable {
    struct Model: Decodable {
        var type: String?
        var unk_id: Int?
        var byte_fallback: Bool?
        var fuse_unk: Bool?
    }

    /// `[piece, score]`.
    struct Piece: Decodable {
        var text: String
        var score: Float

        init(from decoder: any Decoder) throws {
            var pair = try decoder.unkeyedContainer()
            text = try pair.decode(String.self)
            score = Float(try pair.decode(Double.self))
        }
    }

    var model: Model?
    var normalizer: PlainJSON?
    var pre_tokenizer: PlainJSON?
    var post_processor: PlainJSON?
    var added_tokens: PlainJSON?
}

/// `tokenizer.json` with its vocabulary decoded too, for a file `VocabularyScanner` cannot read.
private struct TokenizerFileWithVocabulary: Decodable {
    struct Model: Decodable { var vocab: [TokenizerFile.Piece]? }
    var file: TokenizerFile
    var model: Model?

    enum CodingKeys: String, CodingKey { case model }

    init(from decoder: any Decoder) throws {
        file = try TokenizerFile(from: decoder)
        model = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(Model.self, forKey: .model)
    }
}

/// Reads `model.vocab` of a `tokenizer.json` — `[["piece", score], …]` — straight from its
/// bytes: each piece as UTF-8 (JSON escapes, surrogate pairs included, decoded), each score as a
/// float. nil for anything it does not expect (the caller then decodes the file with
/// JSONDecoder), so it never reads a file differently from JSONDecoder, only faster.
enum VocabularyScanner {
    static func vocabulary(in data: Data) -> [(bytes: [UInt8], score: Float)]? {
        data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            return scanner.topLevel()
        }
    }

    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        mutating func skipSpace() {
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// The top-level object's "model" object's "vocab".
        mutating func topLevel() -> [(bytes: [UInt8], score: Float)]? {
            guard take(0x7B) else { return nil }   // {
            var found: [(bytes: [UInt8], score: Float)]?
            return members { key, scanner in
                guard key == Array("model".utf8) else { return scanner.skipValue() }
                guard scanner.take(0x7B) else { return scanner.skipValue() }
                return scanner.members { key, scanner in
                    guard key == Array("vocab".utf8) else { return scanner.skipValue() }
                    found = scanner.pairs()
                    return found != nil
                }
            } ? found : nil
        }

        /// An object's members after its `{`, each handed to `value` (which reads its value).
        mutating func members(_ value: (_ key: [UInt8], inout Scanner) -> Bool) -> Bool {
            if take(0x7D) { return true }   // }
            while true {
                guard take(0x22), let key = string(), take(0x3A), value(key, &self) else { return false }
                if take(0x2C) { continue }
                return take(0x7D)
            }
        }

        /// `[["piece", score], …]`.
        mutating func pairs() -> [(bytes: [UInt8], score: Float)]? {
            guard take(0x5B) else { return nil }
            var out: [(bytes: [UInt8], score: Float)] = []
            if take(0x5D) { return out }
            while true {
                guard take(0x5B), take(0x22), let piece = string(), take(0x2C), let score = number(), take(0x5D) else { return nil }
                out.append((piece, Float(score)))
                if take(0x2C) { continue }
                return take(0x5D) ? out : nil
            }
        }

        /// A string's UTF-8 after its opening quote, escapes decoded.
        mutating func string() -> [UInt8]? {
            var out: [UInt8] = []
            while at < bytes.count {
                let byte = bytes[at]
                at += 1
                switch byte {
                case 0x22: return out
                case 0x5C:
                    guard at < bytes.count else { return nil }
                    let escape = bytes[at]
                    at += 1
                    switch escape {
                    case 0x22, 0x5C, 0x2F: out.append(escape)
                    case 0x62: out.append(0x08)
                    case 0x66: out.append(0x0C)
                    case 0x6E: out.append(0x0A)
                    case 0x72: out.append(0x0D)
                    case 0x74: out.append(0x09)
                    case 0x75:
                        guard var code = hex4() else { return nil }
                        if (0xD800...0xDBFF).contains(code) {
                            guard at + 1 < bytes.count, bytes[at] == 0x5C, bytes[at + 1] == 0x75 else { return nil }
                            at += 2
                            guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(code) {
                            return nil
                        }
                        guard let scalar = Unicode.Scalar(code) else { return nil }
                        out.append(contentsOf: String(Character(scalar)).utf8)
                    default: return nil
                    }
                case 0..<0x20: return nil
                default: out.append(byte)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard at + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[at]
                at += 1
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
                default: return nil
                }
                value = value << 4 | digit
            }
            return value
        }

        mutating func number() -> Double? {
            skipSpace()
            let start = at
            while at < bytes.count, (0x30...0x39).contains(bytes[at]) || [0x2D, 0x2B, 0x2E, 0x65, 0x45].contains(bytes[at]) { at += 1 }
            guard at > start else { return nil }
            return Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self))
        }

        /// Any value, skipped (strings' escapes and nesting respected).
        mutating func skipValue() -> Bool {
            skipSpace()
            guard at < bytes.count else { return false }
            switch bytes[at] {
            case 0x22:
                at += 1
                while at < bytes.count {
                    if bytes[at] == 0x5C { at += 2; continue }
                    if bytes[at] == 0x22 { at += 1; return true }
                    at += 1
                }
                return false
            case 0x7B:
                at += 1
                return members { _, scanner in scanner.skipValue() }
            case 0x5B:
                at += 1
                if take(0x5D) { return true }
                while true {
                    guard skipValue() else { return false }
                    if take(0x2C) { continue }
                    return take(0x5D)
                }
            default:
                let start = at
                while at < bytes.count, !",}] \n\r\t".utf8.contains(bytes[at]) { at += 1 }
                return at > start
            }
        }
    }
}

/// Any JSON value as `String`, `Int`, `Double`, `Bool`, `NSNull`, `[Any]` or `[String: Any]`.
private struct PlainJSON: Decodable {
    let value: Any

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            value = NSNull()
        } else if let bool = try? container.decode(Bool.self) {
            value = bool
        } else if let int = try? container.decode(Int.self) {
            value = int
        } else if let double = try? container.decode(Double.self) {
            value = double
        } else if let string = try? container.decode(String.self) {
            value = string
        } else if let array = try? container.decode([PlainJSON].self) {
            value = array.map(\.value)
        } else {
            value = try container.decode([String: PlainJSON].self).mapValues(\.value)
        }
    }
}

/// Byte strings to ids, for "every piece that starts here" lookups: a trie flattened into sorted
/// edge arrays (compact enough for a 250,000-piece vocabulary).
struct ByteTrie: Sendable {
    /// For each node: where its edges start in `labels`/`targets`, and how many.
    private var edgeStart: [Int32] = []
    private var edgeCount: [UInt16] = []
    private var value: [Int32] = []
    private var labels: [UInt8] = []
    private var targets: [Int32] = []

    init(_ entries: [(bytes: [UInt8], id: Int32)]) {
        // The keys side by side in one buffer, sorted by their bytes (a repeated key's first id
        // first: the first id wins, as in a dictionary built in order). Sorting 250,000 arrays by
        // `lexicographicallyPrecedes` and building the trie recursively through slices took
        // 0.22 s of multilingual-e5-small's load; this takes a fraction of that.
        var bytes: [UInt8] = []
        var starts: [Int32] = [], lengths: [Int32] = [], ids: [Int32] = []
        for entry in entries where !entry.bytes.isEmpty {
            starts.append(Int32(bytes.count))
            lengths.append(Int32(entry.bytes.count))
            ids.append(entry.id)
            bytes += entry.bytes
        }
        var order = Array(0..<Int32(starts.count))
        bytes.withUnsafeBufferPointer { all in
            let base = all.baseAddress!
            order.sort { a, b in
                let (la, lb) = (Int(lengths[Int(a)]), Int(lengths[Int(b)]))
                let c = memcmp(base + Int(starts[Int(a)]), base + Int(starts[Int(b)]), min(la, lb))
                if c != 0 { return c < 0 }
                return la != lb ? la < lb : a < b
            }
        }
        // Nodes in depth-first order; each node's children kept as a list while keys are added in
        // order (a key shares its path with the one before up to their common prefix), then laid
        // out side by side in `labels`/`targets`.
        var label: [UInt8] = [0], firstChild: [Int32] = [-1], lastChild: [Int32] = [-1], nextSibling: [Int32] = [-1]
        value = [-1]
        var path: [Int32] = [0]   // path[d]: the node for the previous key's first d bytes
        var previous: ArraySlice<UInt8> = []
        for index in order {
            let i = Int(index)
            let key = bytes[Int(starts[i])..<Int(starts[i] + lengths[i])]
            var common = 0
            while common < key.count && common < previous.count
                && key[key.startIndex + common] == previous[previous.startIndex + common] { common += 1 }
            if common == key.count && key.count == previous.count { continue }   // a repeat: the first id stays
            path.removeSubrange((common + 1)...)
            for depth in common..<key.count {
                let node = Int32(value.count), parent = Int(path[depth])
                label.append(key[key.startIndex + depth])
                value.append(-1)
                firstChild.append(-1)
                lastChild.append(-1)
                nextSibling.append(-1)
                if lastChild[parent] < 0 { firstChild[parent] = node } else { nextSibling[Int(lastChild[parent])] = node }
                lastChild[parent] = node
                path.append(node)
            }
            value[Int(path[key.count])] = ids[i]
            previous = key
        }
        edgeStart = [Int32](repeating: 0, count: value.count)
        edgeCount = [UInt16](repeating: 0, count: value.count)
        labels.reserveCapacity(value.count - 1)
        targets.reserveCapacity(value.count - 1)
        for node in 0..<value.count {
            edgeStart[node] = Int32(labels.count)
            var child = firstChild[node]
            while child >= 0 {
                labels.append(label[Int(child)])
                targets.append(child)
                child = nextSibling[Int(child)]
            }
            edgeCount[node] = UInt16(Int(Int32(labels.count) - edgeStart[node]))
        }
    }

    /// Calls `body(end, id)` for each key that `bytes[from...]` starts with, shortest first.
    func forEachPrefix(of bytes: [UInt8], from: Int, _ body: (Int, Int32) -> Void) {
        var node = 0
        var i = from
        while i < bytes.count {
            let start = Int(edgeStart[node]), count = Int(edgeCount[node])
            var low = start, high = start + count
            let byte = bytes[i]
            while low < high {
                let mid = (low + high) / 2
                if labels[mid] < byte { low = mid + 1 } else { high = mid }
            }
            guard low < start + count, labels[low] == byte else { return }
            node = Int(targets[low])
            i += 1
            if value[node] >= 0 { body(i, value[node]) }
        }
    }
}

/// SentencePiece's precompiled normalisation map (`precompiled_charsmap`): a darts-clone double
/// array over UTF-8 whose values point into a blob of NUL-terminated replacements. Applied as
/// the `tokenizers` library does: a grapheme shorter than 6 bytes is replaced whole by the entry
/// of its shortest matching prefix, if any; otherwise each of its characters is looked up alone.
struct PrecompiledCharsMap: Sendable {
    let units: [UInt32]
    let normalized: [UInt8]

    init(_ blob: Data, source: String) throws {
        let bytes = [UInt8](blob)
        guard bytes.count >= 4 else { throw KBError(.invalidModel, "\(source): the precompiled charsmap is truncated.") }
        let trieSize = Int(UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
        guard trieSize % 4 == 0, 4 + trieSize <= bytes.count else {
            throw KBError(.invalidModel, "\(source): the precompiled charsmap is malformed.")
        }
        units = stride(from: 4, to: 4 + trieSize, by: 4).map { i in
            UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        }
        normalized = Array(bytes[(4 + trieSize)...])
    }

    /// The replacement of the shortest key `chunk` starts with, or nil.
    func transform(_ chunk: some Collection<UInt8>) -> ArraySlice<UInt8>? {
        guard !units.isEmpty else { return nil }
        var position = 0
        var unit = units[0]
        position ^= Self.offset(unit)
        for byte in chunk {
            if byte == 0 { return nil }
            position ^= Int(byte)
            guard position < units.count else { return nil }
            unit = units[position]
            guard Self.label(unit) == Int(byte) else { return nil }
            position ^= Self.offset(unit)
            if Self.hasLeaf(unit) {
                guard position < units.count else { return nil }
                let start = Int(units[position] & 0x7FFF_FFFF)
                guard start < normalized.count else { return nil }
                var end = start
                while end < normalized.count && normalized[end] != 0 { end += 1 }
                return normalized[start..<end]
            }
        }
        return nil
    }

    static func hasLeaf(_ unit: UInt32) -> Bool { (unit >> 8) & 1 == 1 }
    static func label(_ unit: UInt32) -> Int { Int(unit & (0x8000_0000 | 0xFF)) }
    static func offset(_ unit: UInt32) -> Int { Int((unit >> 10) << ((unit & (1 << 9)) >> 6)) }

    func normalize(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for grapheme in text {
            let bytes = Array(grapheme.utf8)
            if bytes.count < 6, let replacement = transform(bytes) {
                out += replacement
                continue
            }
            for scalar in grapheme.unicodeScalars {
                let part = Array(String(scalar).utf8)
                if let replacement = transform(part) { out += replacement } else { out += part }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
