#!/usr/bin/env bash
# Regenerates Tests/KBEmbedTests/Fixtures/tiny-xlmr (the configuration and SentencePiece Unigram
# tokenizer of a tiny XLM-R-style sentence model, and its tensor shapes; the weights are not
# written: the tests generate them, TinyXLMR.swift) and tiny-xlmr-reference.json with scripts/make_xlmr_fixture.py,
# in a throwaway venv: transformers, tokenizers, sentencepiece, protobuf from PyPI, and torch
# (CPU). The outputs are committed; CI does not run this.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_system_packages python3-venv
VENV="$(mktemp -d)/venv"
trap 'rm -rf "$(dirname "$VENV")"' EXIT
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check torch transformers tokenizers sentencepiece protobuf safetensors
"$VENV/bin/python" scripts/make_xlmr_fixture.py
