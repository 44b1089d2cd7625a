#!/usr/bin/env bash
# Regenerates KBClient (Sources/KBClient) from kb's own OpenAPI document:
#   1. Sources/KBClient/openapi.json ← GET /openapi.json of a `kb serve` with the default limits
#      (on a throwaway empty index; the document does not depend on the index or the model);
#   2. Sources/KBClient/Generated/ ← Apple's swift-openapi-generator (the version pinned in
#      scripts/openapi-generator/Package.swift, built into .build/openapi-generator) over it, with
#      Sources/KBClient/openapi-generator-config.yaml;
#   3. Sources/KBClient/Generated/GeneratedFrom.swift ← the document's SHA-256.
# KBClientTests fail when the served document, the committed one and the generated sources
# disagree, and say to run this. The generated sources are committed so that neither CI nor an
# app builds the generator (docs/swift.md, "How KBClient is made").
#
#   scripts/generate-client.sh          (KB_BIN runs a kb built elsewhere)
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
TARGET=Sources/KBClient

if [ -n "${KB_BIN:-}" ]; then
    KB="$KB_BIN"
else
    say "Building kb"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
new_service_workdir openapi
say "Reading GET /openapi.json from kb serve"
KB_DB="$WORK/empty.sqlite" "$KB" serve --port "$PORT" --token "$TOKEN" 2>"$WORK/serve.log" &
SERVER=$!
for _ in $(seq 600); do curl -sf "$URL/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -H "Authorization: Bearer $TOKEN" "$URL/openapi.json" -o "$WORK/openapi.json" \
    || { cat "$WORK/serve.log" >&2; echo "error: kb serve did not answer GET /openapi.json" >&2; exit 1; }
stop_sample_server
cp "$WORK/openapi.json" "$TARGET/openapi.json"

say "Building swift-openapi-generator (release, .build/openapi-generator)"
swift build -c release --package-path scripts/openapi-generator --scratch-path .build/openapi-generator \
    --product swift-openapi-generator >/dev/null
GENERATOR="$KB_ROOT/.build/openapi-generator/release/swift-openapi-generator"

say "Generating Sources/KBClient/Generated"
mkdir -p "$WORK/out"
"$GENERATOR" generate --config "$TARGET/openapi-generator-config.yaml" --output-directory "$WORK/out" \
    "$TARGET/openapi.json" 2> "$WORK/generator.log" >/dev/null \
    || { cat "$WORK/generator.log" >&2; exit 1; }
# What the generator could not express, as it said (docs/swift.md lists it).
grep -oE '(warning|error): .*' "$WORK/generator.log" >&2 || true
# Two adjustments so that the sources build without warnings on Swift 6.3 (kb's build treats
# warnings as failures): the generator imports every module `public` in every file and asks
# Swift ≥ 6.4 to ignore the unused ones (@diagnose); here a plain import is public already. And
# a deprecated property (SourceText's start and end) gets @available(*, deprecated), which its own
# initializer and decoder then use; the property's comment says it is an old name.
for file in "$WORK"/out/*.swift; do
    sed -E -e 's/^((@_spi\(Generated\) |@preconcurrency )*)public import /\1import /' \
           -e '/^[[:space:]]*@available\(\*, deprecated\)$/d' "$file" > "$file.new"
    mv "$file.new" "$file"
done
rm -rf "$TARGET/Generated"
mkdir -p "$TARGET/Generated"
cp "$WORK"/out/*.swift "$TARGET/Generated/"
SHA=$(sha256sum "$TARGET/openapi.json" | cut -d' ' -f1)
cat > "$TARGET/Generated/GeneratedFrom.swift" <<SWIFT
// Written by scripts/generate-client.sh, do not modify.
/// The SHA-256 of the document (Sources/KBClient/openapi.json) these sources were generated from:
/// an app can compare it with that of the document its kb serves (\`GET /openapi.json\`).
public enum GeneratedFrom {
    public static let documentSHA256 = "$SHA"
}
SWIFT
echo "KBClient generated from openapi.json ($SHA): $(cat "$TARGET"/Generated/*.swift | wc -l) lines in $TARGET/Generated"
