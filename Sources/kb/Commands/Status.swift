import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show where the index is and what it holds.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let status = try await kb.status(as: .admin)
            if global.json {
                try Terminal.printJSON(status)
                return
            }
            let kinds = status.sourcesByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("Index:    \(status.path)")
            print("Size:     \(ByteCountFormatter.string(fromByteCount: status.sizeOnDisk, countStyle: .file))")
            print("Schema:   \(status.schemaVersion)")
            print("Sources:  \(status.sources)\(kinds.isEmpty ? "" : " (\(kinds))")")
            print("Snippets: \(status.snippets)")
            print("Tags:     \(status.tags)")
            print("Keywords: \(status.keywordLanguage)\(status.keywordLanguage == KeywordLanguage.auto.rawValue ? " (each word by its script's rules)" : "")")
            if !status.languages.isEmpty {
                print("Languages: " + status.languages.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                    .map { "\($0.key) \($0.value)" }.joined(separator: ", ") + " snippets")
            }
            if let embedder = status.embedder {
                let count = status.vectors[embedder.name] ?? 0
                print("Embedder: \(embedder.name)\(embedder.dimension > 0 ? " (\(embedder.dimension)-dim, \(count) vectors)" : " (keyword-only index)")")
                if case .openAI(_, let url)? = (try? EmbedderChoice(embedder.spec))?.base { print("Endpoint: \(url)") }
                print("          kept by this index; `kb reindex --model NAME` moves it to another model")
                if let precision = embedder.passagePrecision {
                    let how = embedder.precision == nil ? "as an index made before kb recorded it was embedded" : "as its passages were embedded"
                    print("Precision: \(precision.rawValue), \(how); queries are embedded alike (--precision overrides)")
                }
            }
            if let warning = status.languageWarning { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
            // Price per million tokens, for an estimate: $KB_EMBEDDINGS_PRICE (e.g. 0.02).
            let price = try EnvironmentNumber.read("KB_EMBEDDINGS_PRICE", in: ProcessInfo.processInfo.environment, as: Double.self,
                                                   within: 0...1_000_000, meaning: "the dollars per million tokens the endpoint charges")
            for (name, tokens) in status.tokensUsed.sorted(by: { $0.key < $1.key }) {
                let cost = price.map { String(format: " (≈ $%.4f at $%g per million tokens)", Double(tokens) / 1e6 * $0, $0) } ?? ""
                print("Tokens:   \(name) \(tokens) used\(cost); \(status.cachedVectors[name] ?? 0) vectors cached")
            }
        }
    }
}
