"""kb mcp's tools for agents — read_source, grep_sources, sync_sources — driven by the Model Context
Protocol's own Python client (PyPI `mcp`) over stdio, against an index in KB_TEST_DB (a SQLite file
by default, or a postgres:// URL) with notes, a PDF with printed page labels and a private note.
Then the same tools at kb serve's /mcp (streamable HTTP) with the HTTP API's tokens: the same list,
a page picture, each scoped token's rights as over stdio, 401 without a token, 403 from a foreign
Origin.

    KB_BIN=.build/debug/kb python Tests/Client/mcp_tools.py
"""
import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parents[2]
KB = str(Path(os.environ.get("KB_BIN", ROOT / ".build/debug/kb")).resolve())
FAILURES = []
RUN = uuid.uuid4().hex[:8]   # names of this run's bots, tokens and sources (a PostgreSQL index is shared)


def check(name, condition, detail=""):
    print(("  ok   " if condition else "  FAIL ") + name + ("" if condition else f" — {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def kb(*args, db, stdin=None):
    result = subprocess.run([KB, *args, "--db", db], capture_output=True, text=True, input=stdin)
    if result.returncode != 0:
        raise SystemExit(f"kb {' '.join(args)} failed: {result.stderr}")
    return result


class Tools:
    """One `kb mcp` session: call(tool, arguments) → (is_error, answer as JSON or the error's text)."""

    def __init__(self, session):
        self.session = session

    async def call(self, name, arguments):
        result = await self.session.call_tool(name, arguments)
        text = result.content[0].text
        return result.is_error, (text if result.is_error else json.loads(text))


async def session(db, token, body):
    args = ["mcp", "--db", db] + (["--token", token] if token else [])
    async with stdio_client(StdioServerParameters(command=KB, args=args)) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            return await body(Tools(s), s)


async def http_session(url, token, body):
    """One session with kb serve's /mcp, the token sent as the HTTP API's bearer token."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                return await body(Tools(s), s)


async def listed(tools, s):
    return sorted(t.name for t in (await s.list_tools()).tools)


async def a_page(tools, s, ids):
    result = await s.call_tool("read_page", {"source": ids["book"], "page": 4, "width": 300})
    picture = base64.b64decode(result.content[0].data) if result.content and result.content[0].type == "image" else b""
    return not result.is_error and picture[:4] == b"\x89PNG" and int.from_bytes(picture[16:20], "big") == 300


def over_http(db, work, ids, bob, ada):
    """The tools at kb serve's /mcp: what stdio lists, with each token's rights, and the HTTP guards."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    admin = "mcp-http-admin-" + RUN + "-0123456789"
    log = open(work / "serve.log", "w")
    server = subprocess.Popen([KB, "serve", "--db", db, "--port", str(port), "--token", admin], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            try:
                if urllib.request.urlopen(base + "/healthz", timeout=5).status == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        url = base + "/mcp"
        over_stdio = asyncio.run(session(db, None, listed))
        check("/mcp lists the tools kb mcp lists", asyncio.run(http_session(url, admin, listed)) == over_stdio, over_stdio)
        check("/mcp answers read_page with a PNG", asyncio.run(http_session(url, admin, lambda tools, s: a_page(tools, s, ids))))
        asyncio.run(http_session(url, bob, lambda tools, s: as_bob(tools, s, work, ids)))
        asyncio.run(http_session(url, ada, lambda tools, s: as_ada(tools, s, work, ids)))
        hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
        for name, headers, expected in [("no token", {}, 401), ("a wrong token", {"Authorization": "Bearer kb_wrong"}, 401),
                                        ("a foreign Origin", {"Authorization": f"Bearer {admin}", "Origin": "http://evil.example"}, 403)]:
            request = urllib.request.Request(url, data=hello, method="POST", headers={
                "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
            try:
                status = urllib.request.urlopen(request, timeout=30).status
            except urllib.error.HTTPError as error:
                status = error.code
            check(f"/mcp with {name} is {expected}", status == expected, status)
    finally:
        server.terminate()
        server.wait()
        log.close()


async def as_owner(tools, s, work, ids):
    names = {t.name for t in (await s.list_tools()).tools}
    check("the tools are listed", {"read_source", "grep_sources", "sync_sources", "list_sources"} <= names, names)

    # A book read by physical pages and by printed labels, with the citation fields of a hit.
    error, page = await tools.call("read_source", {"source": ids["book"], "pages": "4"})
    check("read_source by page", not error and "zebra quartz phrase lives on the fourth physical page" in page["text"], page)
    check("the page's citation fields", not error and page["pages"]["start"] == 4 and page["pages"]["end"] == 4 and page["pageLabel"] == "p. 2"
          and page["headingPath"] == ["1 Chapter One", "1.2 The Known Page"] and page["sourceTitle"] == "The Fixture Book", page)
    error, preface = await tools.call("read_source", {"source": ids["book"], "labels": "i-ii"})
    check("read_source by printed labels", not error and preface["text"].startswith("Preface") and preface["pageLabel"] == "pp. i–ii", preface)
    error, message = await tools.call("read_source", {"source": ids["book"], "labels": "xiv"})
    check("a label the book lacks is an error naming its labels", error and "labelled i–" in message, message)

    # A page as a picture: an image item (PNG of the width asked), then what it is.
    result = await tools.session.call_tool("read_page", {"source": ids["book"], "page": 4, "width": 300})
    kinds = [item.type for item in result.content]
    picture = base64.b64decode(result.content[0].data) if kinds[:1] == ["image"] else b""
    about = json.loads(result.content[1].text) if kinds[1:2] == ["text"] else {}
    check("read_page answers the page as a PNG image item", not result.is_error and result.content[0].mime_type == "image/png"
          and picture[:4] == b"\x89PNG" and int.from_bytes(picture[16:20], "big") == 300, (result.is_error, kinds))
    check("read_page says which page of how many", about == {"source": ids["book"], "page": 4, "pages": 6, "width": 300}, about)
    error, message = await tools.call("read_page", {"source": ids["book"], "page": 9})
    check("a page the book lacks is an error naming its count", error and "has 6 pages" in message, message)

    # Long parts come in pieces that join up.
    pieces, start = [], None
    while len(pieces) < 50:
        arguments = {"source": ids["book"], "maxCharacters": 400}
        if start is not None:
            arguments["start"] = start
        error, piece = await tools.call("read_source", arguments)
        if error:
            break
        pieces.append(piece)
        start = piece.get("next")
        if start is None:
            break
    error, whole = await tools.call("read_source", {"source": ids["book"], "maxCharacters": 32000})
    squeeze = lambda text: "".join(text.split())
    check("pieces joined are the whole", len(pieces) > 3 and squeeze("".join(p["text"] for p in pieces)) == squeeze(whole["text"]),
          f"{len(pieces)} pieces")

    # A note by heading path.
    error, repairs = await tools.call("read_source", {"source": ids["lease"], "heading": ["Lease", "Repairs"]})
    check("read_source by heading", not error and repairs["text"] == f"The landlord fixes the boiler within 3 days ({RUN}).", repairs)

    # grep over the book and the notes: each match with its source, page and heading, and where read_source finds it.
    error, found = await tools.call("grep_sources", {"pattern": "ZEBRA\\s+quartz", "ignoreCase": True, "sources": [ids["book"], ids["lease"]]})
    check("grep finds the phrase on its page", not error and any(m["pageLabel"] == "p. 2" and m["pages"]["start"] == 4 for m in found["matches"]), found)
    error, found = await tools.call("grep_sources", {"pattern": f"within [[:digit:]]+ days \\({RUN}\\)"})
    match = found["matches"][0] if not error and found["matches"] else {}
    check("grep in a note", match.get("headingPath") == ["Lease", "Repairs"] and match.get("line", "").startswith("The landlord"), found)
    error, located = await tools.call("read_source", {"source": match.get("sourceID", "x"), "start": match.get("offset", 0),
                                                      "end": match.get("offset", 0) + len(match.get("match", "x"))})
    check("a match's offset is where read_source finds it", not error and located["text"] == match.get("match"), located)
    error, literal = await tools.call("grep_sources", {"pattern": f"3 days ({RUN})", "literal": True, "sources": [ids["lease"]]})
    check("a literal with regex characters", not error and len(literal["matches"]) == 1, literal)

    # What could run away is refused, and the server goes on answering.
    error, message = await tools.call("grep_sources", {"pattern": "(a*)*\\1b"})
    check("a back-reference is refused", error and "back-reference" in message, message)
    error, message = await tools.call("grep_sources", {"pattern": "((x{8}){8}){8}y"})
    check("counted repetitions that multiply are refused", error and "multiply" in message, message)
    error, nested = await tools.call("grep_sources", {"pattern": "(a+)+$|(x|xx)+y", "sources": [ids["book"]]})
    check("a nested quantifier answers at once, not in exponential time", not error and nested.get("truncated") is None, nested)
    error, found = await tools.call("grep_sources", {"pattern": "zebra quartz", "literal": True})
    check("the server still answers", not error and found["matches"], found)

    # The owner reads the private note.
    error, diary = await tools.call("read_source", {"source": ids["diary"]})
    check("the owner reads a private source", not error and f"wombat secret {RUN}" in diary["text"], diary)

    # sync_sources: new / changed / unchanged / gone, pruning only its own collection.
    error, added = await tools.call("add_source", {"text": "# One\n\nFirst.", "id": f"one-{RUN}", "collection": f"app-{RUN}"})
    error, added = await tools.call("add_source", {"text": "# Two\n\nSecond.", "id": f"two-{RUN}", "collection": f"app-{RUN}"})
    error, other = await tools.call("add_source", {"text": "# Keep\n\nAnother app's.", "id": f"keep-{RUN}", "collection": f"other-{RUN}"})
    error, sources = await tools.call("list_sources", {"tag": f"collection:app-{RUN}"})
    hashes = {s["id"]: s["contentHash"] for s in sources["sources"]}
    items = [{"id": f"one-{RUN}", "sha256": hashes.get(f"one-{RUN}", "0" * 64)}, {"id": f"three-{RUN}", "sha256": "1" * 64},
             {"id": f"two-{RUN}", "sha256": "2" * 64}]
    error, synced = await tools.call("sync_sources", {"collection": f"app-{RUN}", "items": items})
    check("sync: unchanged, changed and new", not error and synced["unchanged"] == [f"one-{RUN}"]
          and [(u["id"], u["reason"]) for u in synced["upload"]] == [(f"three-{RUN}", "new"), (f"two-{RUN}", "changed")], synced)
    error, pruned = await tools.call("sync_sources", {"collection": f"app-{RUN}", "items": items[:1], "prune": True})
    check("sync: prune removes what the list dropped", not error and pruned["gone"] == [f"two-{RUN}"] and pruned["pruned"], pruned)
    error, left = await tools.call("list_sources", {"limit": 1000})
    ids_left = {s["id"] for s in left["sources"]}
    check("sync: only its collection is pruned", f"keep-{RUN}" in ids_left and f"one-{RUN}" in ids_left and f"two-{RUN}" not in ids_left, ids_left)


async def as_bob(tools, s, work, ids):
    # A token for bob sees ada's private note nowhere: not by id, not by grep.
    error, message = await tools.call("read_source", {"source": ids["diary"], "bot": ids["bot"], "user": "bob"})
    check("bob's token cannot read ada's private source", error and "No source has the id" in message, message)
    error, message = await tools.call("read_source", {"source": ids["diary"], "bot": ids["bot"], "user": "ada"})
    check("bob's token cannot read as ada", error and "may not read the private sources of ada" in message, message)
    error, found = await tools.call("grep_sources", {"pattern": f"wombat secret {RUN}", "literal": True, "bot": ids["bot"], "user": "bob"})
    check("bob's grep does not find ada's private text", not error and found["matches"] == [], found)
    error, found = await tools.call("grep_sources", {"pattern": f"within 3 days \\({RUN}\\)", "bot": ids["bot"], "user": "bob"})
    check("bob's grep finds the bot's shared notes", not error and len(found["matches"]) == 1, found)
    error, message = await tools.call("grep_sources", {"pattern": "days"})
    check("a scoped token greps through its bots", error and "through its bots" in message, message)
    error, message = await tools.call("sync_sources", {"collection": f"app-{RUN}", "items": [], "prune": True})
    check("a token without the right sources cannot sync", error and "lacks the right sources" in message, message)


async def as_ada(tools, s, work, ids):
    error, diary = await tools.call("read_source", {"source": ids["diary"], "bot": ids["bot"], "user": "ada"})
    check("ada's token reads her private source", not error and f"wombat secret {RUN}" in diary["text"], diary)
    error, found = await tools.call("grep_sources", {"pattern": f"wombat secret {RUN}", "literal": True, "bot": ids["bot"], "user": "ada"})
    check("ada's grep finds her private text", not error and [m["sourceID"] for m in found["matches"]] == [ids["diary"]], found)


def main():
    work = Path(tempfile.mkdtemp(prefix="kb-mcp-"))
    db = os.environ.get("KB_TEST_DB") or str(work / "kb.sqlite")
    notes = work / "library"
    notes.mkdir()
    (notes / "lease.md").write_text(f"# Lease\n\n## Rent\n\nThe rent is due on the first of the month.\n\n## Repairs\n\n"
                                    f"The landlord fixes the boiler within 3 days ({RUN}).\n")
    (notes / "book.pdf").write_bytes((ROOT / "Tests/KBIngestTests/Fixtures/pdf/book.pdf").read_bytes())
    kb("ingest", "--embedder", "hashing", str(notes), db=db)
    kb("ingest", "-", "--id", f"diary-{RUN}", "--user", "ada", db=db, stdin=f"# Diary\n\nThe wombat secret {RUN} of ada.")
    bot = f"library-{RUN}"
    kb("bot", "create", bot, "--source", str(notes), "--source", f"upload:diary-{RUN}", db=db)
    bob = json.loads(kb("token", "create", f"bob-{RUN}", "--bot", bot, "--scope", "user:bob", "--json", db=db).stdout)["token"]
    ada = json.loads(kb("token", "create", f"ada-{RUN}", "--bot", bot, "--scope", "user:ada", "--json", db=db).stdout)["token"]
    listed = json.loads(kb("sources", "list", "--json", db=db).stdout)
    by_path = {s["path"]: s for s in listed if "path" in s}   # uploads have no path
    # A file's id is file: and 16 hex digits of its path's SHA-256 (as GET /v1/sources lists it).
    import hashlib
    file_id = lambda path: "file:" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    ids = {"db": db, "bot": bot, "book": file_id(notes / "book.pdf"), "lease": file_id(notes / "lease.md"), "diary": f"diary-{RUN}"}
    check("the files are indexed", str(notes / "book.pdf") in by_path and str(notes / "lease.md") in by_path, list(by_path))
    # One id a source: what `kb sources list` shows is what read_source takes.
    check("the list shows the ids read takes", by_path.get(str(notes / "book.pdf"), {}).get("id") == ids["book"]
          and any(s["id"] == ids["diary"] for s in listed), listed)

    asyncio.run(session(db, None, lambda tools, s: as_owner(tools, s, work, ids)))
    asyncio.run(session(db, bob, lambda tools, s: as_bob(tools, s, work, ids)))
    asyncio.run(session(db, ada, lambda tools, s: as_ada(tools, s, work, ids)))
    over_http(db, work, ids, bob, ada)
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} checks failed: {', '.join(FAILURES)}")
        sys.exit(1)
    print("all MCP tool checks passed")


if __name__ == "__main__":
    main()
