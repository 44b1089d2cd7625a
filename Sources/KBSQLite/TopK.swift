/// Keeps the `k` best (highest score) candidates seen, in a bounded min-heap. Ties go to the
/// smaller id, so results are deterministic.
///
/// ```swift
/// var top = TopK(k: 3)
/// for (id, score) in scored { top.offer(id: id, score: score) }
/// top.sorted()   // best first
/// ```
public struct TopK: Sendable {
    public struct Entry: Sendable, Hashable {
        public var id: Int64
        public var score: Float

        public init(id: Int64, score: Float) {
            self.id = id
            self.score = score
        }
    }

    public let k: Int
    private var heap: [Entry] = []

    public init(k: Int) {
        self.k = max(0, k)
        heap.reserveCapacity(self.k)
    }

    /// `a` ranks below `b`: lower score, or equal score and larger id.
    @inline(__always)
    static func worse(_ a: Entry, _ b: Entry) -> Bool {
        a.score < b.score || (a.score == b.score && a.id > b.id)
    }

    /// The score a candidate must beat to enter, once full.
    public var threshold: Float { heap.count < k ? -.infinity : heap[0].score }

    public mutating func offer(id: Int64, score: Float) {
        guard k > 0 else { return }
        let entry = Entry(id: id, score: score)
        if heap.count < k {
            heap.append(entry)
            siftUp(heap.count - 1)
        } else if Self.worse(heap[0], entry) {
            heap[0] = entry
            siftDown(0)
        }
    }

    /// Best first.
    public func sorted() -> [Entry] {
        heap.sorted { Self.worse($1, $0) }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.worse(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && Self.worse(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && Self.worse(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
