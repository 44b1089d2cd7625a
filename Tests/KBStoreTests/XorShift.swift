/// A small seeded xorshift generator: the same pseudo-random corpora and queries on every run.
struct XorShift {
    var state: UInt64

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
