# Shared by kb's scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail

KB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KB_SYSTEM_PACKAGES=(libsqlite3-dev libpoppler-cpp-dev libopenblas-dev libcurl4-openssl-dev pkg-config
    libtesseract-dev libleptonica-dev tesseract-ocr-eng tesseract-ocr-ukr tesseract-ocr-rus tesseract-ocr-ara tesseract-ocr-osd)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Installs the Debian packages kb builds against, if any is missing. Idempotent and quick
# when everything is there.
ensure_system_packages() {
    local missing=()
    for pkg in "${KB_SYSTEM_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "Installing system packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Builds the release kb and kb-bench for a benchmark and sets KB and BENCH to them.
build_release_tools() {
    say "Building kb and kb-bench (release)"
    swift build -c release --product kb >/dev/null
    swift build -c release --product kb-bench >/dev/null
    KB="$KB_ROOT/.build/release/kb"
    BENCH="$KB_ROOT/.build/release/kb-bench"
}

ensure_swift() {
    command -v swift >/dev/null || { echo "error: swift is not on PATH. Install the Swift toolchain (swift.org) first." >&2; exit 1; }
}

# For the scripts that drive a live `kb serve`: builds the release kb (or takes the binary in
# KB_BIN, to measure a baseline build) and indexes the sample corpus (local model) with the bot
# `astro` into a throwaway folder, removed on exit with the server. Sets KB, WORK, PORT, TOKEN,
# URL and exports KB_DB; `$1` names the index file.
prepare_sample_service() {
    if [ -n "${KB_BIN:-}" ]; then
        KB="$KB_BIN"
        say "Using $KB"
    else
        say "Building kb (release)"
        swift build -c release --product kb >/dev/null
        KB="$KB_ROOT/.build/release/kb"
    fi
    WORK="$(mktemp -d)"
    PORT=$(( 20000 + RANDOM % 20000 ))
    TOKEN="$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    URL="http://127.0.0.1:$PORT"
    SERVER=""
    trap 'stop_sample_server; rm -rf "$WORK"' EXIT
    export KB_DB="$WORK/$1.sqlite"
    say "Indexing corpus/ with the local model"
    "$KB" ingest corpus --tags-from corpus/tags.yaml >/dev/null
    "$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
}

# Starts `kb serve` on the prepared index (token, the sample reports) and waits until it answers;
# its log is $WORK/serve.log, its pid $SERVER.
start_sample_server() {
    "$KB" serve --port "$PORT" --token "$TOKEN" --reports corpus/reports 2>"$WORK/serve.log" &
    SERVER=$!
    for _ in $(seq 300); do curl -sf "$URL/healthz" >/dev/null && return 0; sleep 0.1; done
    cat "$WORK/serve.log" >&2
    echo "error: kb serve did not start" >&2
    exit 1
}

stop_sample_server() {
    [ -n "${SERVER:-}" ] || return 0
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
}
