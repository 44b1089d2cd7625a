import ArgumentParser
import Foundation
import KBContext
import KBCore
import KBKit
import KBMemory
import KBStore

/// `--db-pool`, for the long-running commands that serve many requests at once.
struct DatabasePoolOption: ParsableArguments {
    @Option(name: .customLong("db-pool"), help: ArgumentHelp(
        "Connections to a PostgreSQL index (--db postgres://…), and threads waiting on them (default: $KB_DB_POOL, else 8).",
        valueName: "n"))
    var size: Int?
}
