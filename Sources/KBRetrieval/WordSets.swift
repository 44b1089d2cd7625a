import Foundation

/// The distinct words of texts as sorted 64-bit hashes, for fast set similarity: words are
/// lower-cased runs of letters and digits, each hashed from its UTF-8 bytes in NFC (FNV-1a), so two sets
/// compare by merging arrays instead of hashing strings, and no word becomes a `String` of its
/// own. (Two different words share a hash with a chance of about one in 10¹⁸ per pair.)
///
/// ```swift
/// let a = WordSets.words("Venus rules Taurus"), b = WordSets.words("Taurus is ruled by Venus")
/// let similarity = WordSets.similarity(a, b)   // 2 shared of 6 words: 1/3
/// ```
package enum WordSets {
    /// The distinct words of `text` — what `Set(text.lowercased().split { !$0.isLetter && !$0.isNumber })`
    /// holds — as sorted hashes.
    package static func words(_ text: String) -> [UInt64] {
        var result = asciiWords(text) ?? text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map { word in
            // Canonically equivalent spellings are one word, as they are one String ("café" with
            // é or with e and a combining accent): hashed in NFC.
            var hash = Hash()
            let bytes = word.utf8.allSatisfy { $0 < 0x80 } ? word.utf8 : String(word).precomposedStringWithCanonicalMapping.utf8[...]
            for byte in bytes { hash.add(byte) }
            return hash.value
        }
        result.sort()
        var unique = 0
        for value in result where unique == 0 || result[unique - 1] != value {
            result[unique] = value
            unique += 1
        }
        result.removeLast(result.count - unique)
        return result
    }

    /// FNV-1a over a word's bytes.
    package struct Hash {
        var value: UInt64 = 0xcbf29ce484222325
        mutating func add(_ byte: UInt8) { value = (value ^ UInt64(byte)) &* 0x100000001b3 }
    }

    /// The word hashes of an all-ASCII text, straight from its bytes (the same words the Character
    /// path finds: for ASCII, letters and digits are [A-Za-z0-9]); nil for any other text.
    package static func asciiWords(_ text: String) -> [UInt64]? {
        var text = text
        return text.withUTF8 { bytes -> [UInt64]? in
            var words: [UInt64] = []
            words.reserveCapacity(bytes.count / 5)
            var hash = Hash(), inWord = false
            for byte in bytes {
                guard byte < 0x80 else { return nil }
                let lower = byte | 0x20
                if (byte >= 0x30 && byte <= 0x39) || (lower >= 0x61 && lower <= 0x7A) {
                    hash.add(byte >= 0x41 && byte <= 0x5A ? lower : byte)
                    inWord = true
                } else if inWord {
                    words.append(hash.value)
                    hash = Hash()
                    inWord = false
                }
            }
            if inWord { words.append(hash.value) }
            return words
        }
    }

    /// How many values two sorted, distinct arrays share — or nil as soon as the values left could
    /// no longer lift their `similarity` to `threshold` (checked every 16 steps).
    package static func sharedCount(_ a: [UInt64], _ b: [UInt64], reaching threshold: Double = -.infinity) -> Int? {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                // Without branches on the comparisons (which a merge of word hashes mispredicts half
                // the time): each step moves past the smaller value, or both when they are equal.
                var i = 0, j = 0, shared = 0, steps = 0
                while i < a.count && j < b.count {
                    let x = a[i], y = b[j]
                    shared &+= x == y ? 1 : 0
                    i &+= x <= y ? 1 : 0
                    j &+= y <= x ? 1 : 0
                    steps &+= 1
                    if steps & 15 == 0, threshold > -.infinity,
                       similarity(shared: shared + min(a.count - i, b.count - j), a.count, b.count) < threshold {
                        return nil
                    }
                }
                return shared
            }
        }
    }

    /// Jaccard similarity, or containment of the smaller set when that is higher (and the smaller
    /// set has at least 8 words and is 95% contained).
    package static func similarity(_ a: [UInt64], _ b: [UInt64]) -> Double {
        guard !a.isEmpty, !b.isEmpty else { return a.isEmpty && b.isEmpty ? 1 : 0 }
        return similarity(shared: sharedCount(a, b)!, a.count, b.count)
    }

    /// The similarity of sets of `a` and `b` words that share `shared`: rises with `shared`.
    package static func similarity(shared: Int, _ a: Int, _ b: Int) -> Double {
        let jaccard = Double(shared) / Double(a + b - shared)
        let smaller = min(a, b)
        let containment = Double(shared) / Double(smaller)
        return max(jaccard, containment >= 0.95 && smaller >= 8 ? containment : 0)
    }

    /// `similarity(a, b) >= threshold`, decided as soon as the words left could no longer lift
    /// it to the threshold (most pairs of a context's candidates are far from duplicates).
    package static func reaches(_ a: [UInt64], _ b: [UInt64], _ threshold: Double) -> Bool {
        guard !a.isEmpty, !b.isEmpty else { return (a.isEmpty && b.isEmpty ? 1 : 0) >= threshold }
        guard let shared = sharedCount(a, b, reaching: threshold) else { return false }
        return similarity(shared: shared, a.count, b.count) >= threshold
    }
}
