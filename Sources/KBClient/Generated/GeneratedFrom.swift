// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (`GET /openapi.json`).
public enum GeneratedFrom {
    public static let documentSHA256 = "213e78e01d6d2f0934b6ea2d542bac267f7e32a979fd70f05f70235949cda96d"
}
