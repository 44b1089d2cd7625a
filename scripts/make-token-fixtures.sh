#!/usr/bin/env bash
# Writes Tests/KBContextTests/Fixtures/token-counts.json: reference cl100k/o200k token counts
# for the token counter's tests (bpe-openai from PyPI, in .venv-fixtures).
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
[ -x .venv-fixtures/bin/python ] || python3 -m venv .venv-fixtures
.venv-fixtures/bin/pip install --quiet --disable-pip-version-check "bpe-openai==0.1.4"
.venv-fixtures/bin/python scripts/make_token_fixtures.py
