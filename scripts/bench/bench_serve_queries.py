#!/usr/bin/env python3
"""Distinct, realistic user turns for scripts/bench/bench-serve.sh: the project's own evaluation queries
and templated questions an astrology bot's users ask, deduplicated and shuffled with a fixed seed.

    python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl COUNT > queries.txt
"""
import json
import random
import sys

queries_file, count = sys.argv[1], int(sys.argv[2])
seen, queries = set(), []


def add(text):
    text = " ".join(text.split())
    if text and text.lower() not in seen:
        seen.add(text.lower())
        queries.append(text)


for line in open(queries_file, encoding="utf-8"):
    if line.strip():
        add(json.loads(line)["text"])

planets = ["the Sun", "the Moon", "Mercury", "Venus", "Mars", "Jupiter", "Saturn", "Uranus", "Neptune", "Pluto"]
houses = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth"]
aspects = ["square", "opposite", "conjunct", "trine", "sextile"]
areas = ["my career", "my marriage", "money this year", "my health", "moving house", "my studies", "my relationship with my mother",
         "a new job offer", "starting a business", "my kids", "a long trip abroad", "my creative work"]
openers = ["what does {s} mean for {a}", "how will {s} affect {a}", "is {s} bad for {a}", "should I worry about {s} and {a}",
           "can you explain {s} in terms of {a}", "what happens to {a} with {s}", "{s} and {a}, what should I expect",
           "tell me about {s}", "why do people say {s} is hard", "when does {s} end"]
subjects = [f"{p} in my {h} house" for p in planets for h in houses]
subjects += [f"{p} {a} my {q}" for p in planets for a in aspects for q in ["Sun", "Moon", "Venus", "Mars", "Ascendant"] if p != q]
subjects += [f"{p} transiting my {h} house" for p in planets[3:] for h in houses]
subjects += ["my Saturn return", "a Mercury retrograde", "an eclipse on my Moon", "my Jupiter return", "a stellium in my seventh house"]

rng = random.Random(13)
while len(queries) < count * 3:
    template = rng.choice(openers)
    add(template.format(s=rng.choice(subjects), a=rng.choice(areas)))
fixed = queries[:54]
rest = queries[54:]
rng.shuffle(rest)
chosen = fixed + rest[: count - len(fixed)]
rng.shuffle(chosen)
for query in chosen:
    print(query)
