// swift-tools-version:6.1
// The tool scripts/generate-client.sh runs: Apple's swift-openapi-generator at the version
// KBClient's committed sources were generated with. Built only by that script (into
// .build/openapi-generator), never by kb's own build, CI or an app that uses KBClient.
import PackageDescription

let package = Package(
    name: "openapi-generator",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3")],
    targets: []
)
