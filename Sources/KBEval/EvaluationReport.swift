import Foundation
import KBCore

/// The result of `kb eval`: metrics per ranking mode, latency, and the worst queries.
public struct EvaluationReport: Sendable, Codable, Hashable {
    public struct QueryOutcome: Sendable, Codable, Hashable {
        public var id: String
        public var text: String
        public var ndcgAt10: Double
        /// The most relevant judged documents (up to 3).
        public var expected: [String]
        /// The first documents returned (up to 3).
        public var got: [String]
        public init(id: String, text: String, ndcgAt10: Double, expected: [String], got: [String]) {
            self.id = id
            self.text = text
            self.ndcgAt10 = ndcgAt10
            self.expected = expected
            self.got = got
        }
    }

    public struct ModeResult: Sendable, Codable, Hashable {
        public var mode: String
        /// Means over the evaluated queries: ndcg@10, mrr@10, recall@10, recall@100, map@100.
        public var metrics: [String: Double]
        public var latencyP50Milliseconds: Double
        public var latencyP95Milliseconds: Double
        /// The five queries with the lowest nDCG@10.
        public var worst: [QueryOutcome]
        public init(mode: String, metrics: [String: Double], latencyP50Milliseconds: Double, latencyP95Milliseconds: Double, worst: [QueryOutcome]) {
            self.mode = mode
            self.metrics = metrics
            self.latencyP50Milliseconds = latencyP50Milliseconds
            self.latencyP95Milliseconds = latencyP95Milliseconds
            self.worst = worst
        }
    }

    public var dataset: String
    public var split: String
    public var documents: Int
    /// Queries with at least one relevant judgement: the ones the means are over.
    public var queries: Int
    /// Judged queries without any relevant document: skipped, as trec_eval does.
    public var skippedQueries: Int
    public var embedder: String?
    public var chunked: Bool
    public var depth: Int
    public var modes: [ModeResult]

    public init(dataset: String, split: String, documents: Int, queries: Int, skippedQueries: Int,
                embedder: String?, chunked: Bool, depth: Int, modes: [ModeResult]) {
        self.dataset = dataset
        self.split = split
        self.documents = documents
        self.queries = queries
        self.skippedQueries = skippedQueries
        self.embedder = embedder
        self.chunked = chunked
        self.depth = depth
        self.modes = modes
    }

    // MARK: - Gates and comparisons

    /// A `--fail-below METRIC=VALUE` threshold.
    public struct Threshold: Sendable, Hashable {
        public var metric: String
        public var value: Double

