// swift-tools-version:6.1
import PackageDescription

// kb's own modules are compiled with testing enabled (for the tests' `@testable import`) when
// KB_TESTING=1, which kb's scripts set: setup.sh's build is then the one the tests need, and only
// kb's modules have it (with every dependency's, kb served 12% slower; with kb's alone, as fast as
// without: docs/development.md, "One build for both commands"). A package that depends on kb is
// built without it.
let builtByKBScripts = Context.environment["KB_TESTING"] == "1"
let testing: [SwiftSetting] = builtByKBScripts ? [.unsafeFlags(["-enable-testing"])] : []

// A debug build (scripts/setup.sh's, and scripts/test.sh's on it) leaves kb's dependencies
// unoptimised, which halves the compile, but not the code kb spends its time in: its modules
// below the facade get -O (`hot`: everything but KBKit, KBChat, KBServer, the executable,
// KBEval and KBClient, whose -O cost ~80 s more of the build for no measured gain), its C and C++
// -O2 (`hotC`, `hotCXX`). Measured against the release build: the same embedding and PDF speed,
// kb serve ~4% fewer requests (docs/development.md). Release builds are untouched.
let hot: [SwiftSetting] = builtByKBScripts ? [.unsafeFlags(["-O"], .when(configuration: .debug))] : []
let hotC: [CSetting] = builtByKBScripts ? [.unsafeFlags(["-O2"], .when(configuration: .debug))] : []
let hotCXX: [CXXSetting] = builtByKBScripts ? [.unsafeFlags(["-O2"], .when(configuration: .debug))] : []

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
] + testing

