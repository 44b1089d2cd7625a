"""The same question gets the same answer from every entry point: `kb search` (one process, the
quickest answer for one caller), `kb serve`'s POST /v1/search and `kb mcp`'s search tool
(long-running, tuned for many callers) rank one index's snippets identically, with the same
scores, in vector and hybrid mode — the query is embedded in the same precision whatever the
process. The index is made with the local model kb uses by default (multilingual-e5-small, which
scripts/test.sh installs); it is a SQLite file of its own whatever KB_TEST_DB says (the question
is the entry points', not the store's).

    KB_BIN=.build/debug/kb python Tests/Client/same_rankings.py
"""
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parents[2]
KB = str(Path(os.environ.get("KB_BIN", ROOT / ".build/debug/kb")).resolve())
ADMIN = "same-rankings-admin-token"
FAILURES = []

NOTES = [
    "Venus rules love, beauty and money; in the tenth house it favours the arts.",
    "Saturn rules discipline, time and the long climb of a career.",
    "Mars brings energy, courage and quarrels; retrograde it slows plans.",
    "The Moon governs moods, the home and the mother.",
    "Jupiter expands what it touches: luck, travel, higher learning.",
    "Mercury in Gemini makes quick talkers and restless minds.",
    "Bread needs flour, water, salt and time; sourdough needs a starter too.",
    "A telescope with a 200 mm mirror shows the rings of Saturn clearly.",
    "Pluto transforms what it touches, slowly and thoroughly.",
    "The rent is due on the first of the month; late payment costs a fee.",
    "Сатурн відповідає за дисципліну, час і довгу кар'єру.",
    "Венера править коханням, красою та грошима.",
    "المريخ كوكب أحمر يرصده الفلكيون في الليالي الصافية.",
    "الخبز العربي يحتاج إلى الدقيق والماء والملح والخميرة.",
]
QUERIES = ["discipline and career", "what does Venus rule", "how do I bake bread", "rings of a planet",
           "кар'єра і дисципліна", "كوكب أحمر", "when is the rent due", "transformation"]


def check(name, condition, detail=""):
    print(("  ok   " if condition else "  FAIL ") + name + ("" if condition else f" — {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def ranking(answer):
    """(snippet id, score to 5 places) of each hit, best first."""
    return [(hit["snippetID"], round(hit["score"], 5)) for hit in answer["hits"]]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(db, query, mode):
    result = subprocess.run([KB, "search", "--db", db, "--json", "--mode", mode, query], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"kb search failed: {result.stderr}")
    return ranking(json.loads(result.stdout))


def http(db, work):
    port = free_port()
    process = subprocess.Popen([KB, "serve", "--db", db, "--port", str(port), "--token", ADMIN], cwd=work,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except Exception:
                if process.poll() is not None:
                    raise SystemExit("kb serve did not start: " + process.stderr.read())
                time.sleep(0.1)
        answers = {}
        for query in QUERIES:
            for mode in ("vector", "hybrid"):
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/v1/search", data=json.dumps({"query": query, "mode": mode}).encode(),
                    headers={"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"})
                with urllib.request.urlopen(request, timeout=120) as response:
                    answers[(query, mode)] = ranking(json.loads(response.read()))
        return answers
    finally:
        process.terminate()
        process.wait(timeout=20)


async def mcp(db):
    answers = {}
    async with stdio_client(StdioServerParameters(command=KB, args=["mcp", "--db", db])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for query in QUERIES:
                for mode in ("vector", "hybrid"):
                    result = await session.call_tool("search", {"query": query, "mode": mode})
                    if result.is_error:
                        raise SystemExit(f"the MCP search failed: {result.content[0].text}")
                    answers[(query, mode)] = ranking(json.loads(result.content[0].text))
    return answers


def main():
    work = Path(tempfile.mkdtemp(prefix="kb-rankings-"))
    notes = work / "notes"
    notes.mkdir()
    for index, text in enumerate(NOTES):
        (notes / f"note-{index:02}.md").write_text(text + "\n")
    db = str(work / "kb.sqlite")
    ingest = subprocess.run([KB, "ingest", "--db", db, str(notes)], capture_output=True, text=True)
    if ingest.returncode != 0:
        raise SystemExit(f"kb ingest failed: {ingest.stderr}")
    served = http(db, work)
    tools = asyncio.run(mcp(db))
    for query in QUERIES:
        for mode in ("vector", "hybrid"):
            line = cli(db, query, mode)
            check(f"{mode} '{query}': kb search and POST /v1/search rank alike", line == served[(query, mode)],
                  f"{line[:3]} vs {served[(query, mode)][:3]}")
            check(f"{mode} '{query}': kb search and the MCP search tool rank alike", line == tools[(query, mode)],
                  f"{line[:3]} vs {tools[(query, mode)][:3]}")
            check(f"{mode} '{query}': hits", len(line) > 0)
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} checks failed")
        sys.exit(1)
    print("all ranking checks passed")


if __name__ == "__main__":
    main()
