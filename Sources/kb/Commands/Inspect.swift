import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the snippets and tags ingest would make of a file, without writing anything.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var ingest: IngestOptionGroup

    @Argument(help: ArgumentHelp("The file to inspect.", valueName: "file"))
    var file: String

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let document = try await KnowledgeBase.inspect(file, options: try ingest.makeOptions())
            if global.json {
                try Terminal.printJSON(document)
                return
            }
            let source = document.source
            print("\(Terminal.bold(source.title))  (\(source.kind.rawValue), \(source.size) bytes, \(document.snippets.count) snippets)")
            if !source.tags.isEmpty { print("tags: " + source.tags.map(\.name).joined(separator: ", ")) }
            if !source.keywords.isEmpty { print("keywords: " + source.keywords.joined(separator: " | ")) }
            if let ocr = source.ocr { print("OCR: " + ocr) }
            for warning in document.warnings { Terminal.warning(warning) }
            for snippet in document.snippets {
                print("")
                var header = "#\(snippet.ordinal) [\(snippet.start)..<\(snippet.end)] \(snippet.text.unicodeScalars.count) chars"
                if !snippet.headingPath.isEmpty { header += " — " + snippet.headingPathString }
                if let pages = snippet.pages { header += " — " + pages.citation }
                if let ocr = snippet.ocr { header += " — " + ocr.label }
                print(Terminal.bold(header))
                let extra = snippet.tags.filter { !source.tags.contains($0) }
                if !extra.isEmpty { print("tags: +" + extra.map(\.name).joined(separator: ", +")) }
                print(snippet.text)
            }
        }
    }
}
