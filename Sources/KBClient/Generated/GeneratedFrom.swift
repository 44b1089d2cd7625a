// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (`GET /openapi.json`).
public enum GeneratedFrom {
    public static let documentSHA256 = "ebdc692787e814bb0b9b0894fb8cf5a18d0a6a86ba1b1ae5a22f8aab5b04cf20"
}
