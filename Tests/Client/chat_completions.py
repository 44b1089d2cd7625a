"""kb serve as a chat app's model endpoint, driven by OpenAI's own Python client (PyPI `openai`).

A stub upstream model on loopback records every request it receives and answers as OpenAI does
(a chat completion, or Server-Sent Events chunks), or fails on purpose (HTTP 500, a hang, not JSON,
a slow stream). kb serve runs against an index in KB_TEST_DB (a SQLite file by default, or a
postgres:// URL) with notes, a bot and a PDF with printed page labels.

    KB_BIN=.build/debug/kb python Tests/Client/chat_completions.py
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import http.client
import openai

ROOT = Path(__file__).resolve().parents[2]
KB = str(Path(os.environ.get("KB_BIN", ROOT / ".build/debug/kb")).resolve())
ADMIN = "chat-test-admin-token-0123456789"
FAILURES = []


def check(name, condition, detail=""):
    print(("  ok   " if condition else "  FAIL ") + name + ("" if condition else f" — {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Upstream:
    """The stub model: records requests; `mode` says how it answers."""

    def __init__(self):
        self.received = []
        self.mode = "ok"
        self.answer = "Venus in the tenth house favours the arts [1]. Saturn asks for patience [99]."
        self.stream_sent = 0
        self.stream_broken = None
        self.embeddings_down = False
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def send(self, status, body, content_type="application/json"):
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path.endswith("/embeddings"):
                    return self.embeddings(body)
                if body.get("response_format", {}).get("type") == "json_object":
                    return self.extraction(body)
                upstream.received.append(body)
                mode = upstream.mode
                if mode == "status":
                    return self.send(500, json.dumps({"error": {"message": "SECRET-UPSTREAM-DETAIL"}}))
                if mode == "garbage":
                    return self.send(200, "this is not json", "text/plain")
                if mode == "hang":
                    time.sleep(6)
                    try:
                        return self.send(200, "{}")
                    except (BrokenPipeError, ConnectionResetError):
                        return   # kb gave up waiting, as it should
                if body.get("stream"):
                    return self.stream(body, slow=(mode == "slow"))
                self.send(200, json.dumps({
                    "id": "chatcmpl-stub", "object": "chat.completion", "created": 1764115200, "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": upstream.answer}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338},
                }))

            def stream(self, body, slow):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                if upstream.mode == "big":
                    pieces = ["x" * 10_000] * 3_000   # 30 MB, more than every buffer on the way
                elif slow:
                    pieces = [f"word{i} " for i in range(150)]
                else:
                    pieces = ["Venus ", "favours ", "the arts ", "[1]", " and ", "[42]."]
                def event(payload):
                    data = f"data: {payload}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                try:
                    chunk = {"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": 1764115200, "model": body["model"]}
                    event(json.dumps({**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}))
                    for piece in pieces:
                        event(json.dumps({**chunk, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}))
                        upstream.stream_sent += 1
                        if slow:
                            time.sleep(0.1)
                        if upstream.mode == "stall":
                            time.sleep(5)   # longer than kb's --llm-timeout, mid-answer
                    event(json.dumps({**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
                    event("[DONE]")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    upstream.stream_broken = time.time()

            def extraction(self, body):
                data = json.loads(body["messages"][1]["content"])
                said = [t["content"] for t in data["conversation"] if t["role"] == "user"][-1]
                memories = [{"action": "add", "content": said.replace("I'm", "Ada is"), "tags": ["health"], "reason": "The user said so."}]
                self.send(200, json.dumps({"choices": [{"message": {"role": "assistant", "content": json.dumps({"memories": memories})}}]}))

            def embeddings(self, body):
                if upstream.embeddings_down:
                    return self.send(503, json.dumps({"error": {"message": "down"}}))
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                vectors = [[float((hash(w) % 7) + 1) for w in (t.split() + ["x"] * 8)[:8]] for t in texts]
                self.send(200, json.dumps({"object": "list", "model": "stub-embed", "usage": {"prompt_tokens": 1, "total_tokens": 1},
                                           "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]}))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/v1"


def kb(*args, db, check_status=True):
    result = subprocess.run([KB, *args, "--db", db], capture_output=True, text=True)
    if check_status and result.returncode != 0:
        raise SystemExit(f"kb {' '.join(args)} failed: {result.stderr}")
    return result


def raw(serve, method, path, body=None, params=""):
    """One request with the standard library: (status, content type, text)."""
    connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {ADMIN}"}
    if data is not None:
        headers["Content-Type"] = "application/json"
    connection.request(method, path + params, body=data, headers=headers)
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    return response.status, response.getheader("Content-Type") or "", text


class Serve:
    def __init__(self, db, workdir, upstream_url, *extra):
        self.port = free_port()
        self.process = subprocess.Popen(
            [KB, "serve", "--db", db, "--port", str(self.port), "--token", ADMIN, "--llm", "openai:stub-model", "--llm-url", upstream_url,
             "--llm-timeout", "2", *extra], cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for _ in range(1200):
            try:
                urllib.request.urlopen(f"{self.base}/healthz", timeout=1)
                return
            except Exception:
                if self.process.poll() is not None:
                    raise SystemExit("kb serve did not start: " + self.process.stderr.read())
                time.sleep(0.1)
        raise SystemExit("kb serve did not answer /healthz")

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def client(self, token=ADMIN, **kwargs):
        return openai.OpenAI(base_url=f"{self.base}/v1", api_key=token, max_retries=0, timeout=60, **kwargs)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)


def main():
    work = Path(tempfile.mkdtemp(prefix="kb-chat-"))
    db = os.environ.get("KB_TEST_DB") or str(work / "kb.sqlite")
    (work / "notes").mkdir()
    (work / "notes/venus.md").write_text("# Venus\n\nVenus in the tenth house favours a career in the arts and design.\n")
    (work / "notes/bread.md").write_text("# Bread\n\nSourdough bread needs flour, water, salt and a slow proof of twelve hours.\n")
    (work / "books").mkdir()
    (work / "books/ephemeris.pdf").write_bytes((ROOT / "corpus/books/reading-an-ephemeris.pdf").read_bytes())
    kb("ingest", "--embedder", "hashing", str(work / "notes"), str(work / "books"), db=db)
    kb("bot", "create", "astro", "--system-prompt", "You are Astro, a careful astrologer. Cite sources as [n].",
       "--source", str(work / "notes"), "--source", str(work / "books"), db=db)
    kb("bot", "create", "baker", "--system-prompt", "You bake.", "--source", str(work / "notes/bread.md"), db=db)
    token = json.loads(kb("token", "create", "baker-only", "--bot", "baker", "--scope", "user:ada", "--json", db=db).stdout)["token"]

    upstream = Upstream()
    serve = Serve(db, work, upstream.url)
    try:
        run(serve, upstream, token, work)
    finally:
        serve.stop()
    # The embedder down: the context comes from keywords, the answer still comes.
    degraded(work, upstream)
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} checks failed: {', '.join(FAILURES)}")
        sys.exit(1)
    print("all chat completion checks passed")


def run(serve, upstream, token, work):
    client = serve.client()

    # GET /v1/models lists the bots; a token scoped to one bot sees only that one.
    models = [m.id for m in client.models.list()]
    check("models lists the bots", sorted(models) == ["astro", "baker"], models)
    scoped = [m.id for m in serve.client(token).models.list()]
    check("a scoped token sees only its bots", scoped == ["baker"], scoped)

    # A non-streamed answer, decoded by the client unchanged.
    tools = [{"type": "function", "function": {"name": "lookup", "description": "Look up", "parameters": {"type": "object", "properties": {}}}}]
    messages = [{"role": "system", "content": "Answer in one sentence."},
                {"role": "user", "content": "Which career does Venus in the tenth house favour?"}]
    upstream.received.clear()
    answer = client.chat.completions.create(model="astro", messages=messages, temperature=0.3, max_tokens=64, stop=["\n\n"],
                                            tools=tools, user="ada", extra_body={"kb": {"budget": 900}})
    check("the answer decodes as a ChatCompletion", answer.choices[0].message.content == upstream.answer, answer)
    sent = upstream.received[-1]
    check("the upstream gets the --llm model", sent["model"] == "stub-model", sent["model"])
    first = sent["messages"][0]
    check("kb's system message comes first, with the bot's prompt and context",
          first["role"] == "system" and first["content"].startswith("You are Astro") and "<context>" in first["content"]
          and "career in the arts" in first["content"], first)
    check("the client's messages follow, unchanged and in order", sent["messages"][1:] == messages, sent["messages"][1:])
    check("OpenAI's fields pass through untouched",
          sent["temperature"] == 0.3 and sent["max_tokens"] == 64 and sent["stop"] == ["\n\n"] and sent["tools"] == tools and sent["user"] == "ada",
          {k: sent.get(k) for k in ["temperature", "max_tokens", "stop", "tools", "user"]})
    check("kb's own field stays with kb", "kb" not in sent, sent.keys())
    citations = answer.choices[0].message.model_extra.get("citations") or []
    check("citations ride on the message", any(c["path"].endswith("notes/venus.md") for c in citations), citations)
    extra = answer.model_extra["kb"]
    check("a marker with no citation is listed, never invented", extra["unmatchedMarkers"] == [99], extra)
    check("the upstream's usage is passed through", answer.usage.prompt_tokens == 321 and answer.usage.total_tokens == 338, answer.usage)
    check("kb's context tokens are under kb", 0 < extra["contextTokens"] <= 900 and extra["budget"] == 900, extra)

    # bot/MODEL names the upstream model.
    client.chat.completions.create(model="astro/other-model", messages=messages)
    check("astro/other-model asks other-model", upstream.received[-1]["model"] == "other-model", upstream.received[-1]["model"])

    # Citations of a PDF carry printed page labels.
    answer = client.chat.completions.create(model="astro", messages=[{"role": "user", "content": "How do I read an ephemeris table?"}])
    labels = [c.get("pageLabel") for c in answer.choices[0].message.model_extra["citations"] if c["path"].endswith("ephemeris.pdf")]
    check("a PDF's citations carry page labels", labels and all(label and label.startswith("p") for label in labels), labels)

    # A follow-up finds what its earlier turn was about.
    follow = [{"role": "user", "content": "I want to bake sourdough bread."},
              {"role": "assistant", "content": "Lovely: you will need a few things."},
              {"role": "user", "content": "What temperature suits it best?"}]
    answer = client.chat.completions.create(model="astro", messages=follow)
    paths = [c["path"] for c in answer.choices[0].message.model_extra["citations"]]
    alone = client.chat.completions.create(model="astro", messages=follow[-1:])
    alone_paths = [c["path"] for c in alone.choices[0].message.model_extra["citations"]]
    check("a follow-up question finds the note its earlier turn was about (first cited; not so without the history)",
          paths and paths[0].endswith("notes/bread.md") and not (alone_paths and alone_paths[0].endswith("notes/bread.md")), (paths, alone_paths))
    check("the conversation's queries are reported", len(answer.model_extra["kb"].get("retrieval", {}).get("queries", [])) >= 2, answer.model_extra["kb"])

    # Streaming: chunks as OpenAI sends them, the citations in one chunk before [DONE].
    stream = client.chat.completions.create(model="astro", messages=messages, stream=True, user="ada")
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    check("a streamed answer decodes chunk by chunk", text == "Venus favours the arts [1] and [42].", text)
    last = chunks[-1].model_extra.get("kb") if chunks else None
    check("the last chunk carries the citations", last and any(c["path"].endswith("notes/venus.md") for c in last["citations"]), last)
    check("a streamed marker with no citation is listed", last and last["unmatchedMarkers"] == [42], last)
    # kb.showContext: the context block the model got, on the last chunk.
    shown = list(client.chat.completions.create(model="astro", messages=messages, stream=True, user="ada",
                                                extra_body={"kb": {"showContext": True}}))[-1].model_extra.get("kb") or {}
    system = upstream.received[-1]["messages"][0]["content"]
    check("kb.showContext returns the context block the model got", shown.get("context") and shown["context"].strip() in system
          and "<context>" in shown["context"], (shown.get("context", "")[:80], system[:80]))
    check("without showContext the block is not sent back", "context" not in (last or {}), last)
    _, content_type, text = raw(serve, "POST", "/v1/chat/completions", {"model": "astro", "messages": messages, "stream": True})
    events = [e for e in text.split("\n\n") if e]
    check("the stream is text/event-stream ending in data: [DONE]",
          content_type.startswith("text/event-stream") and events[-1] == "data: [DONE]" and all(e.startswith("data: ") for e in events),
          text[-300:])

    # kb.learn: apply stores the user's stated fact after the answer.
    client.chat.completions.create(model="astro", messages=[{"role": "user", "content": "I'm allergic to peanuts."}],
                                   extra_body={"kb": {"user": "ada", "learn": "apply"}})
    stored = []
    for _ in range(100):
        stored = json.loads(raw(serve, "GET", "/v1/memories", params="?scope=user:ada")[2])
        if stored:
            break
        time.sleep(0.1)
    check("kb.learn apply stores the user's fact afterwards", any("peanuts" in m["content"] for m in stored), stored)
    answer = client.chat.completions.create(model="astro", messages=[{"role": "user", "content": "Anything I cannot eat?"}], user="ada")
    memory_citations = [c for c in answer.choices[0].message.model_extra["citations"] if c["kind"] == "memory"]
    check("the learned memory is cited in the next turn", any("peanuts" in c["title"] for c in memory_citations), memory_citations)

    # A client that goes away mid-stream cancels the upstream request.
    upstream.mode = "slow"
    upstream.stream_sent, upstream.stream_broken = 0, None
    connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=60)
    connection.request("POST", "/v1/chat/completions", body=json.dumps({"model": "astro", "messages": messages, "stream": True}),
                       headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    response = connection.getresponse()
    lines = 0
    while lines < 5:
        if response.readline().startswith(b"data: "):
            lines += 1
    connection.sock.shutdown(socket.SHUT_RDWR)
    connection.close()
    left = time.time()
    for _ in range(100):
        if upstream.stream_broken:
            break
        time.sleep(0.1)
    sent_then = upstream.stream_sent
    time.sleep(1)
    check("a disconnect mid-stream closes the upstream request",
          upstream.stream_broken is not None and upstream.stream_sent < 150, (upstream.stream_broken, upstream.stream_sent))
    check("no upstream work continues after the disconnect", upstream.stream_sent == sent_then, (sent_then, upstream.stream_sent))
    if upstream.stream_broken:
        print(f"       (upstream saw the disconnect {upstream.stream_broken - left:.2f} s after the client left, at chunk {sent_then} of 150)")

    # A reader that does not read: kb does not read the whole answer ahead of it (the upstream
    # blocks once the buffers on the way are full), and nothing is lost once it reads on.
    upstream.mode = "big"
    upstream.stream_sent, upstream.stream_broken = 0, None
    connection = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=120)
    connection.request("POST", "/v1/chat/completions", body=json.dumps({"model": "astro", "messages": messages, "stream": True}),
                       headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    response = connection.getresponse()
    response.readline()
    # Until the buffers on the way (sockets, one part in kb) are full and the upstream has sent
    # nothing for 3 s: were kb reading ahead of its reader, the upstream would send all 30 MB.
    stalled, still = -1, 0
    for _ in range(120):
        still = still + 1 if upstream.stream_sent == stalled else 0
        if still >= 6 or upstream.stream_sent >= 3_000:
            break
        stalled = upstream.stream_sent
        time.sleep(0.5)
    check("a slow reader holds the upstream back instead of kb buffering the answer",
          upstream.stream_sent < 3_000, (stalled, upstream.stream_sent))
    received = 0
    for line in iter(response.readline, b""):
        if line.startswith(b"data: {"):
            received += sum(len(c.get("delta", {}).get("content") or "") for c in json.loads(line[6:]).get("choices", []))
        if line.strip() == b"data: [DONE]":
            break
    connection.close()
    check("once it reads on, the whole answer arrives", received == 30_000_000 and upstream.stream_sent == 3_000, (received, upstream.stream_sent))
    if stalled:
        print(f"       (the upstream had sent {stalled} of 3000 chunks of 10 kB when the reader waited)")

    # Upstream failures: statuses and messages that name the upstream, its own body kept out.
    for mode, status, says in [("status", 502, "answered HTTP 500"), ("garbage", 502, "not with a chat completion"), ("hang", 504, "within 2 s")]:
        upstream.mode = mode
        try:
            client.chat.completions.create(model="astro", messages=messages)
            check(f"upstream {mode} is {status}", False, "no error")
        except openai.APIStatusError as error:
            message = error.response.json()["error"]["message"]
            check(f"upstream {mode} is {status}, naming the upstream", error.status_code == status and says in message and upstream.url in message, (error.status_code, message))
            check(f"upstream {mode}: its own body stays out of the answer", "SECRET-UPSTREAM-DETAIL" not in error.response.text, error.response.text)
    upstream.mode = "hang"
    try:
        list(client.chat.completions.create(model="astro", messages=messages, stream=True))
        check("a hanging upstream stream is 504", False, "no error")
    except openai.APIStatusError as error:
        check("a hanging upstream stream is 504", error.status_code == 504, error.status_code)
    upstream.mode = "stall"
    _, _, text = raw(serve, "POST", "/v1/chat/completions", {"model": "astro", "messages": messages, "stream": True})
    events = [e for e in text.split("\n\n") if e]
    last = json.loads(events[-1][6:]) if events and events[-1].startswith("data: {") else {}
    check("an upstream that stalls mid-stream ends it with an error event after --llm-timeout",
          last.get("error", {}).get("code") == "upstream_timeout" and "mid-answer" in last["error"]["message"] and "data: [DONE]" not in events, events[-2:])
    upstream.mode = "ok"

    # Rights and bad input.
    try:
        serve.client(token).chat.completions.create(model="astro", messages=messages)
        check("a bot the token may not use is 403", False, "no error")
    except openai.PermissionDeniedError:
        check("a bot the token may not use is 403", True)
    answer = serve.client(token).chat.completions.create(model="baker", messages=[{"role": "user", "content": "How long should bread rise?"}], user="ada")
    check("the scoped token chats with its own bot", answer.choices[0].message.model_extra["citations"] != [], answer)
    for name, body, status, says in [
        ("an unknown kb field", {"model": "astro", "messages": messages, "kb": {"colour": "red"}}, 400, "colour"),
        ("too many messages", {"model": "astro", "messages": [{"role": "user", "content": "hi"}] * 300}, 400, "at most 256"),
        ("no user turn", {"model": "astro", "messages": [{"role": "system", "content": "hi"}]}, 400, "user"),
        ("an unknown bot", {"model": "nobody", "messages": messages}, 404, "nobody"),
        ("a bad learn value", {"model": "astro", "messages": messages, "kb": {"learn": "always"}}, 400, "learn"),
        ("an oversize body", {"model": "astro", "messages": [{"role": "user", "content": "x" * 1_100_000}]}, 413, ""),
    ]:
        got, _, text = raw(serve, "POST", "/v1/chat/completions", body)
        check(f"{name} is {status}", got == status and says in text, (got, text[:300]))

    # OpenAI's vector store search over a bot's knowledge, through the client's own call.
    client = serve.client()
    page = client.vector_stores.search("astro", query="Which career does Venus in the tenth house favour?", max_num_results=3)
    first = page.data[0] if page.data else None
    check("vector store search answers in OpenAI's shape", first is not None and first.filename == "Venus"
          and "tenth house" in first.content[0].text and first.attributes.get("kind") == "note" and len(page.data) <= 3, page)
    pdf = client.vector_stores.search("astro", query="ephemeris columns", filters={"type": "eq", "key": "kind", "value": "pdf"})
    check("vector store search filters by kind, with page labels", pdf.data and all(r.attributes["kind"] == "pdf" and "pageLabel" in r.attributes
                                                                                  for r in pdf.data), pdf)
    try:
        serve.client(token).vector_stores.search("astro", query="venus")
        check("a vector store (bot) the token may not use is 403", False, "no error")
    except openai.PermissionDeniedError:
        check("a vector store (bot) the token may not use is 403", True)
    try:
        client.vector_stores.search("astro", query="venus", filters={"type": "gt", "key": "year", "value": 3})
        check("a filter kb does not read is 400", False, "no error")
    except openai.BadRequestError as error:
        check("a filter kb does not read is 400", "gt is not read" in str(error), str(error))

    # The request log and the metrics saw the calls.
    time.sleep(1.5)
    usage = json.loads(subprocess.run([KB, "usage", "--db", os.environ.get("KB_TEST_DB") or str(work / "kb.sqlite"), "--by", "route", "--json"],
                                      capture_output=True, text=True).stdout or "{}")
    routes = {row["key"] for row in usage.get("rows", [])}
    check("the request log keeps chat completions and what was learned",
          any("chat/completions" in str(r) and "LEARN" not in str(r) for r in routes) and any("LEARN" in str(r) for r in routes), usage)
    metrics = raw(serve, "GET", "/metrics")[2]
    check("metrics time the upstream and count its errors",
          all(f'kb_upstream_errors_total{{outcome="{outcome}"}}' in metrics for outcome in ["timeout", "status", "malformed", "cancelled"])
          and 'kb_upstream_duration_seconds_count{outcome="ok"}' in metrics, [l for l in metrics.splitlines() if "upstream" in l and not l.startswith("#")][:12])


def degraded(work, upstream):
    db = str(work / "remote.sqlite")
    kb("ingest", "--embedder", "openai:stub-embed", "--embedder-url", upstream.url, str(work / "notes"), db=db)
    kb("bot", "create", "astro", "--source", str(work / "notes"), db=db)
    upstream.embeddings_down = True
    serve = Serve(db, work, upstream.url, "--embedder-url", upstream.url)
    try:
        answer = serve.client().chat.completions.create(model="astro", messages=[{"role": "user", "content": "Venus career"}])
        extra = answer.model_extra["kb"]
        check("with the embedder down the answer still comes, context from keywords, said in kb",
              answer.choices[0].message.content == upstream.answer and "degraded" in extra
              and any(c["path"].endswith("venus.md") for c in answer.choices[0].message.model_extra["citations"]), extra)
    finally:
        serve.stop()
        upstream.embeddings_down = False


if __name__ == "__main__":
    main()
