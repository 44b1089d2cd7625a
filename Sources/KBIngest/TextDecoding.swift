public import Foundation
import KBCore

/// Turns a file's bytes into text: UTF-8 (with or without BOM) or UTF-16 with a BOM, without
/// invisible format characters (`TextHygiene`).
///
/// A few invalid UTF-8 sequences (at most 1 % of the bytes) are repaired with U+FFFD and
/// reported as a warning; more than that, or NUL bytes, mean the file is not text and it fails.
public enum TextDecoding {
    public struct Decoded: Sendable {
        public var text: String
        public var warnings: [String]
    }

    public static func decode(_ data: Data, name: String) throws -> Decoded {
        let bytes = [UInt8](data)
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            guard let text = String(data: data, encoding: .utf16) else {
                throw KBError(.invalidText, "\(name) starts with a UTF-16 byte-order mark but is not valid UTF-16. Re-save it as UTF-8.")
            }
            return Decoded(text: TextHygiene.clean(text), warnings: [])
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if body.contains(0) {
            throw KBError(.invalidText, "\(name) contains NUL bytes, so it is not a text file. kb reads Markdown and plain-text notes as UTF-8.")
        }
        if let text = String(validating: body, as: UTF8.self) {
            return Decoded(text: TextHygiene.clean(text), warnings: [])
        }
        let repaired = String(decoding: body, as: UTF8.self)
        let replacements = repaired.unicodeScalars.reduce(0) { $0 + ($1 == "\u{FFFD}" ? 1 : 0) }
        let encodedReplacements = countOccurrences(of: [0xEF, 0xBF, 0xBD], in: body)
        let invalid = replacements - encodedReplacements
        if invalid > max(1, body.count / 100) {
            throw KBError(.invalidText,
                "\(name) is not UTF-8 text (\(invalid) invalid byte sequences). "
              + "Convert it, for example with `iconv -f LATIN1 -t UTF-8 \(name)`, and ingest again.")
        }
        return Decoded(text: TextHygiene.clean(repaired), warnings: ["\(name): replaced \(invalid) invalid UTF-8 sequence(s) with U+FFFD"])
    }

    private static func countOccurrences(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int {
        guard haystack.count >= needle.count else { return 0 }
        var count = 0
        var i = haystack.startIndex
        while i <= haystack.endIndex - needle.count {
            if haystack[i] == needle[0] && haystack[i + 1] == needle[1] && haystack[i + 2] == needle[2] {
                count += 1
                i += needle.count
            } else {
                i += 1
            }
        }
        return count
    }
}
