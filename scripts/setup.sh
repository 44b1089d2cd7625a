#!/usr/bin/env bash
# Quick start, step 1: installs what is missing (system packages, the local model), builds kb in
# release mode, ingests the sample corpus and runs a few example searches. Safe to run again; fast when nothing is missing.
#
#   scripts/setup.sh
#
# The index goes to $KB_DB if set, else .kb/corpus.sqlite in this checkout.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"

ensure_swift
ensure_system_packages
bash "$KB_ROOT/scripts/install-model.sh"

say "Building kb (release)"
swift build -c release --product kb 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\]' >&2 || { echo "error: build failed" >&2; exit 1; }
KB="$KB_ROOT/.build/release/kb"

export KB_DB="${KB_DB:-$KB_ROOT/.kb/corpus.sqlite}"
say "Ingesting corpus/ into $KB_DB"
"$KB" ingest --prune --tags-from corpus/tags.yaml corpus

demo() {
    say "kb search $*"
    "$KB" search "$@"
}
demo -k 2 "when does Saturn return"
demo -k 2 --tag area:career "reputation and ambition"
demo -k 2 "morning star"
demo -k 1 --kind pdf "how do I find the day a transit becomes exact"   # a page citation from corpus/books
"$KB" status

cat >&2 <<MSG

kb is built at $KB and the sample index is at $KB_DB.
Try:  KB_DB=$KB_DB $KB search "your question"
MSG
