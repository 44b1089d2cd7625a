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
    var chunkSize = Chunker.defaultTarget

    @Option(name: .customLong("chunk-overlap"), help: "Characters a snippet repeats from the previous one (default: a tenth of the chunk size).")
    var chunkOverlap: Int?

    @Option(help: ArgumentHelp("The password of encrypted PDFs.", valueName: "password"))
    var password: String?

    @Option(name: .customLong("record-text"), help: ArgumentHelp(
        "Record files (.json, .jsonl, .csv): the fields, comma-separated, that are a record's text (default: text).", valueName: "fields"))
    var recordText: String?

    @Option(name: .customLong("record-title"), help: ArgumentHelp("Record files: the field shown as a record's location.", valueName: "field"))
    var recordTitle: String?

    @Option(name: .customLong("record-tags"), help: ArgumentHelp(
        "Record files: fields, comma-separated, that become tags (planet: Saturn → planet:saturn).", valueName: "fields"))
    var recordTags: String?

    @Option(name: .customLong("record-weight"), help: ArgumentHelp(
        "Record files: the field holding a record's weight, a boost every ranking multiplies its score by (default 1).", valueName: "field"))
    var recordWeight: String?

    @Option(name: .customLong("record-id"), help: ArgumentHelp("Record files: the field that identifies a record.", valueName: "field"))
    var recordID: String?

    @Option(name: .customLong("text-language"), help: ArgumentHelp(
        "Each snippet's lang: tag: auto (detected: en, uk, ru, ar), a code for all of them (uk), or none. A source's own lang (front matter, EPUB, HTML) wins.",
        valueName: "code"))
    var textLanguage = "auto"

    @OptionGroup var ocrOptions: OCROptionGroup

    func validate() throws {
        do {
            _ = try Chunker(targetCharacters: chunkSize, overlapCharacters: chunkOverlap)
        } catch let error as KBError {
            throw ValidationError(error.message + " (--chunk-size, --chunk-overlap)")
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
        options.ocr = try ocrOptions.settings()
        func fields(_ list: String?) -> [String]? {
            list.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        }
        options.records = (vocabulary?.records ?? RecordMapping()).overriding(with: .init(
            text: fields(recordText), title: recordTitle, tags: fields(recordTags), weight: recordWeight, id: recordID))
        if options.records.text.isEmpty { throw ValidationError("--record-text names no field.") }
        options.textLanguage = try TextLanguage(textLanguage)
        return options
    }
}
