// kb-bench: measurements for scripts/bench/bench-*.sh. Prints one JSON object on stdout.
//
//   kb-bench embed PASSAGES.txt SENTENCES.txt     (one text per line)
//   kb-bench encoder-profile [THREADS]             (per-stage time of one forward pass)
//   kb-bench embed-passages FILE [COUNT]           (a file's lines embedded in one call, as an ingest does)
//   kb-bench encoder-work TEXTS.txt                (what embedding TEXTS costs the installed model: tokens, and
//                                                  multiply-adds of the linear layers and of attention; bench-encoder-floor.sh)
//   kb-bench search N WORKDIR                     (writes WORKDIR/vectors.f32 and queries.f32 for the reference)
//   kb-bench quantized-recall INDEX.sqlite QUERIES.jsonl [knowledge]  (int8 scan, sign stage, sign stage in cells, and the cells'
//                                                  index read back with its rows in the file (rows read to rescore): recall@10/@24/@50
//                                                  on real embeddings and ms a search; `knowledge` leaves memories out, as kb serve's
//                                                  knowledge copy does; KB_BENCH_ONLY=int8|sign|cells|file measures one of the four)
//   kb-bench keyword-ranking INDEX.sqlite QUERIES.txt [LIMIT]  (the in-memory keyword ranking, every snippet allowed:
//                                                  ms per query, one line a query; LIMIT default 50)
//   kb-bench sign-pass [ROWS]                     (the sign stage's pass over ROWS random codes, default 1,000,000: ns a row)
//   kb-bench postgres-vectors URL N QUERIES        (exact vs HNSW top-10 in PostgreSQL: latency, recall@10)
//   kb-bench ocr-scan BOOK.pdf FIRST COUNT DPI OUT.pdf   (an image-only scan of COUNT pages, truth in OUT.pdf.json)
//   kb-bench ocr SCAN.pdf WORKERS LANGUAGES         (OCR of that scan: pages/s, word accuracy against the truth)
//   kb-bench unigram-tokenizer TOKENIZER.json PIECES (the Unigram tokenizer grown to PIECES: load time, memory, speed)
//   kb-bench postgres-keywords URL QUERIES.txt [LIMIT [PREFIX]]  (keyword rankings on PostgreSQL, pruned against whole: agreement, ms, blocks read)
//   kb-bench scale-index INDEX.sqlite N WORDS.txt MODEL [THEMES.txt]  (N snippets of real-length text, synthetic vectors
//                                                  grouped by book and chapter, the first books around THEMES' embeddings;
//                                                  bench-serve.sh --scale)
//   kb-bench scale-vectors INDEX.sqlite MODEL [THEMES.txt]  (an older shelf's vectors rewritten as scale-index now writes them)
import Foundation
import GRDB
import KBCore
import KBEmbed
import KBSQLite
import KBStore
import KBIngest

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

/// Texts per second one at a time (the `.latency` mode a single caller gets) and in calls of 32
/// (the `.throughput` mode ingest runs in), and a short query's latency.
func benchEmbed(passagesFile: String, sentencesFile: String) async throws -> [String: Any] {
    let folder = try BERTEmbedder.installed().folder
    let precision = try ProcessPrecision.current(ProcessInfo.processInfo.environment)   // KB_PRECISION
    let embedders = [1: try BERTEmbedder(folder: folder, mode: .latency, precision: precision),
                     32: try BERTEmbedder(folder: folder, mode: .throughput, precision: precision)]
    var result: [String: Any] = ["implementation": "kb (Swift, CKBEncoder kernels, \(embedders[1]!.precision.rawValue))",
                                 "precision": embedders[1]!.precision.rawValue, "cores": ProcessInfo.processInfo.activeProcessorCount]
    let sets = ["passages": lines(passagesFile), "sentences": lines(sentencesFile)]
    for embedder in embedders.values { _ = try await embedder.embed(Array(sets["passages"]!.prefix(8)), role: .passage) }   // page in the weights
    for (name, texts) in sets.sorted(by: { $0.key < $1.key }) {
        let tokens = texts.reduce(0) { $0 + embedders[1]!.tokenIDs($1).count }
        for batch in [1, 32] {
            let start = now()
            for i in stride(from: 0, to: texts.count, by: batch) {
                _ = try await embedders[batch]!.embed(Array(texts[i..<min(i + batch, texts.count)]), role: .passage)
            }
            let seconds = now() - start
            result["\(name)_batch\(batch)"] = [
                "texts": texts.count, "tokens": tokens, "seconds": seconds,
                "texts_per_s": Double(texts.count) / seconds, "tokens_per_s": Double(tokens) / seconds,
            ]
        }
    }
    result["peak_rss_mb"] = peakResidentMB()
    let query = "how long does the saturn return take to complete its orbit?"
    let single = embedders[1]!
    result["query_tokens"] = single.tokenIDs(query, role: .query).count
    var latencies: [Double] = []
    for _ in 0..<20 { _ = try await single.embed([query], role: .query) }
    for _ in 0..<200 {
        let start = now()
        _ = try await single.embed([query], role: .query)
        latencies.append((now() - start) * 1000)
    }
    result["query_ms_median"] = median(latencies)
    result["query_ms_p95"] = percentile(latencies, 0.95)
    return result
}

