import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBRequests

/// A source named on the command line: its id as listed, or the path of an ingested file.
func sourceID(_ argument: String) -> String {
    if argument.hasPrefix("/") || argument.hasPrefix(".") || argument.hasPrefix("~") || FileManager.default.fileExists(atPath: argument) {
        let expanded = (argument as NSString).expandingTildeInPath
        let url = expanded.hasPrefix("/") ? URL(fileURLWithPath: expanded)
            : URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(expanded)
        return SourceInfo.fileID(url.standardizedFileURL.path)
    }
    return argument
}

struct ReadSource: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "read",
        abstract: "Print a part of a source's text: pages, printed labels, a heading or a character range.",
        discussion: """
            Long parts come in pieces of --max-characters; the line after the text says where the next \
            piece starts (give it as --start). The same as GET /v1/sources/{id}/text and the MCP tool read_source.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The source: its id, as `kb sources` lists it, or an ingested file's path.", valueName: "source"))
    var source: String

    @Option(help: ArgumentHelp("Physical pages of a book, from 1: 12 or 12-14.", valueName: "pages"))
    var pages: String?

    @Option(help: ArgumentHelp("Pages by their printed labels: xii or xii-3.", valueName: "labels"))
    var labels: String?

    @Option(help: ArgumentHelp("A heading, outermost first (repeat for a path).", valueName: "heading"))
    var heading: [String] = []

    @Option(help: ArgumentHelp("The first character to read (from the source's start).", valueName: "n"))
    var start: Int?

    @Option(help: ArgumentHelp("One past the last character to read.", valueName: "n"))
    var end: Int?

    @Option(help: ArgumentHelp("Most characters to print \(SourceReadRequest.valuesAndDefault("maxCharacters")).", valueName: "n"))
    var maxCharacters: Int?

    func run() async throws {
        var request = SourceReadRequest(source: sourceID(source))
        request.pages = pages
        request.labels = labels
        request.heading = heading.isEmpty ? nil : heading
        request.start = start
        request.end = end
        request.maxCharacters = maxCharacters
        try await answerFromIndex(request, global, text: { part in
            var where_ = part.sourceTitle
            if let label = part.pageLabel { where_ += ", " + label }
            if !part.headingPath.isEmpty { where_ += " — " + part.headingPath.joined(separator: Snippet.headingSeparator) }
            let more = part.next.map { "\n… continues: kb sources read \(part.sourceID) --start \($0)" + (part.partEnd > $0 ? " --end \(part.partEnd)" : "") } ?? ""
            return "\(where_) [\(part.pieceStart)–\(part.pieceEnd)]\n\n\(part.text)\(more)"
        }) { try await $0.readSource($1, as: .commandLine) }
    }
}

struct GrepSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grep",
        abstract: "Find a regular expression (POSIX extended) or a text in the indexed sources.",
        discussion: """
            Prints each match's source, pages and headings with its line. Back-references and counted \
            repetitions over 32 are refused; the search stops after --limit matches or its time bound. \
            The same as POST /v1/sources/grep and the MCP tool grep_sources.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The regular expression (\\b, \\w, \\s, [[:digit:]]; \\d is [0-9]), or with --literal the text.", valueName: "pattern"))
    var pattern: String

    @Flag(help: "Find the pattern as plain text.")
    var literal = false

    @Flag(name: [.customShort("i"), .long], help: "Ignore the difference between upper and lower case.")
    var ignoreCase = false

    @Option(name: .customLong("source"), help: ArgumentHelp("Only this source (id or file path; repeatable).", valueName: "source"))
    var sources: [String] = []

    @Option(name: .customLong("tag"), help: ArgumentHelp("Only sources with this tag (repeatable: all of them).", valueName: "tag"))
    var tags: [String] = []

    @Option(name: .customLong("kind"), help: ArgumentHelp("Only sources of this kind (repeatable).", valueName: "kind"))
    var kinds: [String] = []

    @Option(help: ArgumentHelp("Most matches \(SourceGrepRequest.valuesAndDefault("limit")).", valueName: "n"))
    var limit: Int?

    func run() async throws {
        var request = SourceGrepRequest(pattern: pattern)
        request.literal = literal ? true : nil
        request.ignoreCase = ignoreCase ? true : nil
        request.sources = sources.isEmpty ? nil : sources.map(sourceID)
        request.tags = tags.isEmpty ? nil : tags
        request.kinds = kinds.isEmpty ? nil : kinds
        request.limit = limit
        try await answerFromIndex(request, global, text: { found in
            var lines = found.matches.map { match in
                var where_ = match.sourceTitle
                if let label = match.pageLabel { where_ += ", " + label }
                if !match.headingPath.isEmpty { where_ += " — " + match.headingPath.joined(separator: Snippet.headingSeparator) }
                return "\(where_) [\(match.sourceID) @\(match.offset)]\n    \(match.line)"
            }
            let count = found.matches.count
            var summary = "\(count) match\(count == 1 ? "" : "es") in \(found.sourcesSearched) source\(found.sourcesSearched == 1 ? "" : "s") searched"
            switch found.truncated {
            case "limit": summary += "; stopped at the limit (--limit)"
            case "time": summary += "; stopped at the time bound: narrow the pattern or the sources (--source, --tag)"
            default: break
            }
            lines.append(summary + ".")
            return lines.joined(separator: "\n")
        }) { try await $0.grepSources($1, as: .commandLine) }
    }
}

struct SyncSources: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Compare an app's list of a collection with what the index holds: what to upload, what is unchanged, what is gone.",
        discussion: """
            The list is a JSON file (or - for stdin) with the body of POST /v1/sources/sync: \
            {"collection": "NAME", "items": [{"id", "sha256", "title"}], "prune": false}. --collection and \
            --prune override the file's. Sources join a collection when uploaded with it (POST /v1/sources \
            with "collection").
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The JSON file with the list, or - to read it from stdin.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("The collection (else the file's).", valueName: "name"))
    var collection: String?

    @Flag(help: "Remove the collection's sources the list does not name.")
    var prune = false

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let data: Data
            do {
                data = file == "-" ? try DescriptorIO.readToEnd(STDIN_FILENO) : try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw KBError(.unreadableFile, "Cannot read \(file): \(error.localizedDescription). Give the JSON file with the list, or - for stdin.")
            }
            var adding: [String: JSONValue] = [:]
            if let collection { adding["collection"] = .string(collection) }
            if prune { adding["prune"] = .bool(true) }
            guard var value = try? JSONDecoder().decode(JSONValue.self, from: data) else {
                throw KBError(.invalidArgument, "\(file == "-" ? "stdin" : file) is not valid JSON; give the body of POST /v1/sources/sync.")
            }
            if case .object(var object) = value {
                for (key, replacement) in adding { object[key] = replacement }
                value = .object(object)
            }
            let request = try checked(try KBJSON.decode(SourceSyncRequest.self, from: value))
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let synced = try await kb.syncSources(request, as: .commandLine)
            if global.json { return try Terminal.printJSON(synced) }
            for entry in synced.upload { print("upload   \(entry.id) (\(entry.reason))") }
            for entry in synced.conflicts { print("conflict \(entry.id): \(entry.reason)") }
            for id in synced.gone { print("\(synced.pruned ? "removed " : "gone    ") \(id)") }
            print("\(synced.collection): \(synced.upload.count) to upload, \(synced.unchanged.count) unchanged, \(synced.gone.count) \(synced.pruned ? "removed" : "gone (--prune removes them)"), \(synced.conflicts.count) conflict\(synced.conflicts.count == 1 ? "" : "s").")
        }
    }
}
