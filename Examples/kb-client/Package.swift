// swift-tools-version:6.1
// A Swift app that talks to a running `kb serve` through KBClient only: no KBKit, none of kb's C
// libraries (OpenBLAS, poppler, Tesseract, oneDNN, libxml2) are built or linked.
//   KB_URL=http://127.0.0.1:8080 KB_API_TOKEN=… swift run --package-path Examples/kb-client kb-client context "What does Venus rule?"
// (scripts/test.sh builds it with those libraries' headers hidden and runs it against kb serve.)
import PackageDescription

let package = Package(
    name: "kb-client",
    platforms: [.macOS(.v14)],
    // kb's default traits, as a `.package(url:from:)` line gives them: they change nothing that
    // KBClient builds (its graph holds none of the traits' targets), and scripts/test.sh's build
    // of KBClient is then the same as this package's, so the example reuses it.
    dependencies: [
        .package(name: "kb", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "kb-client", dependencies: [.product(name: "KBClient", package: "kb")]),
    ]
)
