import ArgumentParser
import Foundation
import KBCore
import KBIngest

/// How files become snippets: shared by `ingest` and `inspect`.
struct IngestOptionGroup: ParsableArguments {
    @Option(name: .customLong("tag"), help: ArgumentHelp("Add this tag to every source (repeatable).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("tags-from"), help: ArgumentHelp(
        "A YAML vocabulary mapping tags to words or /regexes/; snippets that match get the tag.", valueName: "file"))
    var tagsFrom: String?

    @Option(name: .customLong("chunk-size"), help: "Most characters in a snippet.")
    var chunkSize = 500

    @Option(name: .customLong("chunk-overlap"), help: "Characters a snippet repeats from the previous one (default: a tenth of the chunk size).")
    var chunkOverlap: Int?

    @Option(help: ArgumentHelp("The password of encrypted PDFs.", valueName: "password"))
    var password: String?

    func validate() throws {
        guard chunkSize >= Chunker.minimumTarget else {
            throw ValidationError("--chunk-size must be at least \(Chunker.minimumTarget).")
        }
        if let overlap = chunkOverlap, overlap < 0 || overlap > chunkSize / 2 {
            throw ValidationError("--chunk-overlap must be between 0 and half of --chunk-size (\(chunkSize / 2)).")
        }
    }

    func makeOptions() throws -> IngestOptions {
        let chunker = try Chunker(targetCharacters: chunkSize, overlapCharacters: chunkOverlap)
        var vocabulary: TagVocabulary?
        if let file = tagsFrom {
            guard let yaml = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw KBError(.noSuchFile, "Cannot read the tag vocabulary \(file). Check the path given to --tags-from.")
            }
            vocabulary = try TagVocabulary(yaml: yaml, name: file)
        }
        var options = IngestOptions(chunker: chunker, tags: tags.map { Tag($0) }, vocabulary: vocabulary)
        options.password = password
        return options
    }
}