/// Passages embedded as an ingest embeds a book's snippets: the first `count` lines of a file, in
/// one call to the local model in throughput mode (a worker per core); seconds and tokens/s.
/// `KB_BENCH_PASS_SEQUENCES` sets the most texts in one pass (32 by default, as kb's).
func benchEmbedPassages(file: String, count: Int) async throws -> [String: Any] {
    let environment = ProcessInfo.processInfo.environment
    let perPass = environment["KB_BENCH_PASS_SEQUENCES"].flatMap { Int($0) } ?? 32
    let tokensPerPass = environment["KB_BENCH_PASS_TOKENS"].flatMap { Int($0) } ?? BERTEmbedder.throughputTokensPerPass
    let embedder = try BERTEmbedder(folder: BERTEmbedder.installed().folder, mode: .throughput, maxSequencesPerPass: perPass,
                                    maxTokensPerPass: tokensPerPass, precision: ProcessPrecision.current(environment))
    let texts = Array(lines(file).prefix(count))
    let tokens = texts.reduce(0) { $0 + embedder.tokenIDs($1).count }
    _ = try await embedder.embed(Array(texts.prefix(8)), role: .passage)   // page in the weights
    let start = now()
    _ = try await embedder.embed(texts, role: .passage)
    let seconds = now() - start
    return ["model": embedder.id, "precision": embedder.precision.rawValue, "texts": texts.count, "tokens": tokens, "per_pass": perPass, "tokens_per_pass": tokensPerPass,
            "seconds": seconds, "tokens_per_s": Double(tokens) / seconds]
}

/// Deterministic unit vectors (xorshift), row-major.
func randomUnitVectors(_ count: Int, _ d: Int, seed: UInt64) -> [Float] {
    var state = seed | 1
    var out = [Float](repeating: 0, count: count * d)
    for r in 0..<count {
        var norm: Float = 0
        for j in 0..<d {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            let v = Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
            out[r * d + j] = v
            norm += v * v
        }
        let inverse = 1 / norm.squareRoot()
        for j in 0..<d { out[r * d + j] *= inverse }
    }
    return out
}

/// Resident memory of this process in MB: all of it (VmRSS), or one part (RssAnon: allocated;
/// RssFile: mapped files' pages, such as model weights).
func residentMB(_ field: String = "VmRSS") -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

