#!/usr/bin/env python3
"""Builds a BEIR-layout retrieval set from LoCoMo (Maharana et al., ACL 2024) at run time.

    python3 scripts/eval/locomo_beir.py LOCOMO_JSON OUT_FOLDER

LOCOMO_JSON is the benchmark's `locomo10.json` (or part of it: a list of samples). Nothing of it
is committed into kb (CC BY-NC 4.0, used for evaluation only). Writes:

- corpus.jsonl: one document per turn, `_id` "<sample>/<dia_id>", `title` the session's date,
  `text` "Speaker: text" (with the shared photo's caption), and kb's transcript fields
  `conversation` (the sample id), `position` (the turn's place in the whole conversation),
  `speaker` and `time` (the session's date and time, ISO 8601);
- queries.jsonl: each question of categories 1-4 (5, adversarial, has no evidence), `_id`
  "<sample>/q<n>", with `conversation` (kb searches that conversation only) and `category`;
- qrels/test.tsv: each question's evidence turns as relevant.

Prints one line per conversation and a summary.
"""
import json
import os
import re
import sys
from datetime import datetime

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def session_time(text):
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'."""
    match = re.match(r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", text, re.I)
    if not match:
        raise ValueError(f"unrecognised session date {text!r}")
    hour, minute, half, day, month, year = match.groups()
    stamp = datetime.strptime(f"{day} {month} {year} {int(hour) % 12 + (12 if half.lower() == 'pm' else 0)}:{minute}",
                              "%d %B %Y %H:%M")
    return stamp.isoformat()


def sessions(conversation):
    numbers = sorted(int(key.split("_")[1]) for key in conversation
                     if re.fullmatch(r"session_\d+", key) and conversation[key])
    for number in numbers:
        yield number, conversation[f"session_{number}_date_time"], conversation[f"session_{number}"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    source, out = sys.argv[1], sys.argv[2]
    try:
        with open(source, encoding="utf-8") as handle:
            samples = json.load(handle)
    except (OSError, ValueError) as error:
        sys.exit(f"Cannot read LoCoMo from {source}: {error}")
    if isinstance(samples, dict):
        samples = [samples]
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    documents = queries = judged = 0
    with open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as corpus, \
            open(os.path.join(out, "queries.jsonl"), "w", encoding="utf-8") as query_file, \
            open(os.path.join(out, "qrels", "test.tsv"), "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        for sample in samples:
            name = sample["sample_id"]
            turns = set()
            position = 0
            for _, date, session in sessions(sample["conversation"]):
                time = session_time(date)
                for turn in session:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [shares a photo: {turn['blip_caption']}]"
                    document = {"_id": f"{name}/{turn['dia_id']}", "title": date, "text": text,
                                "conversation": name, "position": position, "speaker": turn["speaker"], "time": time}
                    corpus.write(json.dumps(document, ensure_ascii=False) + "\n")
                    turns.add(turn["dia_id"])
                    position += 1
            documents += position
            asked = 0
            for index, qa in enumerate(sample["qa"]):
                if qa.get("category") not in CATEGORIES:
                    continue
                # A few evidence lists join ids with ";" or spaces; ids that name no turn are dropped.
                evidence = [e for item in qa.get("evidence", []) for e in re.split(r"[;,\s]+", item) if e in turns]
                if not evidence:
                    continue
                query_id = f"{name}/q{index}"
                query_file.write(json.dumps({"_id": query_id, "text": qa["question"], "conversation": name,
                                             "category": CATEGORIES[qa["category"]]}, ensure_ascii=False) + "\n")
                for turn in sorted(set(evidence)):
                    qrels.write(f"{query_id}\t{name}/{turn}\t1\n")
                    judged += 1
                asked += 1
            queries += asked
            print(f"{name}: {position} turns, {asked} questions")
    print(f"LoCoMo in BEIR layout: {documents} turns, {queries} questions, {judged} judgements -> {out}")


if __name__ == "__main__":
    main()
