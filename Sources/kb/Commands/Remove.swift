import ArgumentParser
import Foundation
import KBCore
import KBKit
import KBStore

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove sources from the index by file path, or everything under a folder path.",
        discussion: "Nothing is removed if any path matches no indexed source.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Files or folders to remove from the index.", valueName: "path"))
    var paths: [String]

    func validate() throws {
        if paths.isEmpty { throw ValidationError("Name at least one path to remove.") }
    }

    func run() async throws {
        try await reportingErrors(json: global.json) {
            let kb = try KnowledgeBase.open(at: global.databasePath, create: false)
            let removed = try await kb.remove(paths, as: .admin)
            if global.json {
                try Terminal.printJSON(["removed": removed])
            } else {
                for path in removed { print("removed \(Terminal.display(path))") }
                print("\(removed.count) source(s) removed.")
            }
        }
    }
}
