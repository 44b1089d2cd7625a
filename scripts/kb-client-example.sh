#!/usr/bin/env bash
# Examples/kb-client, the app that talks to kb serve through KBClient only:
#   1. builds it where kb's C libraries cannot be found — the headers and pkg-config files of
#      OpenBLAS, poppler, Tesseract, Leptonica, oneDNN and libxml2 hidden (an empty file system
#      mounted over each, in a mount namespace of this build alone; needs unshare, as root in CI),
#      and checks that the program links none of them;
#   2. runs its three commands (context, a streamed chat, remember) against a kb serve on the
#      planets of the sample corpus, with a stub upstream chat model (scripts/stub_chat_model.py).
# scripts/test.sh runs it; KB_BIN names the kb to serve with (default .build/release/kb).
#
#   scripts/kb-client-example.sh
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
KB="${KB_BIN:-$KB_BIN_DIR/kb}"
[ -x "$KB" ] || { echo "error: $KB is not built; run swift build --product kb first (or set KB_BIN)." >&2; exit 1; }

HIDDEN_DIRS=(/usr/include/poppler /usr/include/tesseract /usr/include/leptonica /usr/include/libxml2 /usr/include/oneapi
             /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/aarch64-linux-gnu/openblas-pthread)
# Their pkg-config files (the others, zlib's for one, stay).
HIDDEN_PKGCONFIG=(blas lapack openblas poppler poppler-cpp tesseract lept libxml-2.0 dnnl)
HIDDEN_FILES=(/usr/include/dnnl*.h /usr/include/dnnl*.hpp /usr/include/cblas*.h /usr/include/f77blas.h /usr/include/openblas_config.h
              /usr/include/x86_64-linux-gnu/cblas*.h /usr/include/x86_64-linux-gnu/f77blas.h /usr/include/x86_64-linux-gnu/openblas_config.h)
if unshare -m true 2>/dev/null; then
    say "Building Examples/kb-client with kb's C libraries hidden"
    hide=""
    # The files first (a symbolic link among them points into a folder hidden next, and so leads
    # nowhere once it is), then the folders.
    for file in "${HIDDEN_FILES[@]}"; do [ -f "$file" ] && [ ! -L "$file" ] && hide+="mount --bind /dev/null '$file'; "; done
    for dir in "${HIDDEN_DIRS[@]}"; do [ -d "$dir" ] && hide+="mount -t tmpfs none '$dir'; "; done
    # A pkg-config folder is replaced by a copy without those libraries' files.
    PKGCONFIG_COPIES="$(mktemp -d)"
    trap 'rm -rf "$PKGCONFIG_COPIES"' EXIT
    for dir in /usr/lib/x86_64-linux-gnu/pkgconfig /usr/lib/aarch64-linux-gnu/pkgconfig /usr/share/pkgconfig /usr/lib/pkgconfig; do
        [ -d "$dir" ] || continue
        copy="$PKGCONFIG_COPIES/${dir//\//_}"
        mkdir -p "$copy"
        cp -a "$dir/." "$copy/"
        for name in "${HIDDEN_PKGCONFIG[@]}"; do rm -f "$copy/$name.pc"; done
        hide+="mount --bind '$copy' '$dir'; "
    done
    unshare -m bash -ec "mount --make-rprivate /; $hide
        if [ -e /usr/include/poppler/cpp/poppler-document.h ] || [ -s /usr/include/cblas.h ] || [ -s /usr/include/x86_64-linux-gnu/cblas.h ] \
           || [ -s /usr/include/dnnl.h ] || [ -e /usr/include/tesseract/capi.h ] || pkg-config --exists openblas 2>/dev/null; then
            echo 'error: the C libraries are still visible' >&2; exit 1; fi
        echo 'hidden: the headers and pkg-config files of OpenBLAS, poppler, Tesseract, Leptonica, oneDNN and libxml2'
        . scripts/lib.sh; build_example kb-client"
else
    # Without a mount namespace (an unprivileged container), the build still needs none of them:
    # SwiftPM plans only KBClient's targets, which a check of the package description shows.
    say "Building Examples/kb-client (unshare is not allowed here: the C libraries stay visible)"
    build_example kb-client
fi
CLIENT="$(examples_build_path)/$KB_CONFIGURATION/kb-client"
if ldd "$CLIENT" | grep -iE 'poppler|openblas|tesseract|lept|dnnl|xml2'; then
    echo "error: kb-client links one of kb's C libraries (above)" >&2
    exit 1
fi
echo "kb-client links none of kb's C libraries"

say "kb-client against kb serve (the planets, a stub chat model)"
new_service_workdir kb-client
export KB_DB="$WORK/index.sqlite"
"$KB" ingest corpus/planets >/dev/null
"$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source "$KB_ROOT/corpus/planets" --json >/dev/null
STUB_PORT=$(( PORT + 1 ))
python3 scripts/stub_chat_model.py "$STUB_PORT" --chunks 5 &
STUB=$!
trap 'kill $STUB 2>/dev/null; stop_sample_server; rm -rf "$WORK"' EXIT
KB_SERVE_ARGS="--llm openai:stub --llm-url http://127.0.0.1:$STUB_PORT/v1" start_sample_server
export KB_URL="$URL" KB_API_TOKEN="$TOKEN"
failures=0
expect() {   # NAME PATTERN OUTPUT
    if grep -qE "$2" <<<"$3"; then echo "  ok   $1"; else echo "  FAIL $1 — got: $3"; failures=$((failures + 1)); fi
}
context=$("$CLIENT" context "What does Venus rule?" astro ada 2>&1) || true
expect "context: the context and its citations" '^\[1\] Venus' "$context"
chat=$("$CLIENT" chat astro "What does Venus in the tenth house favour?" ada 2>&1) || true
expect "chat: the streamed answer" '^w0 w1 w2 w3 w4' "$chat"
expect "chat: its citations" '^\[1\] ' "$chat"
remembered=$("$CLIENT" remember user:ada "Ada prefers tea to coffee." 2>&1) || true
expect "remember: a new memory" '^remembered: [0-9a-f-]+ \(user:ada\)$' "$remembered"
again=$("$CLIENT" remember user:ada "Ada prefers tea to coffee." 2>&1) || true
expect "remember: the same memory again is known" '^already known: ' "$again"
refused=$(KB_API_TOKEN=not-the-token-0123456789 "$CLIENT" context "Venus" 2>&1) && refused="exit 0: $refused" || true
expect "a wrong token: kb's 401 and its message" 'kb serve answered 401 unauthorized: Send the API token' "$refused"
[ "$failures" -eq 0 ] || { echo "error: $failures kb-client check(s) failed" >&2; exit 1; }
