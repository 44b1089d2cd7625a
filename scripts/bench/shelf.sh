#!/usr/bin/env bash
# The shelf the scale benchmarks serve (scripts/bench/bench-serve-scale.sh, bench-contention.sh --scale):
# SNIPPETS snippets of real-length text with synthetic vectors under the local model's name,
# grouped by book and chapter as embeddings are, the first books around the sample corpus's
# paragraphs (kb-bench scale-index), a bot `scale` over them, and USERS users × 10 memories (real
# text, embedded by the model, through `kb memory import`). Kept in .build/bench-scale, per model,
# and reused by later runs. KB_MODEL_DIR picks the model (default all-MiniLM-L6-v2); needs KB,
# BENCH and WORK; exports KB_DB and sets MODEL_NAME.
#
#   ensure_shelf SNIPPETS USERS
ensure_shelf() {
    STORE="$KB_ROOT/.build/bench-scale"
    mkdir -p "$STORE"
    MODEL_NAME="$(basename "${KB_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/all-MiniLM-L6-v2}")"
    # (all-MiniLM-L6-v2 keeps the file name shelves had before they were kept per model)
    local suffix=""
    [ "$MODEL_NAME" = all-MiniLM-L6-v2 ] || suffix="-$MODEL_NAME"
    export KB_DB="$STORE/shelf-$1-users-$2$suffix.sqlite"

    # The first books' themes: the sample corpus's paragraphs (embedded by kb-bench), so that the
    # benchmark's questions, written for that corpus, meet the shelf as questions meet real books.
    python3 - > "$WORK/themes.txt" <<'PY'
import glob, re
for path in sorted(glob.glob("corpus/**/*.md", recursive=True)):
    text = open(path, encoding="utf-8").read()
    if text.startswith("---"):
        text = text.split("---", 2)[2]
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = " ".join(paragraph.split())
        if len(paragraph) >= 60 and not paragraph.startswith("#"):
            print(paragraph)
PY
    SHELF_VECTORS="themes $(sha256sum "$WORK/themes.txt" | cut -c1-16)"

    if [ ! -f "$KB_DB.done" ]; then
        rm -f "$KB_DB" "$KB_DB-wal" "$KB_DB-shm"
        say "Writing a shelf of $1 snippets (real-length text, synthetic vectors)"
        # Words in their real frequencies: the sample corpus (astrology, so the queries' words occur)
        # among the shared Markdown doc sets when present (a shelf is mostly other text).
        # (Without them — a plain clone — the corpus alone; a missing folder must not end the script
        # under pipefail.)
        { cat corpus/*.md corpus/*/*.md
          if [ -d "$KB_ROOT/../shared/notes" ]; then find "$KB_ROOT/../shared/notes" -name '*.md' -exec cat {} + ; fi; } 2>/dev/null \
            | tr -cs "A-Za-z'" ' ' > "$WORK/words.txt"
        "$BENCH" scale-index "$KB_DB" "$1" "$WORK/words.txt" "$MODEL_NAME" "$WORK/themes.txt"
        echo
        "$KB" bot create scale --system-prompt "You answer from the shelf." --source /scale/books --json >/dev/null
        say "Importing $2 users × 10 memories (embedded with the local model)"
        python3 - "$2" > "$WORK/memories.jsonl" <<'PY'
import json, sys, uuid, random
random.seed(7)
facts = ["has Venus in the tenth house and wants a career in music", "is a Scorpio rising who hates surprises",
         "asked about moving to Lisbon last month", "is studying for a PhD in chemistry", "has Saturn returning this year",
         "worries about money and a new mortgage", "prefers short answers", "reads tarot on Sundays", "was born in Kyiv at dawn",
         "keeps a dream journal", "plays the cello in an orchestra", "is learning Arabic calligraphy"]
t = "2026-11-01T00:00:00.000Z"
for u in range(int(sys.argv[1])):
    for m in range(10):
        print(json.dumps({"content": f"User u{u} {facts[(u + m) % len(facts)]} (memory {m}).", "created_at": t, "history": [],
                          "id": str(uuid.UUID(int=random.getrandbits(128), version=4)), "scope": f"user:u{u}", "tags": [],
                          "updated_at": t, "version": 1}))
PY
        start=$SECONDS
        "$KB" memory import "$WORK/memories.jsonl" --json > "$WORK/import.json"
        echo "imported $(python3 -c "import json; print(json.load(open('$WORK/import.json'))['added'])" ) memories in $((SECONDS - start)) s"
        echo "$SHELF_VECTORS" > "$KB_DB.done"
    fi
    if [ "$(cat "$KB_DB.done")" != "$SHELF_VECTORS" ]; then
        # A shelf written by an older kb-bench (other vectors, or other themes): rewritten in place.
        say "Rewriting the shelf's synthetic vectors"
        "$BENCH" scale-vectors "$KB_DB" "$MODEL_NAME" "$WORK/themes.txt"
        echo
        echo "$SHELF_VECTORS" > "$KB_DB.done"
    fi
    # The shelf must search with its model (a spec kb resolves to another model degrades every
    # search to keywords, and the benchmark would measure that).
    local answer
    answer="$("$KB" search "what does a saturn return mean" -k 1 --json 2>&1)"
    if ! printf '%s' "$answer" | python3 -c "import json, sys; r = json.load(sys.stdin); sys.exit(0 if r.get('mode') == 'hybrid' and not r.get('degraded') else 1)"; then
        echo "error: the shelf $KB_DB does not search with $MODEL_NAME: $answer" >&2
        exit 1
    fi
}
