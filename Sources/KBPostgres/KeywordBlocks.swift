import Foundation

/// BM25 as kb's PostgreSQL keyword rankings compute it (k1 1.2, b 0.75, Lucene's idf, which is
/// never negative), over the column-weighted term frequencies and lengths the triggers keep.
struct KeywordWeighing: Sendable {
    /// Snippets in the index, and their average (column-weighted) length, at least 1.
    let n: Double, average: Double
    /// k1 · b / average: what a length adds to a share's denominator per unit.
    private let perLength: Double

    init(n: Double, average: Double) {
        self.n = n
        self.average = max(average, 1)
        perLength = 1.2 * 0.75 / self.average
    }

    func idf(_ df: Double) -> Double { log(1 + (n - df + 0.5) / (df + 0.5)) }

    /// What a term's idf is multiplied by for a frequency `tf` in a snippet of `length`:
    /// tf · (k1 + 1) / (tf + k1 · (1 − b + b · length / average)), the constant part folded.
    @inline(__always)
    func share(tf: Double, length: Double) -> Double {
        (tf * 2.2) / (tf + (0.3 + perLength * length))
    }

    /// `share` for a posting's frequency and length in halves (both are sums of the column
    /// weights 1, 1.5 and 2, so twice each is a whole number).
    @inline(__always)
    func share(halves tf: UInt32, _ length: UInt32) -> Double {
        share(tf: Double(tf) * 0.5, length: Double(length) * 0.5)
    }
}

/// The postings of one term in one block: ascending snippet ids with each one's frequency of the
/// term and length, both in halves (`KeywordWeighing.share(halves:_:)`).
struct PostingBlock: Sendable, Equatable {
    var ids: [Int64] = []
    var frequencies: [UInt32] = []
    var lengths: [UInt32] = []

    var count: Int { ids.count }

    mutating func append(_ id: Int64, _ frequency: UInt32, _ length: UInt32) {
        ids.append(id)
        frequencies.append(frequency)
        lengths.append(length)
    }

    /// The position of `id`, if the block holds it.
    func position(of id: Int64) -> Int? {
        var low = 0, high = ids.count
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// The block without the postings of `ids`.
    func removing(_ gone: Set<Int64>) -> PostingBlock {
        var kept = PostingBlock()
        for i in ids.indices where !gone.contains(ids[i]) { kept.append(ids[i], frequencies[i], lengths[i]) }
        return kept
    }

    /// The postings that bound every score the block can give: those no other posting beats in
    /// both frequency (higher) and length (shorter), since a share rises with the one and falls
    /// with the other whatever the average length. At most `limit`: beyond it neighbours are
    /// merged into a point above both (still a bound, a little looser).
    func frontier(limit: Int = BlockEntry.frontierLimit) -> [BlockEntry.Point] {
        var points: [BlockEntry.Point] = []
        for i in ids.indices { points.append(BlockEntry.Point(frequency: frequencies[i], length: lengths[i])) }
        return Self.frontier(of: points, limit: limit)
    }

    static func frontier(of points: [BlockEntry.Point], limit: Int) -> [BlockEntry.Point] {
        // Shortest first (then most frequent); keep each point more frequent than all before it.
        var kept: [BlockEntry.Point] = []
        for point in points.sorted(by: { $0.length != $1.length ? $0.length < $1.length : $0.frequency > $1.frequency }) {
            if let last = kept.last, point.frequency <= last.frequency { continue }
            kept.append(point)
        }
        while kept.count > limit {
            // Merge the pair whose merged point is closest to them: the one with the smallest
            // length gap (its shorter length, its higher frequency).
            var best = 0, gap = UInt32.max
            for i in 0..<(kept.count - 1) where kept[i + 1].length - kept[i].length < gap {
                gap = kept[i + 1].length - kept[i].length
                best = i
            }
            kept[best] = BlockEntry.Point(frequency: max(kept[best].frequency, kept[best + 1].frequency), length: kept[best].length)
            kept.remove(at: best + 1)
        }
        return kept
    }
}

/// What a term's directory says of one of its blocks: the ids it spans, how many postings it
/// holds, which write made it (so a reader may keep it while that stays the block's), and the
/// points that bound its shares (`PostingBlock.frontier`).
struct BlockEntry: Sendable, Equatable {
    struct Point: Sendable, Hashable {
        var frequency: UInt32
        var length: UInt32
    }

    var first: Int64
    var last: Int64
    var count: Int
    var version: Int64
    var frontier: [Point]

    /// Points kept per block.
    static let frontierLimit = 4

    init(first: Int64, last: Int64, count: Int, version: Int64, frontier: [Point]) {
        self.first = first
        self.last = last
        self.count = count
        self.version = version
        self.frontier = frontier
    }

    init(_ block: PostingBlock, version: Int64) {
        self.init(first: block.ids.first ?? 0, last: block.ids.last ?? 0, count: block.count, version: version, frontier: block.frontier())
    }

    /// The largest share any posting of the block can have.
    func bestShare(_ weighing: KeywordWeighing) -> Double {
        frontier.reduce(0) { max($0, weighing.share(halves: $1.frequency, $1.length)) }
    }
}

/// A term's blocks, as its row in `keyword_terms` keeps them. The first `tier` blocks (0 or 1)
/// hold the term's best postings (by share, at the average length when they were chosen), ids
/// ascending within the block; the rest hold the others in id order, `KeywordDirectory.blockSize`
/// a block. A frequent word's best snippets are then one block, and the bound of its other blocks
/// is below theirs.
struct KeywordDirectory: Sendable, Equatable {
    var tier: Int
    var entries: [BlockEntry]

    static let blockSize = 128
    /// Terms in at least this many snippets keep their best postings apart (`tier` 1).
    static let tieredFrom = 4_096
    /// How many postings that first block holds.
    static let tierSize = 1_024

