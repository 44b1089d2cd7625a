// swift-tools-version:6.1
// A Swift app that uses kb as a library: one `.package` line, no optional traits (no PostgreSQL,
// no OCR, no server), so it builds against SQLite, OpenBLAS, poppler and the local model only.
// `swift run --package-path Examples/embed-kb` (scripts/test.sh builds and runs it).
import PackageDescription

let package = Package(
    name: "embed-kb",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "kb", path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(name: "embed-kb", dependencies: [.product(name: "KBKit", package: "kb")]),
    ]
)