        public init(parsing text: String) throws {
            let parts = text.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces).lowercased() }
            guard parts.count == 2, let value = Double(parts[1]) else {
                throw KBError(.invalidArgument, "--fail-below takes METRIC=VALUE, e.g. ndcg@10=0.6; got \"\(text)\".")
            }
            guard Metrics.names.contains(parts[0]) else {
                throw KBError(.invalidArgument, "Unknown metric '\(parts[0])' in --fail-below; use one of \(Metrics.names.joined(separator: ", ")).")
            }
            metric = parts[0]
            self.value = value
        }
    }

    /// Messages for every mode whose metric falls below a threshold; empty when all pass.
    public func failures(_ thresholds: [Threshold]) -> [String] {
        thresholds.flatMap { threshold in
            modes.compactMap { mode in
                let actual = mode.metrics[threshold.metric] ?? 0
                return actual < threshold.value
                    ? "\(mode.mode): \(threshold.metric) = \(Self.format(actual)) is below \(Self.format(threshold.value))"
                    : nil
            }
        }
    }

    /// Metric changes against an earlier report, by mode and metric (this − baseline).
    public func deltas(against baseline: EvaluationReport) -> [String: [String: Double]] {
        var result: [String: [String: Double]] = [:]
        for mode in modes {
            guard let before = baseline.modes.first(where: { $0.mode == mode.mode }) else { continue }
            for name in Metrics.names {
                if let now = mode.metrics[name], let then = before.metrics[name] { result[mode.mode, default: [:]][name] = now - then }
            }
        }
        return result
    }

    // MARK: - Rendering

    static func format(_ value: Double) -> String { String(format: "%.4f", value) }

    /// The terminal table, with deltas when a baseline is given.
    public func table(baseline: EvaluationReport? = nil) -> String {
        let deltas = baseline.map { self.deltas(against: $0) } ?? [:]
        var lines = ["\(dataset) (\(split)): \(queries) queries, \(documents) documents"
            + (skippedQueries > 0 ? ", \(skippedQueries) judged queries without a relevant document skipped" : "")
            + (embedder.map { "; embedder \($0)" } ?? "") + (chunked ? "; chunked" : "")]
        let header = ["mode"] + Metrics.names + ["p50 ms", "p95 ms"]
        var rows: [[String]] = [header]
        for mode in modes {
            var row = [mode.mode]
            for name in Metrics.names {
                var cell = Self.format(mode.metrics[name] ?? 0)
                if let d = deltas[mode.mode]?[name] { cell += String(format: " (%+.4f)", d) }
                row.append(cell)
            }
            row += [String(format: "%.1f", mode.latencyP50Milliseconds), String(format: "%.1f", mode.latencyP95Milliseconds)]
            rows.append(row)
        }
        let widths = header.indices.map { c in rows.map { $0[c].count }.max() ?? 0 }
        for (i, row) in rows.enumerated() {
            lines.append(row.enumerated().map { c, cell in c == 0 ? cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
                : String(repeating: " ", count: widths[c] - cell.count) + cell }.joined(separator: "  "))
            if i == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        return lines.joined(separator: "\n")
    }

    /// A Markdown report: the table, the worst queries per mode, and the chart.
    public func markdown(baseline: EvaluationReport? = nil, chartFile: String = "ndcg.svg") -> String {
        var md = "# Retrieval evaluation: \(dataset) (\(split))\n\n"
        md += "\(queries) queries over \(documents) documents"
        md += skippedQueries > 0 ? " (\(skippedQueries) judged queries without a relevant document skipped)" : ""
        md += embedder.map { "; embedder `\($0)`" } ?? ""
        md += chunked ? "; documents chunked, hits collapsed to documents by best snippet" : "; one snippet per document"
        md += ". Metrics follow trec_eval: nDCG with linear gain, ties broken by document id.\n\n"
        let deltas = baseline.map { self.deltas(against: $0) } ?? [:]
        md += "| mode | " + Metrics.names.joined(separator: " | ") + " | p50 ms | p95 ms |\n"
        md += "|---|" + String(repeating: "---:|", count: Metrics.names.count + 2) + "\n"
        for mode in modes {
            let cells = Metrics.names.map { name -> String in
                var cell = Self.format(mode.metrics[name] ?? 0)
                if let d = deltas[mode.mode]?[name] { cell += String(format: " (%+.4f)", d) }
                return cell
            }
            md += "| \(mode.mode) | " + cells.joined(separator: " | ")
                + String(format: " | %.1f | %.1f |\n", mode.latencyP50Milliseconds, mode.latencyP95Milliseconds)
        }
        md += "\n![nDCG@10 per mode](\(chartFile))\n"
        for mode in modes {
            md += "\n## Worst queries: \(mode.mode)\n\n| query | nDCG@10 | expected | got |\n|---|---:|---|---|\n"
            for q in mode.worst {
                let text = q.text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
                md += "| \(q.id): \(text.prefix(120)) | \(Self.format(q.ndcgAt10)) | \(q.expected.joined(separator: ", ")) | \(q.got.joined(separator: ", ")) |\n"
            }
        }
        return md
    }

    /// A bar chart of nDCG@10 per mode, as a standalone SVG.
    public func svgChart() -> String {
        let barWidth = 80, gap = 40, height = 240, top = 40, bottom = 40
        let width = max(320, modes.count * (barWidth + gap) + gap)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height + top + bottom)\" font-family=\"sans-serif\" font-size=\"13\">\n"
        svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        svg += "<text x=\"\(width / 2)\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">nDCG@10: \(Self.escape(dataset)) (\(Self.escape(split)))</text>\n"
        svg += "<line x1=\"\(gap / 2)\" y1=\"\(top + height)\" x2=\"\(width - gap / 2)\" y2=\"\(top + height)\" stroke=\"#333\"/>\n"
        let colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"]
        for (i, mode) in modes.enumerated() {
            let value = min(1, max(0, mode.metrics["ndcg@10"] ?? 0))
            let barHeight = Int(Double(height) * value)
            let x = gap + i * (barWidth + gap)
            svg += "<rect x=\"\(x)\" y=\"\(top + height - barHeight)\" width=\"\(barWidth)\" height=\"\(barHeight)\" fill=\"\(colors[i % colors.count])\"/>\n"
            svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(top + height - barHeight - 6)\" text-anchor=\"middle\">\(Self.format(value))</text>\n"
            svg += "<text x=\"\(x + barWidth / 2)\" y=\"\(top + height + 18)\" text-anchor=\"middle\">\(Self.escape(mode.mode))</text>\n"
        }
        return svg + "</svg>\n"
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// TREC run-file lines: `qid Q0 docid rank score tag`.
    public static func runFileLines(query: String, ranking: [Metrics.Scored], tag: String) -> [String] {
        ranking.enumerated().map { i, entry in "\(query) Q0 \(entry.id) \(i + 1) \(String(format: "%.6f", entry.score)) \(tag)" }
    }
}
