// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (`GET /openapi.json`).
public enum GeneratedFrom {
    public static let documentSHA256 = "e54c1e0a4835257588c6af46a6a52bfe6770790d0ca8f6e4cb886bb91b796e44"
}
