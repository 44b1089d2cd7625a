import ArgumentParser
import Foundation
import KBCore
import KBKit

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The index: a file, or a PostgreSQL database as postgres://USER@HOST:PORT/DATABASE (default: $KB_DB, else ~/.local/share/kb/kb.sqlite).", valueName: "index"))
    var db: String?

    @Flag(name: .long, help: "Print one JSON document on stdout instead of text.")
    var json = false

    var databasePath: String { db ?? KnowledgeBase.defaultLocation() }
}
