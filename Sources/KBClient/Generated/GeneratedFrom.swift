// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (`GET /openapi.json`).
public enum GeneratedFrom {
    public static let documentSHA256 = "e2879f9e71fb543b5905a15acd864cc347f6c0b1c87d795ee5273cf58603d041"
}
