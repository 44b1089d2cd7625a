#!/usr/bin/env bash
# What kb adds to a chat completion's latency over calling the upstream model directly: the release
# build with the sample corpus (local model) and a bot over it, a stub upstream model on loopback
# (scripts/stub_chat_model.py, answering at once: 20 chunks when streamed), and the same distinct
# user turns sent straight to the stub and through kb (scripts/bench/bench_chat.py) at 1 and 32
# connections. Prints p50/p99 of the whole answer and of a streamed answer's first content chunk,
# direct and through kb, and the difference; writes them to bench-results/chat.json.
#
#   scripts/bench/bench-chat.sh [SECONDS_PER_RUN]      (default 10; KB_BIN chooses the binary)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
bash scripts/install-model.sh
DURATION="${1:-10}"

prepare_sample_service chat
STUB_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 scripts/stub_chat_model.py "$STUB_PORT" &
STUB=$!
trap 'kill "$STUB" 2>/dev/null || true; stop_sample_server; rm -rf "$WORK"' EXIT
KB_SERVE_ARGS="${KB_SERVE_ARGS:-} --llm openai:stub --llm-url http://127.0.0.1:$STUB_PORT/v1 --no-request-log"
start_sample_server
python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl 1200 > "$WORK/queries.txt"

mkdir -p bench-results
say "Chat completions: straight to the stub model vs through kb ($DURATION s per run)"
python3 scripts/bench/bench_chat.py "$URL" "$TOKEN" "http://127.0.0.1:$STUB_PORT/v1" "$WORK/queries.txt" "$DURATION" bench-results/chat.json
echo "bench-results/chat.json"
