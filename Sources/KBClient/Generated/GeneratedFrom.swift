// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from.
enum GeneratedFrom {
    static let documentSHA256 = "9a377809b4b3339be65fa12d0ba82211a05aa39472500c44a53ec8d3224d72ba"
}
