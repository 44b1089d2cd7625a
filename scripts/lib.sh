# Shared by kb's scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail

KB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KB_SYSTEM_PACKAGES=(libsqlite3-dev libpoppler-cpp-dev libopenblas-dev libcurl4-openssl-dev pkg-config)

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

ensure_swift() {
    command -v swift >/dev/null || { echo "error: swift is not on PATH. Install the Swift toolchain (swift.org) first." >&2; exit 1; }
}
