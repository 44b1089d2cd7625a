#!/usr/bin/env python3
"""Memories over time, measured: evaluation/memory-time/conversations.json through the kb CLI.

Each user's turns go to `kb memory extract --apply` one at a time (with their times), into a
fresh index; then each question is asked with `kb memory search` (and `--as-of` for as-of
questions). Prints hit@1 for current facts and for as-of questions, the share of current-fact
questions with a stale value among the first 3, and the named-time questions that pass; writes
the same as JSON with every miss.

    scripts/eval/eval_memory_time.py [--legacy] KB_BINARY [OUT_DIR]

--legacy measures a kb from before valid time (before issue 41): turns go without their times
and as-of questions without --as-of, which such a kb does not take.
"""
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def when(spec, now):
    noon = now.replace(hour=12, minute=0, second=0, microsecond=0)
    if spec == "last-month":
        first = noon.replace(day=1)
        return (first - dt.timedelta(days=1)).replace(day=15)
    assert spec.startswith("-") and spec.endswith("d"), spec
    return noon - dt.timedelta(days=int(spec[1:-1]))


def iso(time):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ")


def run(kb, db, *args, stdin=None):
    result = subprocess.run([kb, *args, "--db", db, "--json"], input=stdin, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"kb {' '.join(args)} failed: {result.stderr.strip()}")
    return json.loads(result.stdout)


def main():
    args = sys.argv[1:]
    legacy = bool(args) and args[0] == "--legacy"
    args = args[1:] if legacy else args
    if not args:
        raise SystemExit(__doc__)
    kb = args[0]
    out = args[1] if len(args) > 1 else os.path.join(ROOT, ".build", "eval-memory-time")
    os.makedirs(out, exist_ok=True)
    data = json.load(open(os.path.join(ROOT, "evaluation", "memory-time", "conversations.json"), encoding="utf-8"))
    now = dt.datetime.now(dt.timezone.utc)
    db = os.path.join(tempfile.mkdtemp(prefix="kb-memory-time-"), "kb.sqlite")
    scores = {"now": [], "asof": [], "named": []}
    stale, misses = [], []
    for conversation in data["conversations"]:
        user = conversation["user"]
        for turn in conversation["turns"]:
            turns = [{"role": "user", "content": turn["text"]}]
            if not legacy:
                turns[0]["time"] = iso(when(turn["when"], now))
            run(kb, db, "memory", "extract", "-", "--user", user, "--apply", stdin=json.dumps(turns))
        for question in conversation["questions"]:
            args = ["memory", "search", "--scope", f"user:{user}", "-k", "5"]
            if question["type"] == "asof" and not legacy:
                args += ["--as-of", iso(now - dt.timedelta(days=question["at"]))]
            hits = [h["memory"]["content"] for h in run(kb, db, *args, question["q"])["hits"]]
            if question["type"] == "named":
                ok = all(any(e.lower() in h.lower() for h in hits) for e in question["expect"]) and \
                    not any(o.lower() in h.lower() for o in question.get("outside", []) for h in hits)
            else:
                ok = bool(hits) and question["expect"].lower() in hits[0].lower()
                if question["type"] == "now" and question.get("stale"):
                    stale.append(any(question["stale"].lower() in h.lower() for h in hits[:3]))
            scores[question["type"]].append(ok)
            if not ok:
                misses.append({"user": user, **question, "hits": hits})
    report = {
        "hit@1 now": sum(scores["now"]) / len(scores["now"]),
        "hit@1 as of": sum(scores["asof"]) / len(scores["asof"]),
        "named-time questions passed": sum(scores["named"]) / len(scores["named"]),
        "stale among first 3 (now)": sum(stale) / len(stale),
        "questions": {k: len(v) for k, v in scores.items()},
        "misses": misses,
    }
    with open(os.path.join(out, "report.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, ensure_ascii=False, indent=1)
    print(f"memory-time: {sum(map(len, scores.values()))} questions over {len(data['conversations'])} conversations")
    for key in ["hit@1 now", "hit@1 as of", "named-time questions passed", "stale among first 3 (now)"]:
        n = len(stale) if key.startswith("stale") else len(scores[{"hit@1 now": "now", "hit@1 as of": "asof"}.get(key, "named")])
        print(f"  {key}: {report[key]:.3f} (of {n})")
    for miss in misses:
        print(f"  miss: {miss['user']} [{miss['type']}] {miss['q']} → expected {miss['expect']}, got {miss['hits'][:3]}")
    print(f"report: {os.path.join(out, 'report.json')}")


if __name__ == "__main__":
    main()