let package = Package(
    name: "kb",
    // iOS and visionOS for KBClient, the HTTP client an app on those uses (the rest is for Linux and macOS).
    platforms: [.macOS(.v14), .iOS(.v17), .visionOS(.v1)],
    products: [
        .executable(name: "kb", targets: ["kb"]),
        // KBKit and the modules its API speaks in (its vocabulary, the storage types, ingest and
        // context options, memories, evaluation), so that a package using it can import them too.
        .library(name: "KBKit", targets: ["KBKit", "KBCore", "KBStore", "KBIngest", "KBRetrieval", "KBContext", "KBMemory", "KBEval", "KBLanguageModel", "KBRequests"]),
        // Indexes in PostgreSQL + pgvector (postgres:// URLs): an app registers its engine at start,
        // `KnowledgeBase.register(PostgresEngine())`.
        .library(name: "KBPostgres", targets: ["KBPostgres"]),
        // A typed HTTP client of `kb serve` for Swift apps (iPhone, iPad, Mac, Linux), generated from
        // kb's OpenAPI document: no KBKit, no C libraries (docs/swift.md).
        .library(name: "KBClient", targets: ["KBClient"]),
    ],
    // What a package that depends on kb may leave out. With none of them, KBKit needs only SQLite,
    // OpenBLAS, poppler and the model: `.package(path: "…/kb", traits: [])`.
    traits: [
        .trait(name: "PostgreSQL", description: "kb's own indexes in PostgreSQL with pgvector (postgres:// URLs), for several servers on one index; a package using KBKit adds the KBPostgres product instead."),
        .trait(name: "OCR", description: "Scans and PDF pages without a text layer read by Tesseract (libtesseract-dev, libleptonica-dev)."),
        .trait(name: "Server", description: "kb serve (HTTP retrieval service, Hummingbird) and kb mcp (Model Context Protocol)."),
        .default(enabledTraits: ["PostgreSQL", "OCR", "Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", from: "0.12.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV", from: "0.10.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        // KBClient: the runtime of swift-openapi-generator's code and its two transports.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
    ],
    targets: [
        // Vocabulary, no I/O.
        .target(name: "KBCore", swiftSettings: strict + hot),
        // Loaders, chunker, tagger: pure functions of their input.
        .target(
            name: "KBIngest",
            dependencies: [
                "KBCore", "CPoppler", "CKBMarkup", .target(name: "CTesseract", condition: .when(traits: ["OCR"])),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "SwiftCSV", package: "SwiftCSV"),
                // The page cache's folder name (a digest of the index's location).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict + hot),
        // OpenBLAS's CBLAS interface (libopenblas-dev). KBSQLite (the vector scan) uses it.
        .systemLibrary(name: "COpenBLAS", pkgConfig: "openblas", providers: [.apt(["libopenblas-dev"])]),
        // A plain C view of libxml2's XML and HTML parsers (libxml2-dev): EPUB, HTML and DOCX.
        // Only KBIngest imports it.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        .target(name: "CKBMarkup", dependencies: ["CLibXML2"], cSettings: hotC),
        // A plain C interface over poppler-cpp (libpoppler-cpp-dev). Only KBIngest imports it.
        .target(
            name: "CPoppler",
            cxxSettings: hotCXX,
            linkerSettings: [.linkedLibrary("poppler-cpp"), .linkedLibrary("stdc++")]),
        // A plain C interface over Tesseract's C API and Leptonica (libtesseract-dev, libleptonica-dev):
        // page images and recognition. Only KBIngest (and the tests' scan maker) import it.
        .target(
            name: "CTesseract",
            cSettings: hotC,
            linkerSettings: [.linkedLibrary("tesseract"), .linkedLibrary("lept"), .linkedLibrary("gomp")]),
        // int8 kernels in C (clang vectorises them; Swift's SIMD widening does not). Only KBSQLite imports it.
        .target(name: "CKBKernels", cSettings: hotC),
        // The encoder's numeric kernels in C: packed-weight matrix products and attention, with
        // AVX-512 and AVX2 variants chosen at run time. Only KBEmbed imports it.
        // oneDNN (Debian libdnnl-dev) runs the bf16 and int8 products; kb's own kernels the rest.
        .target(name: "CKBEncoder", cSettings: hotC, linkerSettings: [.linkedLibrary("m"), .linkedLibrary("dnnl")]),
        // Embedders: the native BERT model (on CKBEncoder's kernels) and the HTTP client.
        .target(
            name: "KBEmbed",
            dependencies: ["KBCore", "CKBEncoder"],
            swiftSettings: strict + hot),
        // The upstream chat model: an OpenAI-compatible chat completions client (async-http-client),
        // asked for JSON or streamed, and the Server-Sent Events its streams are read as.
        .target(
            name: "KBLanguageModel",
            dependencies: [
                "KBCore", "KBEmbed",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strict + hot),
        // The storage contract: what KBKit asks of an index, the types both stores share, and the
        // rules every store's writes follow, written once over per-store steps. No I/O.
        .target(name: "KBStore", dependencies: ["KBCore", "KBMemory"], swiftSettings: strict + hot),
        // The SQLite store: schema, migrations, snippets, tags, FTS5, and the vectors in memory.
        .target(
            name: "KBSQLite",
            dependencies: ["KBCore", "KBStore", "COpenBLAS", "CKBKernels", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: strict + hot),
        // Retrieval evaluation: BEIR datasets, trec_eval metrics, reports. Pure.
        .target(name: "KBEval", dependencies: ["KBCore"], swiftSettings: strict),
        // Memories: validation, duplicates, recency, the JSON Lines archive. Pure.
        .target(name: "KBMemory", dependencies: ["KBCore"], swiftSettings: strict + hot),
        // Retrieval: the pipeline of named stages every search, recall and context runs (plan,
        // embed, candidates in one store snapshot, fuse, weight, collapse, diversify, an
        // asynchronous stage, hydrate), the ranking arithmetic and the conversation plan.
        .target(name: "KBRetrieval", dependencies: ["KBCore", "KBStore"], swiftSettings: strict + hot),
        // Context assembly for bots and reports: near-duplicates, diversity, merge, token budget,
        // citations. Pure.
        .target(name: "KBContext", dependencies: ["KBCore", "KBRetrieval"], swiftSettings: strict + hot),
        // The PostgreSQL + pgvector store (the second implementation of KBStore's IndexStore).
        .target(
            name: "KBPostgres",
            dependencies: [
                "KBCore", "KBStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + hot),
        // What KBKit asks of the operating system: folder events (Linux inotify, read on a thread of
        // its own; where it is missing the folder watcher rescans instead) and POSIX regular
        // expressions (grep over sources).
        .target(name: "KBSystem", dependencies: ["KBCore"], swiftSettings: strict + hot),
        // The request contract shared by the CLI, HTTP and MCP: each request's fields (RequestField,
        // from which the OpenAPI document and the MCP tool schemas are written), its checks against
        // the limits (`Checked`), and the JSON kb reads and writes.
        .target(name: "KBRequests", dependencies: ["KBCore", "KBIngest", "KBMemory", "KBContext", "KBSystem", .product(name: "Yams", package: "Yams")], swiftSettings: strict + hot),
        // The facade that the CLI and library users call.
        .target(
            name: "KBKit",
            dependencies: [
                "KBCore", "KBStore", "KBIngest", "KBSQLite", "KBEmbed", "KBEval", "KBMemory", "KBRetrieval", "KBContext", "KBRequests",
                // The upstream chat model (chat completions, the rewriter, memory extraction).
                "KBLanguageModel",
                "KBSystem",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // A chat turn over KBKit: the bot's context, the upstream model's answer streamed or
        // whole, citations, and what the turn teaches (the chat completions route's session).
        .target(
            name: "KBChat",
            dependencies: [
                "KBCore", "KBKit", "KBRequests", "KBLanguageModel",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ],
            swiftSettings: strict),
        // The HTTP retrieval service (Hummingbird) and the MCP server over KBKit.
        .target(
            name: "KBServer",
            dependencies: [
                "KBCore", "KBStore", "KBKit", "KBChat", "KBMemory", "KBContext", "KBIngest", "KBLanguageModel", "KBRequests",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The console's files, embedded into the binary at build time (the EmbedConsole plugin).
            exclude: ["Console"],
            swiftSettings: strict,
            plugins: ["EmbedConsole"]),
        // The console's files as Swift source (ConsoleAssets), made at build time.
        .plugin(name: "EmbedConsole", capability: .buildTool(), dependencies: ["kb-embed-console"], path: "Plugins/EmbedConsole"),
        .executableTarget(name: "kb-embed-console", path: "Plugins/kb-embed-console", swiftSettings: strict),
        .executableTarget(
            name: "kb",
            dependencies: [
                "KBCore", "KBStore", "KBKit", "KBEval", "KBIngest", "KBMemory", "KBContext", "KBEmbed", "KBRetrieval", "KBLanguageModel", "KBRequests",
                .target(name: "KBServer", condition: .when(traits: ["Server"])),
                // Registered by kb's composition root (KB.main) for postgres:// indexes.
                .target(name: "KBPostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        // The HTTP client of kb serve: sources generated by scripts/generate-client.sh from
        // openapi.json (committed, kept equal to what kb serve serves by KBClientTests) and a thin
        // hand-written layer. URLSession carries its requests on Apple's platforms, AsyncHTTPClient
        // on Linux (where URLSession does not stream).
        .target(
            name: "KBClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                // The HTTP request and response types the runtime speaks (its own dependency).
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession",
                         condition: .when(platforms: [.macOS, .iOS, .tvOS, .watchOS, .visionOS])),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client", condition: .when(platforms: [.linux])),
            ],
            exclude: ["openapi.json", "openapi-generator-config.yaml"]),
        // Measurements run by scripts/bench/bench-*.sh; kept apart from the tests.
        .executableTarget(
            name: "kb-bench",
            dependencies: ["CKBKernels", "KBCore", "KBStore", "KBEmbed", "KBSQLite", "KBIngest", "KBPostgres", "KBTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/kb-bench",
            swiftSettings: strict),
        // Which backend the tests run against (SQLite, or PostgreSQL when scripts/test.sh says so),
        // and the scans with known text the OCR tests and scripts/bench/bench-ocr.sh make.
        .target(name: "KBTestSupport", dependencies: ["CPoppler", "CTesseract", "KBCore", "KBKit", "KBIngest", "KBPostgres", "KBRequests", .product(name: "ZIPFoundation", package: "ZIPFoundation")], path: "Tests/KBTestSupport", swiftSettings: strict),
        // Stub servers on loopback (Hummingbird) that answer as a test scripts them: an embeddings
        // endpoint, a re-ranker, chat models. For the tests of the clients to them, wherever those live.
        .target(
            name: "KBStubServers",
            dependencies: [
                "KBEmbed",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/KBStubServers", swiftSettings: strict),
        .testTarget(
            name: "KBIngestTests", dependencies: ["CPoppler", "KBCore", "KBIngest", "KBTestSupport"], resources: [.copy("Fixtures")],
            swiftSettings: strict),
        .testTarget(
            name: "KBSQLiteTests",
            dependencies: ["KBCore", "KBStore", "KBSQLite", "CKBKernels", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict),
        // The store contract, rule by rule, on SQLite and (where KB_TEST_POSTGRES_URL names a server) PostgreSQL.
        .testTarget(name: "KBStoreTests", dependencies: ["KBCore", "KBStore", "KBSQLite", "KBPostgres", .product(name: "PostgresNIO", package: "postgres-nio"),
                                                  .product(name: "NIOCore", package: "swift-nio")], swiftSettings: strict),
        .testTarget(name: "KBEmbedTests", dependencies: ["KBCore", "KBEmbed", "CKBEncoder", "KBStubServers", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "NIOCore", package: "swift-nio")], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "KBEvalTests", dependencies: ["KBCore", "KBEval"], swiftSettings: strict),
        .testTarget(name: "KBContextTests", dependencies: ["KBCore", "KBContext", "KBRetrieval", "KBTestSupport"], resources: [.copy("Fixtures")], swiftSettings: strict),
        .testTarget(name: "KBRetrievalTests", dependencies: ["KBCore", "KBRetrieval", "KBTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "KBServerTests",
            dependencies: [
                "KBCore", "KBStore", "KBSQLite", "KBKit", "KBRequests", "KBServer", "KBContext", "KBEmbed", "KBIngest", "KBRetrieval", "KBTestSupport", "KBStubServers", "KBLanguageModel",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // A live kb serve driven through KBClient (on SQLite, and on PostgreSQL when scripts/test.sh says so).
        .testTarget(
            name: "KBClientTests",
            dependencies: [
                "KBClient", "KBCore", "KBIngest", "KBKit", "KBRequests", "KBServer", "KBTestSupport", "KBLanguageModel",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(name: "KBMemoryTests", dependencies: ["KBCore", "KBMemory"], swiftSettings: strict),
        .testTarget(name: "KBLanguageModelTests", dependencies: ["KBLanguageModel", .product(name: "NIOCore", package: "swift-nio")], swiftSettings: strict),
        .testTarget(
            name: "KBKitTests",
            dependencies: ["KBCore", "KBStore", "KBSQLite", "KBIngest", "KBKit", "KBRequests", "KBEmbed", "KBMemory", "KBRetrieval", "KBContext", "KBPostgres", "KBTestSupport",
                           "KBStubServers", "KBLanguageModel",
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird")],
            resources: [.copy("Fixtures")], swiftSettings: strict),
        // A chat turn through ChatSession against an upstream model on loopback.
        .testTarget(
            name: "KBChatTests",
            dependencies: ["KBCore", "KBKit", "KBChat", "KBRequests", "KBLanguageModel", "KBTestSupport",
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird")],
            swiftSettings: strict),
        .testTarget(
            name: "kbTests",
            dependencies: [
                "KBCore", "KBKit", "KBRequests", "KBServer", "KBEmbed", "KBTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "MCP", package: "swift-sdk"),
            ],
            exclude: ["Snapshots"], swiftSettings: strict),
    ],
    cxxLanguageStandard: .cxx17
)
