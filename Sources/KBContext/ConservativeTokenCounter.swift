public import KBCore

/// A token counter that errs on the high side: for English, Russian and Arabic prose it never
/// counts fewer tokens than OpenAI's cl100k_base or o200k_base encodings (checked against their
/// real counts in the tests), so a context packed to a budget with it fits the model's budget.
///
/// How it counts, scanning the text once:
/// - a run of ASCII letters of length n costs ⌈n / 3.5⌉ (a lower-to-upper-case step starts a new
///   run); Cyrillic ⌈n / 1.8⌉; Arabic ⌈n / 1.2⌉; accented Latin letters 1 each;
/// - every digit, ASCII punctuation mark and newline costs 1 (Llama-style tokenizers split digits);
/// - one space before a word is free; longer runs of spaces or tabs cost ⌈n / 2⌉;
/// - anything else (CJK, emoji, symbols, combining marks) costs its UTF-8 byte count, the most
///   any byte-level tokenizer can produce.
///
/// On the sample corpus it counts about 1.6× cl100k's tokens for English and 1.1–1.2× for
/// Russian and Arabic.
///
/// ```swift
/// ConservativeTokenCounter().count("Venus rules Taurus.")   // 6
/// ```
public struct ConservativeTokenCounter: TokenCounter {
    public var name: String { "conservative" }

    public init() {}

    enum Class: Equatable {
        case ascii, cyrillic, arabic, latinExtended, single, spaces, bytes
    }

    static func classify(_ scalar: Unicode.Scalar) -> Class {
        let v = scalar.value
        if v < 0x80 {
            if (0x41...0x5A).contains(v) || (0x61...0x7A).contains(v) { return .ascii }
            if v == 0x20 || v == 0x09 || v == 0x0D { return .spaces }
            return .single   // digits, punctuation, newline, control characters
        }
        let letter = scalar.properties.isAlphabetic && scalar.properties.generalCategory != .nonspacingMark
        if letter {
            if (0x0400...0x052F).contains(v) { return .cyrillic }
            if (0x0600...0x06FF).contains(v) || (0x0750...0x077F).contains(v) || (0xFB50...0xFDFF).contains(v) || (0xFE70...0xFEFF).contains(v) {
                return .arabic
            }
            if v < 0x0250 { return .latinExtended }
        }
        if scalar.properties.isWhitespace && v != 0x0A && v != 0x2028 && v != 0x2029 { return .spaces }
        return .bytes
    }

    /// Reads the text's UTF-8 bytes: ASCII is classified by its byte, other characters are
    /// decoded to a scalar first (the text is valid UTF-8, as every `String` is).
    public func count(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            var tally = Tally()
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                if byte < 0x80 {
                    let lower = byte | 0x20
                    let kind: Class = lower >= 0x61 && lower <= 0x7A ? .ascii : byte == 0x20 || byte == 0x09 || byte == 0x0D ? .spaces : .single
                    tally.add(kind, upper: byte <= 0x5A, bytes: 1)
                    i += 1
                    continue
                }
                let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                var value = UInt32(byte) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
                for k in 1..<length { value = value << 6 | UInt32(bytes[i + k] & 0x3F) }
                tally.add(Unicode.Scalar(value).map(Self.classify) ?? .bytes, upper: false, bytes: length)
                i += length
            }
            tally.flush()
            return tally.tokens
        }
    }

    /// Runs of one class and the tokens they cost so far.
    struct Tally {
        var tokens = 0
        var run: Class?
        var length = 0
        var previousLower = false

        /// One character of `kind` (`upper`: an upper-case ASCII letter) that is `bytes` long in UTF-8.
        mutating func add(_ kind: Class, upper: Bool, bytes: Int) {
            if kind == .bytes {
                flush()
                tokens += bytes
                return
            }
            let isUpper = kind == .ascii && upper
            if kind != run || kind == .single || kind == .latinExtended || (isUpper && previousLower) { flush() }
            run = kind
            length += 1
            previousLower = kind == .ascii && !isUpper
        }

        mutating func flush() {
            guard let current = run else { return }
            switch current {
            case .ascii: tokens += (length * 2 + 6) / 7            // ⌈n / 3.5⌉
            case .cyrillic: tokens += (length * 5 + 8) / 9          // ⌈n / 1.8⌉
            case .arabic: tokens += (length * 5 + 5) / 6            // ⌈n / 1.2⌉
            case .latinExtended, .single: tokens += length
            case .spaces: tokens += length == 1 ? 0 : (length + 1) / 2
            case .bytes: break
            }
            run = nil
            length = 0
        }
    }
}
