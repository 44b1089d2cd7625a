import Foundation

/// The distinct words of texts as sorted integer ids, for fast set similarity: words are
/// lower-cased runs of letters and digits, interned per `WordSets` value, so two sets compare by
/// merging arrays instead of hashing strings.
///
/// ```swift
/// var sets = WordSets()
/// let a = sets.words("Venus rules Taurus"), b = sets.words("Taurus is ruled by Venus")
/// WordSets.similarity(a, b)   // 0.4
/// ```
struct WordSets {
    private var ids: [String: Int32] = [:]
    /// Sets kept between calls, when the assembler has a cache.
    private let cache: WordSetCache?

    init(cache: WordSetCache? = nil) { self.cache = cache }

    /// The distinct words of `text`: what `Set(text.lowercased().split { !$0.isLetter && !$0.isNumber })`
    /// holds, as ids.
    mutating func words(_ text: String) -> [Int32] {
        if let cache { return cache.words(text) }
        return Self.words(text) { id($0) }
    }

    /// The sorted, distinct ids `intern` gives the words of `text`.
    static func words(_ text: String, intern: (String) -> Int32) -> [Int32] {
        var result: [Int32] = []
        if let ascii = Self.asciiWords(text) {
            result.reserveCapacity(ascii.count)
            for word in ascii { result.append(intern(word)) }
        } else {
            for word in text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }) { result.append(intern(String(word))) }
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

    private mutating func id(_ word: String) -> Int32 {
        if let known = ids[word] { return known }
        let next = Int32(ids.count)
        ids[word] = next
        return next
    }

    /// The words of an all-ASCII text, straight from its bytes (the same words the Character path
    /// finds: for ASCII, letters and digits are [A-Za-z0-9]); nil for any other text.
    static func asciiWords(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8 { bytes -> [String]? in
            var words: [String] = []
            var start = -1
            for (index, byte) in bytes.enumerated() {
                guard byte < 0x80 else { return nil }
                let isWordByte = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                if isWordByte {
                    if start < 0 { start = index }
                } else if start >= 0 {
                    words.append(lowered(bytes, start..<index))
                    start = -1
                }
            }
            if start >= 0 { words.append(lowered(bytes, start..<bytes.count)) }
            return words
        }
    }

    private static func lowered(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(unsafeUninitializedCapacity: range.count) { buffer in
            for (offset, byte) in bytes[range].enumerated() { buffer[offset] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte }
            return range.count
        }
    }

    /// How many ids two sorted, distinct arrays share.
    static func sharedCount(_ a: [Int32], _ b: [Int32]) -> Int {
        var i = 0, j = 0, shared = 0
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                shared += 1
                i += 1
                j += 1
            } else if a[i] < b[j] {
                i += 1
            } else {
                j += 1
            }
        }
        return shared
    }

    /// Jaccard similarity, or containment of the smaller set when that is higher (and the smaller
    /// set has at least 8 words and is 95% contained).
    static func similarity(_ a: [Int32], _ b: [Int32]) -> Double {
        guard !a.isEmpty, !b.isEmpty else { return a.isEmpty && b.isEmpty ? 1 : 0 }
        let shared = sharedCount(a, b)
        let jaccard = Double(shared) / Double(a.count + b.count - shared)
        let smaller = min(a.count, b.count)
        let containment = Double(shared) / Double(smaller)
        return max(jaccard, containment >= 0.95 && smaller >= 8 ? containment : 0)
    }
}

/// Word-id sets of texts kept between context assemblies: the same snippets come back request
/// after request, so their words are split and interned once. Bounded: past `capacity` texts
/// (or a million distinct words) it starts afresh.
///
/// ```swift
/// let assembler = ContextAssembler(counter: ConservativeTokenCounter(), wordSets: WordSetCache())
/// ```
///
/// @unchecked Sendable: `ids` and `sets` are only touched under `lock`.
public final class WordSetCache: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String: Int32] = [:]
    private var sets: [String: [Int32]] = [:]
    private let capacity: Int

    /// `capacity`: how many texts to keep. The default is 8,192.
    public init(capacity: Int = 8192) { self.capacity = max(1, capacity) }

    func words(_ text: String) -> [Int32] {
        lock.withLock {
            if let known = sets[text] { return known }
            if sets.count >= capacity || ids.count >= 1_000_000 {
                sets = [:]
                if ids.count >= 1_000_000 { ids = [:] }
            }
            let result = WordSets.words(text) { word in
                if let known = ids[word] { return known }
                let next = Int32(ids.count)
                ids[word] = next
                return next
            }
            sets[text] = result
            return result
        }
    }
}
