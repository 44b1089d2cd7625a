#!/usr/bin/env python3
"""Reference token counts for kb's token counter tests.

Counts every sample with OpenAI's cl100k_base and o200k_base encodings (the `bpe-openai` package
from PyPI, which carries both vocabularies, so nothing is downloaded at run time) and writes
Tests/KBContextTests/Fixtures/token-counts.json. Samples: the paragraphs of corpus/ (English),
and the Russian, Arabic and mixed texts in token_samples.txt (written for kb).

    scripts/make-token-fixtures.sh
"""
import json
import pathlib
import sys

import bpe_openai

root = pathlib.Path(__file__).resolve().parent.parent
encodings = {name: bpe_openai.get_encoding(name) for name in ("cl100k_base", "o200k_base")}

samples = []
for path in sorted((root / "corpus").rglob("*.md")):
    text = path.read_text(encoding="utf-8")
    for paragraph in text.split("\n\n"):
        if paragraph.strip():
            samples.append({"language": "en", "source": str(path.relative_to(root)), "text": paragraph})
    samples.append({"language": "en", "source": str(path.relative_to(root)), "text": text})

current = None
for line in (root / "scripts" / "token_samples.txt").read_text(encoding="utf-8").split("\n"):
    if line.startswith("## "):
        current = {"language": line[3:].strip(), "source": "scripts/token_samples.txt", "lines": []}
        samples.append(current)
    elif current is not None:
        current["lines"].append(line)
for sample in samples:
    if "lines" in sample:
        sample["text"] = "\n".join(sample.pop("lines")).strip("\n")

for sample in samples:
    sample["counts"] = {name: len(encoding.encode(sample["text"])) for name, encoding in encodings.items()}

out = root / "Tests" / "KBContextTests" / "Fixtures" / "token-counts.json"
out.write_text(json.dumps({"encodings": sorted(encodings), "samples": samples}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
print(f"{len(samples)} samples -> {out.relative_to(root)}", file=sys.stderr)