func benchSearch(count: Int, workdir: String) async throws -> [String: Any] {
    ProcessCompute.set(.latency)   // one query at a time, BLAS on every core (as `kb search`)
    let d = 384, k = 10
    let record = EmbedderRecord(name: "random-\(d)", dimension: d, spec: "none")
    let matrix = randomUnitVectors(count, d, seed: 0x5EED)
    let queries = randomUnitVectors(264, d, seed: 0xC0FFEE)
    try matrix.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: workdir + "/vectors.f32")) }
    try queries.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: workdir + "/queries.f32")) }

    // An index file holding the vectors as kb stores them (one source, one snippet per vector).
    let dbPath = workdir + "/bench.sqlite"
    let store = try SQLiteStore.open(at: dbPath, create: true)
    let buildStart = now()
    try await store.write { db in
        try db.execute(sql: "INSERT INTO sources (path, kind, title, content_hash, size, ingested_at) VALUES ('/bench', 'note', 'bench', '', 0, 0)")
        try db.execute(sql: "INSERT INTO embedders (name, dimension, created_at) VALUES (?, ?, 0)", arguments: [record.name, d])
        try db.execute(sql: "INSERT INTO kb_meta (key, value) VALUES ('embedder', ?), ('dimension', ?), ('embedder_spec', 'none')",
                       arguments: [record.name, String(d)])
        try db.execute(sql: "DROP TRIGGER snippets_after_insert")   // no keyword text to index here
    }
    for chunk in stride(from: 0, to: count, by: 50_000) {
        try await store.write { db in
            let snippet = try db.makeStatement(sql: "INSERT INTO snippets (id, source_id, ordinal, text, start_offset, end_offset) VALUES (?, 1, ?, '', 0, 0)")
            let vector = try db.makeStatement(sql: "INSERT INTO vectors (snippet_id, embedder_id, data) VALUES (?, 1, ?)")
            for r in chunk..<min(chunk + 50_000, count) {
                try snippet.execute(arguments: [r + 1, r])
                let data = matrix.withUnsafeBufferPointer { Data(buffer: UnsafeBufferPointer(rebasing: $0[r * d..<(r + 1) * d])) }
                try vector.execute(arguments: [r + 1, data])
            }
        }
    }
    let buildSeconds = now() - buildStart
    let baseline = residentMB()

    // Load from SQLite into the in-memory matrix, as a search does on first use.
    let loadStart = now()
    let loaded = try await store.loadVectors(embedder: record)
    let index = VectorMatrix(dimension: d)
    try index.reset(ids: loaded.ids, matrix: loaded.matrix)
    let loadSeconds = now() - loadStart
    let afterLoad = residentMB()

    let queryVectors = (0..<264).map { Array(queries[$0 * d..<($0 + 1) * d]) }
    for q in queryVectors.prefix(10) { _ = try index.search(q, k: k) }
    var latencies: [Double] = []
    var topIDs: [[Int64]] = []
    for q in queryVectors.prefix(200) {
        let start = now()
        let result = try index.search(q, k: k)
        latencies.append((now() - start) * 1000)
        topIDs.append(result.map { $0.id - 1 })   // row numbers, as the reference reports them
    }
    // The int8 scan: build time, latency, recall@10 against the exact results above.
    let quantizeStart = now()
    index.enableQuantization()
    let quantizeSeconds = now() - quantizeStart
    var quantizedLatencies: [Double] = []
    var recalled = 0
    for (q, exact) in zip(queryVectors.prefix(200), topIDs) {
        let start = now()
        let result = try index.search(q, k: k, quantized: true)
        quantizedLatencies.append((now() - start) * 1000)
        recalled += Set(result.map { $0.id - 1 }).intersection(exact).count
    }
    // Concurrent int8 searches sharing scans: 8 callers on threads of their own, 25 queries each.
    let sharedStart = now()
    DispatchQueue.concurrentPerform(iterations: 8) { caller in
        for q in queryVectors[(caller * 25)..<(caller * 25 + 25)] { _ = try? index.search(q, k: k, quantized: true) }
    }
    let sharedQueriesPerSecond = 200 / (now() - sharedStart)
    let batches = Array(queryVectors.prefix(256))
    _ = try index.search(batch: Array(batches.prefix(64)), k: k)
    let batchStart = now()
    for b in stride(from: 0, to: batches.count, by: 64) { _ = try index.search(batch: Array(batches[b..<b + 64]), k: k) }
    let batchSeconds = now() - batchStart
    return [
        "implementation": "kb VectorMatrix (OpenBLAS sgemv/sgemm + heap)", "vectors": count, "dimension": d,
        "build_seconds": buildSeconds, "load_seconds": loadSeconds,
        "resident_mb_for_matrix": afterLoad - baseline, "raw_matrix_mb": Double(count * d * 4) / 1_048_576,
        "single_ms_median": median(latencies), "single_ms_p95": percentile(latencies, 0.95),
        "batch64_queries_per_s": Double(batches.count) / batchSeconds,
        "top10_rows": topIDs,
        "quantize_seconds": quantizeSeconds, "quantized_single_ms_median": median(quantizedLatencies),
        "quantized_single_ms_p95": percentile(quantizedLatencies, 0.95),
        "quantized_recall_at_10": Double(recalled) / Double(10 * topIDs.count),
        "quantized_shared_8_callers_queries_per_s": sharedQueriesPerSecond,
    ]
}

