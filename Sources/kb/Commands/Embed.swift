public import ArgumentParser
import Foundation
public import KBCore
import KBKit

extension EmbeddingRole: ExpressibleByArgument {}

struct Embed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the embedding vectors of texts (for debugging and for other tools).",
        discussion: "Uses --embedder, else the embedder of the index given with --db or KB_DB if it exists, else the local model.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var embedderOption: EmbedderOption

    @Option(help: "Embed as a query or as a passage (some models prefix them differently).")
    var role: EmbeddingRole = .query

    @Argument(help: ArgumentHelp("Texts to embed, one vector each.", valueName: "text"))
    var texts: [String]

    func validate() throws {
        if texts.isEmpty { throw ValidationError("Give at least one text to embed.") }
    }

    func run() async throws {
        try await reportingErrors {
            var choice = try embedderOption.choice()
            // The index's model, in its passages' precision: the vectors its searches would use.
            var precision: EncoderPrecision?
            if choice == nil, FileManager.default.fileExists(atPath: global.databasePath),
               let record = try await KnowledgeBase.open(at: global.databasePath, create: false).status(as: .admin).embedder {
                choice = try EmbedderChoice(record.spec)
                precision = record.passagePrecision
                let moved = embedderOption.endpoint ?? ProcessInfo.processInfo.environment["KB_EMBEDDINGS_URL"].flatMap { $0.isEmpty ? nil : $0 }
                if let moved { choice = choice?.movingEndpoint(to: moved) }
            }
            guard let embedder = try await (choice ?? .newIndexDefault()).make(precision: precision) else {
                throw KBError(.invalidArgument, "The embedder 'none' makes no vectors. Use --embedder local.")
            }
            let vectors = try await embedder.embed(texts, role: role)
            if global.json {
                try Terminal.printJSON(EmbedOutput(embedder: embedder.id, dimension: embedder.dimension, vectors: vectors))
                return
            }
            for (text, vector) in zip(texts, vectors) {
                let values = vector.map { String(format: "%.6f", $0) }.joined(separator: ", ")
                print("\(text)\t[\(values)]")
            }
        }
    }
}

struct EmbedOutput: Encodable {
    var embedder: String
    var dimension: Int
    var vectors: [[Float]]
}
