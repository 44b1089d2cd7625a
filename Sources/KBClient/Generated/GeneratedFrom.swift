// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (`GET /openapi.json`).
public enum GeneratedFrom {
    public static let documentSHA256 = "e3bf5f0c6362c5618fb452f12eefb8f43c12f303baebdfc501d9407febeb2285"
}
