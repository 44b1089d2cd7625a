// kb-bench: measurements for scripts/bench-*.sh. Prints one JSON object on stdout.
//
//   kb-bench embed PASSAGES.txt SENTENCES.txt     (one text per line)
import Foundation
import KBCore
import KBEmbed

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[min(s.count - 1, Int((Double(s.count) * p).rounded(.up)) - 1)]
}

/// Peak resident memory of this process so far, in MB (VmHWM).
func peakResidentMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

func lines(_ path: String) -> [String] {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init).filter { !$0.isEmpty }
}

func benchEmbed(passagesFile: String, sentencesFile: String) throws -> [String: Any] {
    let embedder = try BERTEmbedder.installed()
    var result: [String: Any] = ["implementation": "kb (Swift + OpenBLAS)", "threads": embedder.threads]
    let sets = ["passages": lines(passagesFile), "sentences": lines(sentencesFile)]
    // Warm up: page in the weights, let OpenBLAS start its threads.
    _ = embedder.embedNow(Array(sets["passages"]!.prefix(8)), role: .passage)
    for (name, texts) in sets.sorted(by: { $0.key < $1.key }) {
        let tokens = texts.reduce(0) { $0 + embedder.tokenIDs($1).count }
        for batch in [1, 32] {
            let start = now()
            for i in stride(from: 0, to: texts.count, by: batch) {
                _ = embedder.embedNow(Array(texts[i..<min(i + batch, texts.count)]), role: .passage)
            }
            let seconds = now() - start
            result["\(name)_batch\(batch)"] = [
                "texts": texts.count, "tokens": tokens, "seconds": seconds,
                "texts_per_s": Double(texts.count) / seconds, "tokens_per_s": Double(tokens) / seconds,
            ]
        }
    }
    let memoryBefore = peakResidentMB()
    _ = embedder.embedNow(Array(sets["passages"]!.prefix(32)), role: .passage)
    result["peak_rss_mb_after_batch32"] = peakResidentMB()
    result["peak_rss_mb_before_batch32"] = memoryBefore
    let query = "how long does the saturn return take to complete its orbit?"
    result["query_tokens"] = embedder.tokenIDs(query, role: .query).count
    var latencies: [Double] = []
    for _ in 0..<20 { _ = embedder.embedNow([query], role: .query) }
    for _ in 0..<200 {
        let start = now()
        _ = embedder.embedNow([query], role: .query)
        latencies.append((now() - start) * 1000)
    }
    result["query_ms_median"] = median(latencies)
    result["query_ms_p95"] = percentile(latencies, 0.95)
    return result
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "embed" where arguments.count == 3:
        let output = try benchEmbed(passagesFile: arguments[arguments.startIndex + 1], sentencesFile: arguments[arguments.startIndex + 2])
        let data = try JSONSerialization.data(withJSONObject: output, options: [.prettyPrinted, .sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    default:
        FileHandle.standardError.write(Data("usage: kb-bench embed PASSAGES.txt SENTENCES.txt\n".utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
