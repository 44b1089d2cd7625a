import Foundation

/// How many threads a pass can use now without waiting for cores other threads hold. A pass split
/// across threads meets at every layer's step, so it runs at the pace of its slowest part: on a
/// machine whose cores are all taken (another process's work, an ingest beside the server), the
/// kernel sets parts aside for a time slice and the whole pass waits for them. Measured on two
/// cores with two spinning processes and an ingest beside `kb eval` (multilingual-e5-small, XQuAD
/// en-de): queries' passes on two threads took p50 34.0 ms, on one 27.7 ms; quiet, two threads
/// took 15.7 ms and one 20.5 ms (scripts/bench/bench-contention.sh).
enum IdleCores {
    /// Up to `wanted` threads, but no more than the cores no other runnable thread is waiting for
    /// (the calling thread's own core counted as free), and at least one. The machine's runnable
    /// threads come from `/proc/loadavg`; where it cannot be read, `wanted`.
    static func threads(upTo wanted: Int, cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        guard wanted > 1, let running = runnable() else { return max(1, wanted) }
        return threads(upTo: wanted, cores: cores, running: running)
    }

    /// The same, given how many threads are runnable now (the caller's included).
    static func threads(upTo wanted: Int, cores: Int, running: Int) -> Int {
        max(1, min(wanted, cores - max(0, running - 1)))
    }

    /// How many threads on the machine are runnable now (the caller's included): the fourth field
    /// of `/proc/loadavg`, `running/all`. nil where it cannot be read.
    static func runnable() -> Int? {
        #if os(Linux)
        let descriptor = open("/proc/loadavg", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return runnable(loadavg: String(decoding: buffer.prefix(count), as: UTF8.self))
        #else
        return nil
        #endif
    }

    /// The runnable count in a `/proc/loadavg` line (`0.52 0.58 0.59 3/467 12345` gives 3).
    static func runnable(loadavg line: String) -> Int? {
        let fields = line.split(separator: " ")
        guard fields.count >= 4, let slash = fields[3].firstIndex(of: "/") else { return nil }
        return Int(fields[3][..<slash])
    }
}
