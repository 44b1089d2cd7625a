#!/usr/bin/env bash
# Regenerates the right-to-left and Ukrainian PDF fixtures (Tests/KBIngestTests/Fixtures/pdf/*-writer.pdf,
# arabic-reportlab.pdf) with LibreOffice and reportlab: scripts/make-rtl-pdf-fixtures.py. Not part of CI.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_system_packages libreoffice-writer-nogui fonts-noto-core poppler-utils
VENV="$KB_ROOT/.venv-fixtures"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import reportlab, arabic_reshaper, bidi" 2>/dev/null || "$VENV/bin/pip" install --quiet reportlab arabic-reshaper python-bidi
"$VENV/bin/python" scripts/make-rtl-pdf-fixtures.py "$@"
