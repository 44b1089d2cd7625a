package import Foundation
import KBCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `grep_sources` pattern, compiled: plain text, or a POSIX extended regular expression run by
/// the C library's matcher (glibc's is not a backtracking one: `(a+)+$` costs what `a+$` does).
/// What could still make it slow is refused: back-references (which need backtracking) and
/// counted repetitions whose bounds multiply past 32. `\d` and `\D` are read as `[0-9]` and
/// `[^0-9]`. Texts are matched as UTF-8 (a character class or `.` takes a whole character).
///
/// Not thread-safe: one request's matching runs on one thread.
package final class GrepPattern: @unchecked Sendable {
    private enum Kind {
        case literal(String)
        case expression(UnsafeMutablePointer<regex_t>)
    }

    private let kind: Kind
    private let ignoreCase: Bool

    /// Largest product of counted repetitions' bounds (`{2,5}` counts 5).
    static let maxRepetition = 32

    /// The pattern is read as ingested text is (`TextHygiene.clean`): Arabic presentation forms
    /// as their letters, no tatweel or invisible format characters.
    package init(_ given: String, literal: Bool, ignoreCase: Bool) throws {
        self.ignoreCase = ignoreCase
        let pattern = TextHygiene.clean(given)
        guard !literal else {
            kind = .literal(pattern)
            return
        }
        let translated = try Self.translate(pattern)
        let compiled = UnsafeMutablePointer<regex_t>.allocate(capacity: 1)
        let status = Self.inUTF8 { regcomp(compiled, translated, REG_EXTENDED | (ignoreCase ? REG_ICASE : 0)) }
        guard status == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(status, compiled, &message, message.count)
            compiled.deallocate()
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw KBError(.invalidArgument, "\"pattern\" is not a regular expression kb can run (\(reason.lowercased())). Check its brackets and escapes, or send \"literal\": true to find it as text.")
        }
        kind = .expression(compiled)
    }

    deinit {
        if case .expression(let compiled) = kind {
            regfree(compiled)
            compiled.deallocate()
        }
    }

    /// Non-overlapping matches in `text`, first to last (none after `deadline`).
    package func matches(in text: String, deadline: Date) -> [Range<String.Index>] {
        switch kind {
        case .literal(let needle):
            var found: [Range<String.Index>] = []
            var from = text.startIndex
            while from < text.endIndex,
                  let range = text.range(of: needle, options: ignoreCase ? [.caseInsensitive] : [], range: from..<text.endIndex) {
                found.append(range)
                from = range.upperBound > range.lowerBound ? range.upperBound : text.index(after: range.lowerBound)
            }
            return found
        case .expression(let compiled):
            let bytes = Array(text.utf8) + [0]
            var found: [Range<String.Index>] = []
            var offset = 0
            Self.inUTF8 {
                bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { chars in
                        var match = regmatch_t()
                        while offset < bytes.count - 1, Date() < deadline {
                            let flags = offset > 0 ? REG_NOTBOL : 0
                            guard regexec(compiled, chars.baseAddress! + offset, 1, &match, flags) == 0 else { break }
                            let start = offset + Int(match.rm_so), end = offset + Int(match.rm_eo)
                            if let lower = Self.index(start, in: text), let upper = Self.index(end, in: text), lower < upper {
                                found.append(lower..<upper)
                            }
                            offset = end > start ? end : end + 1
                        }
                    }
                }
            }
            return found
        }
    }

    /// The character index at a UTF-8 offset, if one starts there.
    private static func index(_ offset: Int, in text: String) -> String.Index? {
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: offset, limitedBy: text.utf8.endIndex)
        return index.flatMap { $0.samePosition(in: text.unicodeScalars) }
    }

    /// Checks a pattern and rewrites `\d`/`\D` outside brackets.
    package static func translate(_ pattern: String) throws -> String {
        var out = "", inBracket = false, escaped = false
        var product = 1
        let characters = Array(pattern)
        var index = 0
        while index < characters.count {
            let c = characters[index]
            defer { index += 1 }
            if escaped {
                escaped = false
                if c.isNumber {
                    throw KBError(.invalidArgument, "\"pattern\" has the back-reference \\\(c); kb's grep does not take back-references (they can take exponential time). Match the text itself instead.")
                }
                if c == "d" { out.removeLast(); out += "[0-9]"; continue }
                if c == "D" { out.removeLast(); out += "[^0-9]"; continue }
                out.append(c)
                continue
            }
            if inBracket {
                if c == "]" && !(out.hasSuffix("[") || out.hasSuffix("[^")) { inBracket = false }
                out.append(c)
                continue
            }
            switch c {
            case "\\": escaped = true
            case "[": inBracket = true
            case "{":
                guard let close = characters[index...].firstIndex(of: "}") else { break }
                let bounds = String(characters[(index + 1)..<close]).split(separator: ",", omittingEmptySubsequences: false)
                let numbers = bounds.compactMap { Int($0) }
                if numbers.isEmpty { break }
                product *= max(1, numbers.max()!)
                if product > maxRepetition {
                    throw KBError(.invalidArgument, "\"pattern\" repeats by counts that multiply past \(maxRepetition) ({\(bounds.joined(separator: ","))}); such patterns can take very long. Use + or * or smaller counts.")
                }
            default: break
            }
            out.append(c)
        }
        return out
    }

    /// Runs `work` with this thread's character type set to UTF-8 (`C.UTF-8`), so that the C
    /// matcher reads characters, not bytes; the process's own locale is left as it is.
    private static func inUTF8<T>(_ work: () -> T) -> T {
        guard let locale = utf8Locale.value else { return work() }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        return work()
    }

    private struct Locale: @unchecked Sendable { let value: locale_t? }
    private static let utf8Locale = Locale(value: newlocale(LC_CTYPE_MASK, "C.UTF-8", nil) ?? newlocale(LC_CTYPE_MASK, "en_US.UTF-8", nil))
}