/// Recall@10 and @24 of the int8 scan, and of the sign stage before it, against the exact scan
/// on a real index's vectors, with real queries.
func benchQuantizedRecall(index path: String, queriesFile: String, rows: VectorRows) async throws -> [String: Any] {
    let store = try SQLiteStore.open(at: path, create: false)
    guard let record = try await store.snapshot({ try $0.embedderRecord() }), record.dimension > 0 else {
        throw KBError(.invalidArgument, "\(path) has no vectors.")
    }
    let loaded = try await store.loadVectors(embedder: record, rows: rows)
    let texts = lines(queriesFile).compactMap { line -> String? in
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["text"] as? String
    }
    let embedder = try BERTEmbedder.installed()
    let queries = try await embedder.embed(texts, role: .query)
    // The int8 scan of every row, then the sign stage first (whatever the index's size).
    var output: [String: Any] = ["index": path, "vectors": loaded.ids.count, "queries": queries.count, "embedder": record.name]
    // The sign stage over every row's signs, and in cells (`SignCells`) whatever the index's size.
    // "file": the cells' index saved and read back with its float rows left in the file, as
    // `kb serve` reads a large index: rescoring reads rows from the file.
    for (name, signFrom, cellsFrom) in [("int8", Int.max, Int.max), ("sign", 1, Int.max), ("cells", 1, 1), ("file", 1, 1)]
        where ProcessInfo.processInfo.environment["KB_BENCH_ONLY"].map({ $0 == name }) ?? true {
        var index = VectorMatrix(dimension: record.dimension, signStageFrom: signFrom, cellsFrom: cellsFrom)
        try index.reset(ids: loaded.ids, matrix: loaded.matrix)
        index.enableQuantization()
        // The exact scan of an index that keeps its rows in the file would load them all.
        let reference = index
        let calibrating = now()
        if name == "file" {
            _ = index.signStageDepths
            let saved = FileManager.default.temporaryDirectory.appendingPathComponent("kb-bench-\(getpid()).vectors").path
            // Removed once read back: the restored index keeps the file open and reads from it.
            defer { try? FileManager.default.removeItem(atPath: saved) }
            index = try index.savedAndRestored(at: saved)
        }
        if name != "int8" {
            output["\(name)_depths"] = index.signStageDepths.map(String.init).joined(separator: ",")
            output["\(name)_calibration_s"] = now() - calibrating
        }
        if name == "cells" {
            output["cells"] = index.signCellCount
            output["cells_probes"] = index.signCellProbes.map { $0.map(String.init).joined(separator: "/") }.joined(separator: ",")
        }
        var seconds = 0.0
        for k in [10, 24, 50] {
            var found = 0
            for q in queries {
                let exact = Set(try reference.search(q, k: k).map(\.id))
                let start = now()
                let approximate = try index.search(q, k: k, quantized: true)
                seconds += now() - start
                found += Set(approximate.map(\.id)).intersection(exact).count
            }
            output["\(name)_recall_at_\(k)"] = Double(found) / Double(k * max(1, queries.count))
        }
        output["\(name)_ms_per_search"] = 1000 * seconds / Double(max(1, 3 * queries.count))
        if name != "int8" {
            let counts = index.signStageCounts
            output["\(name)_searches"] = counts.searches
            output["\(name)_rows_per_search"] = Double(counts.rows) / Double(max(1, counts.searches))
            output["\(name)_sign_rows_per_search"] = Double(counts.signRows) / Double(max(1, counts.searches))
            output["\(name)_left_to_int8_scan"] = counts.scanned
        }
        if name == "file" {
            let rescoring = index.rescoring
            output["file_rescore_candidates_per_search"] = Double(rescoring.candidates) / Double(max(1, 3 * queries.count))
            output["file_rows_read_per_search"] = Double(rescoring.read) / Double(max(1, 3 * queries.count))
        }
    }
    return output
}

