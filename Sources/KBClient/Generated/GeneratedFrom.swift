// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from.
enum GeneratedFrom {
    static let documentSHA256 = "e3bf5f0c6362c5618fb452f12eefb8f43c12f303baebdfc501d9407febeb2285"
}
