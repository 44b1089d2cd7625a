import Foundation

/// Invisible format characters out of ingested text, so that they neither split words for
/// search nor show in citations, and Arabic text in the letters a reader types:
///
/// - U+FEFF (a byte-order mark or zero-width no-break space, often at the start of a paragraph),
///   U+00AD (soft hyphen), U+2060–U+2064 (word joiner, invisible operators) and the bidi controls
///   (U+200E, U+200F, U+061C, U+202A–U+202E, U+2066–U+2069): removed;
/// - U+200B (zero-width space): removed, except between two letters of a script written without
///   spaces (Thai, Lao, Khmer, Myanmar, Chinese, Japanese), where it marks a word boundary;
/// - U+200C and U+200D (zero-width non-joiner and joiner): kept where they are part of a word's
///   spelling — between letters of a script that joins or conjoins them (Persian, Urdu, Indic
///   scripts; joiners in emoji) — and removed next to a Latin, Cyrillic or Greek letter, a space,
///   or at either end of the text;
/// - Arabic presentation forms (U+FB50–U+FDFF, U+FE70–U+FEFC: the contextual shapes many PDF
///   generators put in a text layer instead of letters) folded to the letters they show (NFKC
///   of those alone: a lam-alef ligature becomes lam and alef), and tatweel (U+0640, the
///   stretching stroke) removed. A reader sees the same letters either way; search, grep and
///   citations then match a word typed normally.
///
/// ```swift
/// TextHygiene.clean("\u{FEFF}hyphen\u{00AD}ation")   // "hyphenation"
/// TextHygiene.clean("می\u{200C}خواهم")                // unchanged: the non-joiner is Persian spelling
/// TextHygiene.clean("\u{FEEB}\u{FEAC}\u{FE8D}")        // "هذا": presentation forms folded
/// ```
public enum TextHygiene {
    /// `text` with Arabic presentation forms folded to their letters (NFKC of those alone); the
    /// same string when it has none. For text that did not come through `clean` (a query, an
    /// index built before kb folded them).
    public static func foldPresentationForms(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isPresentationForm) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isPresentationForm(scalar) { out.append(contentsOf: letters(of: scalar)) } else { out.append(scalar) }
        }
        return String(out)
    }

    /// The letters a presentation form shows.
    static func letters(of scalar: Unicode.Scalar) -> String.UnicodeScalarView {
        String(scalar).precomposedStringWithCompatibilityMapping.unicodeScalars
    }

    static func isPresentationForm(_ scalar: Unicode.Scalar) -> Bool {
        (0xFB50...0xFDFF).contains(scalar.value) || (0xFE70...0xFEFC).contains(scalar.value)
    }

    /// `text` without the invisible format characters above; the same string when it has none.
    public static func clean(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isCandidate) else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        out.reserveCapacity(scalars.count)
        for (index, scalar) in scalars.enumerated() {
            guard isCandidate(scalar) else {
                out.append(scalar)
                continue
            }
            let before = index > 0 ? scalars[index - 1] : nil
            let after = index + 1 < scalars.count ? scalars[index + 1] : nil
            switch scalar.value {
            case 0x200B:
                if let before, let after, writtenWithoutSpaces(before), writtenWithoutSpaces(after) { out.append(scalar) }
            case 0x200C, 0x200D:
                if let before, let after, joins(before), joins(after) || isEmojiPart(after) { out.append(scalar) }
            case 0xFB50...0xFDFF, 0xFE70...0xFEFC:
                out.append(contentsOf: letters(of: scalar))
            default:
                break
            }
        }
        return String(out)
    }

    static func isCandidate(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0xFEFF, 0x00AD, 0x2060...0x2064, 0x200B...0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x0640, 0xFB50...0xFDFF, 0xFE70...0xFEFC: true
        default: false
        }
    }

    /// Letters of scripts that mark word boundaries with zero-width spaces.
    static func writtenWithoutSpaces(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0E00...0x0EFF, 0x1780...0x17FF, 0x1000...0x109F, 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF: true
        default: false
        }
    }

    /// Whether a (non-)joiner after this scalar can be part of a spelling: not after a space, a
    /// Latin, Cyrillic or Greek letter, or punctuation.
    static func joins(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isWhitespace { return false }
        switch LanguageDetector.script(of: scalar) {
        case .latin, .cyrillic, .greek: return false
        case .other: return scalar.properties.isAlphabetic || isEmojiPart(scalar) || scalar.properties.generalCategory == .nonspacingMark
            || scalar.properties.generalCategory == .spacingMark
        default: return true
        }
    }

    static func isEmojiPart(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isEmoji && scalar.value > 0xFF
    }
}
