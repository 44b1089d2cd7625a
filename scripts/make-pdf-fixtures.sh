#!/usr/bin/env bash
# Regenerates the committed PDF fixtures (Tests/KBIngestTests/Fixtures/pdf) and the sample
# corpus booklet (corpus/books) with scripts/make-pdf-fixtures.py. Not part of CI.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_system_packages fonts-dejavu-core
VENV="$KB_ROOT/.venv-fixtures"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import fpdf, uharfbuzz" 2>/dev/null || "$VENV/bin/pip" install --quiet fpdf2 uharfbuzz
"$VENV/bin/python" scripts/make-pdf-fixtures.py "$@"