    init(tier: Int = 0, entries: [BlockEntry] = []) {
        self.tier = tier
        self.entries = entries
    }

    var postings: Int { entries.reduce(0) { $0 + $1.count } }

    /// Builds a term's blocks from all its postings (ids ascending): the best `tierSize` apart when
    /// the term is frequent, the rest cut into blocks of `blockSize`.
    static func build(_ postings: PostingBlock, weighing: KeywordWeighing, version: Int64) -> (KeywordDirectory, [PostingBlock]) {
        var blocks: [PostingBlock] = []
        var rest = postings
        var tier = 0
        if postings.count >= tieredFrom {
            let order = postings.ids.indices.sorted {
                let a = weighing.share(halves: postings.frequencies[$0], postings.lengths[$0])
                let b = weighing.share(halves: postings.frequencies[$1], postings.lengths[$1])
                return a != b ? a > b : postings.ids[$0] < postings.ids[$1]
            }
            var best = Set(order.prefix(tierSize))
            var top = PostingBlock(), others = PostingBlock()
            for i in postings.ids.indices {
                if best.remove(i) != nil { top.append(postings.ids[i], postings.frequencies[i], postings.lengths[i]) }
                else { others.append(postings.ids[i], postings.frequencies[i], postings.lengths[i]) }
            }
            blocks.append(top)
            rest = others
            tier = 1
        }
        blocks += chunks(rest)
        return (KeywordDirectory(tier: tier, entries: blocks.map { BlockEntry($0, version: version) }), blocks)
    }

    /// `postings` (ids ascending) in blocks of `blockSize`.
    static func chunks(_ postings: PostingBlock) -> [PostingBlock] {
        stride(from: 0, to: postings.count, by: blockSize).map { start in
            let end = min(start + blockSize, postings.count)
            return PostingBlock(ids: Array(postings.ids[start..<end]), frequencies: Array(postings.frequencies[start..<end]),
                                lengths: Array(postings.lengths[start..<end]))
        }
    }
}

/// The bytes of blocks and directories: unsigned LEB128 numbers, ids as differences.
enum KeywordCoding {
    static func encode(_ block: PostingBlock) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(block.count * 5 + 8)
        put(UInt64(block.count), &bytes)
        var previous: Int64 = 0
        for (i, id) in block.ids.enumerated() {
            put(UInt64(i == 0 ? id : id - previous), &bytes)
            previous = id
        }
        for value in block.frequencies { put(UInt64(value), &bytes) }
        for value in block.lengths { put(UInt64(value), &bytes) }
        return bytes
    }

    static func decodeBlock(_ bytes: UnsafeRawBufferPointer) throws -> PostingBlock {
        var reader = Reader(bytes)
        let count = Int(try reader.next())
        guard count <= bytes.count else { throw KeywordCoding.corrupt }
        var block = PostingBlock()
        block.ids.reserveCapacity(count)
        block.frequencies.reserveCapacity(count)
        block.lengths.reserveCapacity(count)
        var id: Int64 = 0
        for i in 0..<count {
            let value = Int64(bitPattern: try reader.next())
            id = i == 0 ? value : id + value
            block.ids.append(id)
        }
        for _ in 0..<count { block.frequencies.append(UInt32(truncatingIfNeeded: try reader.next())) }
        for _ in 0..<count { block.lengths.append(UInt32(truncatingIfNeeded: try reader.next())) }
        return block
    }

    static func encode(_ directory: KeywordDirectory) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(directory.entries.count * 12 + 4)
        put(UInt64(directory.tier), &bytes)
        put(UInt64(directory.entries.count), &bytes)
        for entry in directory.entries {
            put(UInt64(bitPattern: entry.first), &bytes)
            put(UInt64(bitPattern: entry.last &- entry.first), &bytes)
            put(UInt64(entry.count), &bytes)
            put(UInt64(bitPattern: entry.version), &bytes)
            put(UInt64(entry.frontier.count), &bytes)
            for point in entry.frontier {
                put(UInt64(point.frequency), &bytes)
                put(UInt64(point.length), &bytes)
            }
        }
        return bytes
    }

    static func decodeDirectory(_ bytes: UnsafeRawBufferPointer) throws -> KeywordDirectory {
        var reader = Reader(bytes)
        let tier = Int(try reader.next())
        let count = Int(try reader.next())
        guard tier <= 1, count <= bytes.count else { throw corrupt }
        var entries: [BlockEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let first = Int64(bitPattern: try reader.next())
            let last = first &+ Int64(bitPattern: try reader.next())
            let postings = Int(try reader.next())
            let version = Int64(bitPattern: try reader.next())
            let points = Int(try reader.next())
            guard points <= BlockEntry.frontierLimit else { throw corrupt }
            var frontier: [BlockEntry.Point] = []
            for _ in 0..<points {
                frontier.append(BlockEntry.Point(frequency: UInt32(truncatingIfNeeded: try reader.next()),
                                                 length: UInt32(truncatingIfNeeded: try reader.next())))
            }
            entries.append(BlockEntry(first: first, last: last, count: postings, version: version, frontier: frontier))
        }
        return KeywordDirectory(tier: tier, entries: entries)
    }

    @inline(__always)
    static func put(_ value: UInt64, _ bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        @inline(__always)
        mutating func next() throws -> UInt64 {
            var value: UInt64 = 0, shift: UInt64 = 0
            while true {
                guard offset < bytes.count, shift < 64 else { throw KeywordCoding.corrupt }
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }
    }

    struct Corrupt: Error, CustomStringConvertible {
        var description: String { "a keyword block or directory that does not decode (run `kb index optimize` to rebuild them)" }
    }
    static let corrupt = Corrupt()
}