/// Per-stage time of one forward pass (median of repeated runs, on `threads` threads) for short
/// queries alone, a micro-batch of queries, and passages at batch 32.
func benchEncoderProfile(threads: Int) throws -> [String: Any] {
    let embedder = try BERTEmbedder.installed()
    let vocabulary = Int32(embedder.tokenizer.vocabularySize)
    var state: UInt64 = 0x9E3779B97F4A7C15
    func sequence(_ length: Int) -> [Int32] {
        (0..<length).map { position in
            if position == 0 { return 101 }
            if position == length - 1 { return 102 }
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return 1000 + Int32(state % UInt64(vocabulary - 1000))
        }
    }
    let shapes: [(name: String, batch: Int, tokens: Int)] = [
        ("query 8 tokens", 1, 8), ("query 16 tokens", 1, 16), ("query 32 tokens", 1, 32),
        ("16 queries x 16 tokens", 16, 16), ("8 passages x 128 tokens", 8, 128), ("32 passages x 128 tokens", 32, 128),
    ]
    var rows: [[String: Any]] = []
    for shape in shapes {
        let input = (0..<shape.batch).map { _ in sequence(shape.tokens) }
        let repetitions = max(5, 4000 / (shape.batch * shape.tokens))
        for _ in 0..<3 { var ignored = EncoderProfile(enabled: false); _ = try embedder.forwardPass(input, threads: threads, profile: &ignored) }
        var runs: [EncoderProfile] = []
        for _ in 0..<repetitions {
            var profile = EncoderProfile()
            _ = try embedder.forwardPass(input, threads: threads, profile: &profile)
            runs.append(profile)
        }
        var row: [String: Any] = ["shape": shape.name, "sequences": shape.batch, "tokens": shape.batch * shape.tokens,
                                  "runs": repetitions]
        for stage in EncoderProfile.Stage.allCases {
            row[stage.rawValue] = median(runs.map { $0.milliseconds(stage) })
        }
        let totals = runs.map(\.totalMilliseconds)
        row["total"] = median(totals)
        row["per_sequence"] = median(totals) / Double(shape.batch)
        rows.append(row)
    }
    return ["threads": threads, "rows": rows]
}

/// The arithmetic a forward pass over `texts` (one a line, as passages) needs: per token, the
/// linear layers' multiply-adds (query/key/value, attention output, feed-forward up and down); per
/// sequence of n tokens, attention's two products (scores and weighted values, n² × hidden each).
func encoderWork(textsFile: String) throws -> [String: Any] {
    let embedder = try BERTEmbedder.installed()
    let c = embedder.folder.config
    let lengths = lines(textsFile).map { embedder.tokenIDs($0, role: .passage).count }
    let tokens = lengths.reduce(0, +)
    let linearPerToken = c.layers * (4 * c.hiddenSize * c.hiddenSize + 2 * c.hiddenSize * c.intermediateSize)
    let attention = lengths.reduce(0.0) { $0 + 2 * Double(c.layers) * Double($1) * Double($1) * Double(c.hiddenSize) }
    return ["model": embedder.id, "texts": lengths.count, "tokens": tokens,
            "longest": lengths.max() ?? 0, "linear_multiply_adds_per_token": linearPerToken,
            "linear_operations": 2 * Double(linearPerToken) * Double(tokens), "attention_operations": 2 * attention]
}

let arguments = CommandLine.arguments.dropFirst()
do {
    switch arguments.first {
    case "embed" where arguments.count == 3:
        let output = try await benchEmbed(passagesFile: arguments[arguments.startIndex + 1], sentencesFile: arguments[arguments.startIndex + 2])
        let data = try JSONSerialization.data(withJSONObject: output, options: [.prettyPrinted, .sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    case "quantized-recall" where arguments.count == 3 || (arguments.count == 4 && arguments.last == "knowledge"):
        let output = try await benchQuantizedRecall(index: arguments[arguments.startIndex + 1], queriesFile: arguments[arguments.startIndex + 2],
                                                    rows: arguments.count == 4 ? .knowledge : .all)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "keyword-ranking" where arguments.count == 3 || arguments.count == 4:
        let limit = arguments.count == 4 ? Int(arguments[arguments.startIndex + 3]) ?? 50 : 50
        let output = try await benchKeywordRanking(index: arguments[arguments.startIndex + 1], queriesFile: arguments[arguments.startIndex + 2], limit: limit)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "sign-pass" where arguments.count <= 2:
        let rows = arguments.count == 2 ? Int(arguments[arguments.startIndex + 1]) ?? 1_000_000 : 1_000_000
        print(String(decoding: try JSONSerialization.data(withJSONObject: benchSignPass(rows: rows), options: [.sortedKeys]), as: UTF8.self))
    case "encoder-profile" where arguments.count <= 2:
        let threads = arguments.count == 2 ? Int(arguments[arguments.startIndex + 1]) ?? 1 : 1
        let output = try benchEncoderProfile(threads: threads)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "embed-passages" where arguments.count == 2 || arguments.count == 3:
        let count = arguments.count == 3 ? Int(arguments[arguments.startIndex + 2]) ?? .max : .max
        let output = try await benchEmbedPassages(file: arguments[arguments.startIndex + 1], count: count)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "encoder-work" where arguments.count == 2:
        let output = try encoderWork(textsFile: arguments[arguments.startIndex + 1])
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "search" where arguments.count == 3:
        guard let count = Int(arguments[arguments.startIndex + 1]), count > 0 else { throw KBError(.invalidArgument, "N must be a positive count") }
        let output = try await benchSearch(count: count, workdir: arguments[arguments.startIndex + 2])
        let data = try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    case "postgres-vectors" where arguments.count == 4:
        guard let count = Int(arguments[arguments.startIndex + 2]), let queries = Int(arguments[arguments.startIndex + 3]), count > 0, queries > 0 else {
            throw KBError(.invalidArgument, "N and QUERIES must be positive counts")
        }
        let output = try await benchPostgresVectors(url: arguments[arguments.startIndex + 1], count: count, queries: queries)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "postgres-keywords" where arguments.count >= 3 && arguments.count <= 5:
        let a = Array(arguments)
        let limit = a.count >= 4 ? Int(a[3]) ?? 50 : 50
        let output = try await benchPostgresKeywords(url: a[1], queriesFile: a[2], limit: limit, filterPrefix: a.count == 5 ? a[4] : nil)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "ocr-scan" where arguments.count == 6:
        let a = Array(arguments)
        guard let first = Int(a[2]), let count = Int(a[3]), let dpi = Int(a[4]) else { throw KBError(.invalidArgument, "FIRST, COUNT and DPI are numbers") }
        let output = try makeOCRScan(book: a[1], first: first, count: count, dpi: dpi, output: a[5])
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "model-embed" where arguments.count == 3:
        let a = Array(arguments)
        let output = try await modelEmbed(folder: a[1], textsFile: a[2])
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "unigram-tokenizer" where arguments.count == 3:
        let a = Array(arguments)
        guard let pieces = Int(a[2]), pieces > 0 else { throw KBError(.invalidArgument, "PIECES is a positive count") }
        let output = try benchUnigramTokenizer(fixture: a[1], pieces: pieces)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "scale-index" where arguments.count == 5 || arguments.count == 6:
        let a = Array(arguments)
        guard let count = Int(a[2]), count > 0 else { throw KBError(.invalidArgument, "N must be a positive count") }
        let output = try await makeScaleIndex(path: a[1], count: count, wordsFile: a[3], modelName: a[4], themesFile: a.count == 6 ? a[5] : nil)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "scale-vectors" where arguments.count == 3 || arguments.count == 4:
        let a = Array(arguments)
        let output = try await regroupScaleVectors(path: a[1], modelName: a[2], themesFile: a.count == 4 ? a[3] : nil)
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    case "ocr" where arguments.count == 4:
        let a = Array(arguments)
        guard let workers = Int(a[2]) else { throw KBError(.invalidArgument, "WORKERS is a number") }
        let output = try benchOCR(scan: a[1], workers: workers, languages: try OCRSettings.languages(a[3]))
        print(String(decoding: try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys]), as: UTF8.self))
    default:
        FileHandle.standardError.write(Data(("usage: kb-bench embed PASSAGES.txt SENTENCES.txt | kb-bench model-embed MODEL_DIR TEXTS.txt | kb-bench search N WORKDIR | "
            + "kb-bench postgres-vectors URL N QUERIES | kb-bench ocr-scan BOOK FIRST COUNT DPI OUT.pdf | kb-bench ocr SCAN WORKERS LANGUAGES\n").utf8))
        exit(64)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
