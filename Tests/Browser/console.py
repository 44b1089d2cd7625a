"""kb's console in a real browser: Debian's Chromium driven by Playwright, against a running
kb serve with a token. Signs in, uploads a PDF and watches its job finish, finds a phrase from it in
the playground with its page label, talks to a bot in the Chat screen (a stub model streaming),
opens a snippet's page as a picture with its words marked
where poppler places them (and a private scan's page with the words OCR placed), previews a bot's context for a user, edits a memory and sees
its history, makes and revokes a scoped token, and checks that a scoped token's console cannot
open another user's memories. axe-core checks every screen (no serious or critical violation).

    KB_BIN=.build/debug/kb python Tests/Browser/console.py
    KB_CONSOLE_SHOTS=folder also saves a screenshot of each screen there.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
KB = str(Path(os.environ.get("KB_BIN", ROOT / ".build/debug/kb")).resolve())
CHROMIUM = os.environ.get("KB_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
SHOTS = os.environ.get("KB_CONSOLE_SHOTS")
ADMIN = "console-test-admin-token-0123456789"
FAILURES = []


def check(condition, name, detail=""):
    print(("  ok   " if condition else "  FAIL ") + name + ("" if condition else f" — {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def kb(*args, db):
    result = subprocess.run([KB, *args, "--db", db], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"kb {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def main():
    work = Path(tempfile.mkdtemp(prefix="kb-console-"))
    db = str(work / "kb.sqlite")
    (work / "notes").mkdir()
    (work / "notes/venus.md").write_text("# Venus\n\nVenus in the tenth house favours a career in the arts.\n")
    book = work / "reading-an-ephemeris.pdf"
    book.write_bytes((ROOT / "corpus/books/reading-an-ephemeris.pdf").read_bytes())
    kb("ingest", "--embedder", "hashing", str(work / "notes"), db=db)
    kb("bot", "create", "astro", "--system-prompt", "You are a careful astrologer.", "--source", "kind:note", "--source", "kind:pdf", db=db)
    kb("bot", "create", "chef", "--system-prompt", "You are a baker.", "--source", "kind:note", db=db)
    kb("memory", "add", "Ada drinks green tea every morning.", "--scope", "user:ada", db=db)
    kb("memory", "add", "Bob's private note: allergic to cats.", "--scope", "user:bob", db=db)

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    upstream = StubUpstream()
    server = subprocess.Popen([KB, "serve", "--db", db, "--port", str(port), "--token", ADMIN, "--reports", str(ROOT / "corpus/reports"),
                               "--llm", "openai:stub-model", "--llm-url", upstream.url], cwd=work,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    wait_for(base)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM)
            run(browser, base, book, upstream)
            # A kb without a chat model: the Chat screen says which option to start it with.
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                plain_port = s.getsockname()[1]
            plain = subprocess.Popen([KB, "serve", "--db", db, "--port", str(plain_port), "--token", ADMIN], cwd=work,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                wait_for(f"http://127.0.0.1:{plain_port}")
                without_model(browser, f"http://127.0.0.1:{plain_port}")
            finally:
                plain.terminate()
                plain.wait(timeout=20)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
        upstream.stop()
    if FAILURES:
        print(f"FAIL: {len(FAILURES)} console checks failed: {', '.join(FAILURES)}")
        sys.exit(1)
    print("all console checks passed")


def accessible(page, screen):
    """axe-core on the screen as it is: no serious or critical violation."""
    results = Axe().run(page)
    bad = [f"{v['id']} ({v['impact']}): {v['nodes'][0]['target']}" for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    check(not bad, f"{screen}: no serious or critical accessibility violation", bad)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{screen}.png"), full_page=True)


def open_screen(page, name, heading=None):
    """Follows the menu link and waits until the screen has drawn itself."""
    page.get_by_role("link", name=name, exact=True).click()
    expect(page.get_by_role("heading", name=heading or name, level=1)).to_be_visible()


def sign_in(page, base, token):
    page.goto(base + "/")
    expect(page.get_by_label("API token")).to_be_visible()
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Status")).to_be_visible()


def wait_for(base):
    for _ in range(1200):
        try:
            urllib.request.urlopen(base + "/healthz", timeout=1)
            return
        except Exception:
            time.sleep(0.1)


class StubUpstream:
    """A chat model on loopback that streams a known answer a word at a time (every 0.12 s), or —
    for a message asking for it slowly — 300 words a second apart, noting when kb closes that request."""
    ANSWER = ["The ", "ephemeris ", "lists ", "each ", "planet ", "in ", "its ", "own ", "column ", "[1]", "."]

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        import threading
        stub = self
        self.closed = threading.Event()
        self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                stub.bodies.append(body)
                head = {"id": "chatcmpl-stub", "created": 1764115200, "model": body.get("model", "stub")}
                if body.get("response_format", {}).get("type") == "json_object" or not body.get("stream"):
                    # Memory extraction: what the user said about an allergy, as a model would propose it —
                    # and, for an Arabic turn, once in Arabic and once translated (which kb refuses).
                    said = json.dumps(body.get("messages", [])[-1:], ensure_ascii=False)
                    memories = [{"action": "add", "content": "Allergic to peanuts.", "reason": "The user said so."}] if "peanuts" in said else []
                    if "السمسم" in said:
                        memories += [{"action": "add", "content": "لديها حساسية من السمسم.", "tags": ["health", "allergy"], "turn": 3, "reason": "قالت ذلك."},
                                     {"action": "add", "content": "Allergic to sesame.", "tags": ["allergy"], "turn": 3, "reason": "A translation."}]
                    data = json.dumps({**head, "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": json.dumps({"memories": memories})}}]}).encode()
                    self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
                    return
                slowly = "slowly" in json.dumps(body.get("messages", [])[-1:])
                words = [f"word{i} " for i in range(300)] if slowly else StubUpstream.ANSWER
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
                try:
                    for word in words:
                        event = {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}]}
                        self.chunk(f"data: {json.dumps(event)}\n\n".encode())
                        time.sleep(1.0 if slowly else 0.12)
                    self.chunk(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    stub.closed.set()

            def chunk(self, data):
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def chat_checks(page, base, upstream):
    """The Chat screen: a streamed answer piece by piece, its citations linked and opening their
    page, the context the model got, Stop closing the model's request, and the keyboard."""
    open_screen(page, "Chat")
    offered = page.locator("#main select").locator("option").all_inner_texts()
    check(offered == ["astro", "chef"], "the Chat screen offers the token's bots (GET /v1/models)", offered)
    page.locator("#main select").select_option("astro")
    page.get_by_label("User (whose memories the bot reads)").fill("ada")
    page.get_by_label("Message").fill("How do I read the ephemeris table columns?")
    # Every state the answer passes through, as the page draws it.
    page.evaluate("""() => { window.kbStates = []; new MutationObserver(() => {
        const said = document.querySelectorAll('.turn.assistant .said'); if (said.length) window.kbStates.push(said[said.length - 1].textContent);
      }).observe(document.querySelector('.chat-log'), { subtree: true, childList: true, characterData: true }); }""")
    page.get_by_label("Message").press("Tab")
    check(page.evaluate("document.activeElement.textContent") == "Send", "the keyboard goes from the message to Send")
    page.keyboard.press("Enter")
    expect(page.locator(".citations li").first).to_be_visible(timeout=30_000)
    states = [s for s in page.evaluate("window.kbStates") if s]
    growing = all(b.startswith(a) for a, b in zip(states, states[1:]))
    check(len(set(states)) >= 5 and growing, "the answer appears piece by piece as the model streams it", states[:12])
    answer = page.locator(".turn.assistant .said").last
    check("".join(StubUpstream.ANSWER) == answer.inner_text(), "the whole answer is shown", answer.inner_text())
    marker = answer.get_by_role("link", name="[1]")
    check(marker.get_attribute("href") == "#cite-1", "the [1] marker links to citation 1", marker.get_attribute("href"))
    citation = page.locator("#cite-1")
    check("reading-an-ephemeris" in citation.inner_text(), "citation 1 names the PDF it comes from", citation.inner_text())
    # By keyboard: the marker takes the focus to its citation, Tab to its button, Enter opens the page.
    marker.focus()
    page.keyboard.press("Enter")
    check(page.evaluate("document.activeElement.id") == "cite-1", "Enter on a [n] marker moves the focus to its citation",
          page.evaluate("document.activeElement.outerHTML.slice(0, 80)"))
    page.keyboard.press("Tab")
    check((page.evaluate("document.activeElement.textContent") or "").startswith("Open"), "Tab from a citation reaches its Open button",
          page.evaluate("document.activeElement.outerHTML.slice(0, 80)"))
    page.keyboard.press("Enter")
    picture = citation.locator(".page-figure img")
    expect(picture).to_be_visible(timeout=30_000)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=picture.element_handle(), timeout=30_000)
    check(picture.evaluate("img => img.naturalWidth") == 1000 and citation.locator(".mark-box").count() > 0,
          "a citation opens its page as a picture with the cited words marked", citation.locator(".mark-box").count())
    page.get_by_text(re.compile("^What the model got")).click()
    block = page.get_by_label("The context block")
    check("<context>" in block.inner_text() and "reading-an-ephemeris" in block.inner_text(), "the turn's context block is shown", block.inner_text()[:120])
    system = upstream.bodies[-1]["messages"][0]["content"] if upstream.bodies else ""
    check(block.inner_text().strip() in system, "the block shown is the one the model got", system[:120])
    # A note's citation opens its text, the cited passage marked.
    note = page.locator(".citations li").filter(has=page.get_by_role("button", name=re.compile("^Open the text"))).first
    check(note.count() == 1, "a note is cited too", page.locator(".citations").inner_text())
    if note.count():
        note.get_by_role("button", name=re.compile("^Open the text")).click()
        marked = note.locator("pre mark")
        expect(marked).to_be_visible(timeout=30_000)
        check("Venus" in marked.inner_text() and marked.inner_text().strip() in block.inner_text(),
              "a note's citation opens its text with the cited passage marked", marked.inner_text()[:80])
    accessible(page, "chat")

    # Stop: the stream ends, and kb closes its request to the model.
    page.get_by_label("Message").fill("Tell me everything, slowly.")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".turn.assistant .said").last).to_contain_text("word1", timeout=30_000)
    page.get_by_role("button", name="Stop").click()
    expect(page.get_by_text("Stopped: kb closed the request to the model.")).to_be_visible()
    check(upstream.closed.wait(10), "Stop closes the request to the model (kb stops reading it)")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()

    # The keyboard of chat screens: Shift+Enter starts a new line, Enter sends. Without a user
    # there is nothing to learn, and nothing under the answer reads "null".
    page.get_by_label("User (whose memories the bot reads)").fill("")
    box = page.get_by_label("Message")
    box.fill("About the ephemeris:")
    asked = page.locator(".turn.user").count()
    box.press("Shift+Enter")
    check(box.input_value() == "About the ephemeris:\n" and page.locator(".turn.user").count() == asked,
          "Shift+Enter in the message box starts a new line", box.input_value())
    box.press_sequentially("how do I read its table columns?")
    box.press("Enter")
    details = page.locator(".turn.assistant").last.locator(".answer-details")
    expect(details).to_contain_text("What the model got", timeout=30_000)
    check(page.locator(".turn.user").last.inner_text().endswith("About the ephemeris:\nhow do I read its table columns?"),
          "Enter in the message box sends the message, its new line kept", page.locator(".turn.user").last.inner_text())
    check("null" not in details.inner_text(), "nothing under an answer reads null", details.inner_text()[-200:])
    # Citations that read alike (one source, page and heading) show where their passages start.
    items = details.locator(".citations li").all_inner_texts()
    check(len(items) == len(set(items)), "no two citations read alike", items)
    alike = page.evaluate("""async () => {
        const { citationList } = await import("/console/citations.js");
        const cite = number => ({ number, title: "Writing R Extensions", sourceID: "r-ext", headingPath: ["1 Creating R packages", "Checking packages"],
                                  pages: { start: 43, end: 43, startLabel: "43", endLabel: "43" } });
        const block = [2, 3, 4].map(n => `<source id="${n}" title="Writing R Extensions">\\npassage ${n}: R CMD check runs the tests of part ${n}\\n</source>`).join("\\n");
        return [...citationList([cite(2), cite(3), cite(4)], { bot: "astro", user: "", block }).children].map(li => li.textContent);
    }""")
    check(len(set(alike)) == 3 and all(f"passage {n}:" in text for n, text in zip([2, 3, 4], alike)),
          "three citations of one page and heading each show how their passage starts", alike)


def api(base, method, path, body=None, content_type=None, token=ADMIN):
    headers = {"Authorization": "Bearer " + token}
    if content_type:
        headers["Content-Type"] = content_type
    with urllib.request.urlopen(urllib.request.Request(base + path, data=body, method=method, headers=headers), timeout=60) as answer:
        return answer.read()


def private_sources(base, source_id, book):
    """Two private sources astro sees: Ada's scan (a page of the PDF as kb draws it, uploaded as
    a PNG and read by OCR) and Bob's copy of the PDF."""
    scan = api(base, "GET", f"/v1/sources/{source_id}/pages/1?width=2000")
    for query, body, kind in [("id=ada-scan&title=Ada%27s%20scanned%20page&user=ada&bot=astro", scan, "image/png"),
                              ("id=bob-book&title=Bob%27s%20private%20book&user=bob&bot=astro", book.read_bytes(), "application/pdf")]:
        job = json.loads(api(base, "POST", "/v1/sources?" + query, body, kind))["job"]["id"]
        for _ in range(600):
            state = json.loads(api(base, "GET", f"/v1/jobs/{job}"))
            if state["state"] in ("done", "failed"):
                break
            time.sleep(0.2)
        check(state["state"] == "done", f"the private upload ({kind}) is read", state)


def scoped_pages(page, base, secret):
    """A token scoped to Ada: the Chat cites her private scan and opens its page with the words OCR
    placed there; Bob's private pages stay closed to it."""
    # The scan is a page of the shelf's book, so the question names it ("my scanned page", its
    # title): asked without, the book's own page answers and the scan is its duplicate.
    page.get_by_label("Message").fill("On my scanned page: an ephemeris is a table of planetary positions, one row per day. How do I read one?")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".citations li").first).to_be_visible(timeout=30_000)
    cited = page.locator(".citations li").filter(has_text="Ada's scanned page").first
    check(cited.count() == 1, "the scoped token's chat cites its user's private scan", page.locator(".citations").inner_text()[:300])
    check("Bob's private book" not in page.locator(".citations").inner_text(), "it never cites another user's private source")
    if cited.count():
        cited.get_by_role("button", name=re.compile("^Open p")).click()
        shown = cited.locator(".page-figure img").first
        expect(shown).to_be_visible(timeout=60_000)
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle(), timeout=30_000)
        marks = [m.lower().strip(".,;:") for m in cited.locator(".mark-box").evaluate_all("boxes => boxes.map(b => b.dataset.text)")]
        check(len(marks) >= 3 and "ephemeris" in marks, "a scan's page opens with the words OCR placed on it marked", marks[:10])
        accessible(page, "scan page")
    for path in ["/v1/sources/bob-book/pages/1?bot=astro&user=bob", "/v1/sources/bob-book/pages/1?bot=astro",
                 "/v1/sources/bob-book/pages/1/words?bot=astro&user=ada"]:
        answer = page.request.get(base + path, headers={"Authorization": "Bearer " + secret})
        check(answer.status in (403, 404) and "image" not in answer.headers.get("content-type", ""),
              f"the scoped token cannot open Bob's private page ({path.split('?')[1]})", answer.status)


def without_model(browser, base):
    page = browser.new_context().new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, base, ADMIN)
    open_screen(page, "Chat")
    page.get_by_label("Message").fill("Hello?")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_role("alert")).to_contain_text("--llm")
    check("kb serve --llm" in page.get_by_role("alert").inner_text(), "without --llm the Chat screen says which option to start kb with",
          page.get_by_role("alert").inner_text())
    open_screen(page, "Status")
    check(not errors, "the rest of the console works without a chat model", errors)


def run(browser, base, book, upstream):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(f"{message.text} ({message.location.get('url', '')})") if message.type == "error" else None)

    # First load: what is transferred, and how soon the sign-in form answers.
    transferred = []
    page.on("response", lambda response: transferred.append(len(response.body())) if response.ok and response.request.method == "GET" else None)
    started = time.perf_counter()
    page.goto(base + "/")
    expect(page.get_by_label("API token")).to_be_editable()
    interactive = time.perf_counter() - started
    print(f"       (first load: {sum(transferred)} bytes in {len(transferred)} responses; sign-in form usable after {interactive * 1000:.0f} ms)")
    check(page.url.endswith("/console/#/signin") or page.url.endswith("/console/"), "/ leads to the console", page.url)
    accessible(page, "signin")
    check(errors == [], "the first load logs no error (a browser's /favicon.ico included)", errors)
    icon = page.request.get(base + "/favicon.ico")
    check(icon.status == 200 and icon.headers.get("content-type", "").startswith("image/"), "/favicon.ico is the console's icon, without a token",
          (icon.status, icon.headers.get("content-type")))

    # A wrong token is refused with kb's message; the right one signs in.
    page.get_by_label("API token").fill("not-the-token-at-all")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("Authorization")
    sign_in(page, base, ADMIN)
    check("token" not in page.url and ADMIN not in page.url, "the token is never in the address", page.url)
    expect(page.locator(".stat").first).to_be_visible()
    accessible(page, "status")

    # Upload a PDF and watch its job finish.
    open_screen(page, "Sources")
    page.get_by_label("Files").set_input_files(str(book))
    expect(page.get_by_text("reading-an-ephemeris.pdf: done")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("link", name="reading-an-ephemeris", exact=True)).to_be_visible()
    page.get_by_role("button", name="Re-read reading-an-ephemeris").click()
    expect(page.get_by_text("reading-an-ephemeris (re-read): done")).to_be_visible(timeout=60_000)
    accessible(page, "sources")

    # The playground finds a phrase from it, with its page label; the settings are in the address.
    open_screen(page, "Playground", "Retrieval playground")
    page.get_by_label("Query").fill("ephemeris table columns")
    page.get_by_label("Bot").fill("astro")
    page.get_by_label("User", exact=True).fill("ada")
    page.get_by_role("button", name="Search").click()
    hit = page.locator(".hits li").filter(has_text="reading-an-ephemeris").first
    expect(hit).to_be_visible()
    label = hit.locator(".badge").filter(has_text="p.").first.inner_text()
    check(label.startswith("p. ") or label.startswith("pp. "), "a hit from the PDF shows its printed page label", label)
    reason = hit.locator(".why").inner_text()
    check("keyword #" in reason and "cosine" in reason and "fused" in reason and "a bot's sources" in reason,
          "each hit says why it is there (ranks, scores, filters)", reason)
    check("q=ephemeris" in page.url and ADMIN not in page.url, "the settings (not the token) are kept in the address", page.url)
    block = page.get_by_label("The context block as the bot gets it")
    expect(block).to_contain_text("<context>")
    expect(block).to_contain_text("Ada drinks green tea")
    expect(page.get_by_role("heading", name="Context for astro and ada")).to_be_visible()
    # The context's citations open what they cite: the PDF's page with the cited words marked.
    cited = page.locator(".citations li").filter(has=page.get_by_role("button", name=re.compile("^Open p"))).first
    check(cited.count() == 1 and "reading-an-ephemeris" in cited.inner_text(), "the playground's context cites the PDF with its pages",
          page.locator(".citations").inner_text()[:300])
    if cited.count():
        cited.get_by_role("button", name=re.compile("^Open p")).click()
        shown = cited.locator(".page-figure img").first
        expect(shown).to_be_visible(timeout=30_000)
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle(), timeout=30_000)
        check(cited.locator(".mark-box").count() > 0, "a playground citation opens its page with the cited words marked", cited.locator(".mark-box").count())
    accessible(page, "playground")
    shared = page.url
    other = context.new_page()   # a new tab asks for the token (kept per tab), then shows the shared search
    other.goto(shared)
    other.get_by_label("API token").fill(ADMIN)
    other.get_by_role("button", name="Sign in").click()
    expect(other.locator(".hits li").first).to_be_visible()
    check(other.get_by_label("Query").input_value() == "ephemeris table columns", "a shared address shows the same search in another tab")
    other.close()

    # The chunk inspector: the PDF's snippets by page, with the page the playground showed.
    open_screen(page, "Sources")
    # The kinds to filter by are kb's own, read from its OpenAPI document (conversation included).
    asked = urllib.request.Request(base + "/openapi.json", headers={"Authorization": "Bearer " + ADMIN})
    documented = json.load(urllib.request.urlopen(asked, timeout=10))
    kind = next(p for p in documented["paths"]["/v1/sources"]["get"]["parameters"] if p["name"] == "kind")["schema"]["enum"]
    offered = page.get_by_label("Kind").locator("option").all_inner_texts()
    check(offered == ["any"] + kind and "conversation" in offered, "the kinds to filter sources by are the ones kb documents", offered)
    page.get_by_role("link", name="reading-an-ephemeris", exact=True).click()
    expect(page.get_by_role("heading", name="Snippets of reading-an-ephemeris")).to_be_visible()
    expect(page.get_by_role("heading", name=label, exact=True)).to_be_visible()
    section = page.locator("section").filter(has=page.get_by_role("heading", name=label, exact=True))
    check("ephemeris" in section.inner_text().lower() or "column" in section.inner_text().lower(),
          f"the inspector shows {label}'s snippets under it", section.inner_text()[:200])
    page_text = page.get_by_label(f"Text of page {label[3:]}")
    expect(page_text).to_be_visible()
    first_words = " ".join(section.locator(".snippet-text").first.inner_text().split()[:4])
    check(first_words in " ".join(page_text.inner_text().split()), "the page's own text is shown beside its snippets", (first_words, page_text.inner_text()[:200]))
    accessible(page, "snippets")

    # The page itself: its picture, the snippet's words marked where poppler says they stand.
    card = section.locator(".card").first
    card.get_by_role("button", name=re.compile(r"^Show p")).click()
    figure = card.locator(".page-figure").first
    picture = figure.locator("img")
    expect(picture).to_be_visible(timeout=30_000)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=picture.element_handle(), timeout=30_000)
    check(picture.evaluate("img => img.naturalWidth") == 1000, "a snippet opens its page as a picture 1,000 pixels wide")
    source_id = re.search(r"id=([^&]+)", page.evaluate("location.hash")).group(1)
    asked = urllib.request.Request(f"{base}/v1/sources/{source_id}/pages/{figure.get_attribute('data-page')}/words",
                                   headers={"Authorization": "Bearer " + ADMIN})
    words = json.load(urllib.request.urlopen(asked, timeout=30))["words"]
    frame = figure.locator(".page-frame").bounding_box()
    marks = figure.locator(".mark-box")
    placed = []
    for index in range(marks.count()):
        box = marks.nth(index).bounding_box()
        placed.append((marks.nth(index).get_attribute("data-text"), (box["x"] - frame["x"]) / frame["width"], (box["y"] - frame["y"]) / frame["height"],
                       (box["x"] + box["width"] - frame["x"]) / frame["width"], (box["y"] + box["height"] - frame["y"]) / frame["height"]))
    near = lambda mark, word: mark[0] == word["text"] and all(abs(a - b) < 0.004 for a, b in zip(mark[1:], (word["x0"], word["y0"], word["x1"], word["y1"])))
    check(placed and all(any(near(mark, word) for word in words) for mark in placed),
          "each marked box lies on one of poppler's words of that page, the same word", placed[:3])
    snippet_words = set(" ".join(card.locator(".snippet-text").inner_text().split()).lower().split())
    check(sum(mark[0].lower().strip(".,;:()") in snippet_words for mark in placed) >= 0.8 * len(placed), "the marked words are the snippet's", placed[:5])
    accessible(page, "page picture")

    chat_checks(page, base, upstream)
    private_sources(base, source_id, book)
    # The chunk inspector opens a scan's page too, the snippet's words placed by OCR.
    page.goto(base + "/console/#/snippets?id=ada-scan")
    expect(page.get_by_role("heading", name="Snippets of Ada's scanned page")).to_be_visible()
    card = page.locator(".card").first
    card.get_by_role("button", name=re.compile(r"^Show p")).click()
    shown = card.locator(".page-figure img").first
    expect(shown).to_be_visible(timeout=60_000)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=shown.element_handle(), timeout=30_000)
    check(card.locator(".mark-box").count() >= 3, "the inspector opens a scan's page with its snippet's words marked", card.locator(".mark-box").count())

    # Edit a memory and see its history.
    open_screen(page, "Memories")
    page.get_by_label("Scope (user:ID, bot:NAME or global)").fill("user:ada")
    page.get_by_role("button", name="Show").click()
    page.get_by_role("button", name="Edit Ada drinks green tea every morning.").click()
    page.get_by_label("New content").fill("Ada drinks black tea every morning.")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Ada drinks black tea every morning.")).to_be_visible()
    page.get_by_role("button", name="History of Ada drinks black tea every morning.").click()
    versions = page.get_by_role("list", name="Versions").locator("li")
    expect(versions).to_have_count(2)
    check("green tea" in versions.all_inner_texts()[0] + versions.all_inner_texts()[1], "the history keeps the earlier version", versions.all_inner_texts())
    accessible(page, "memories")

    # Learn from a pasted conversation: review the proposals, remember the chosen ones.
    page.get_by_label("User", exact=True).fill("ada")
    page.get_by_label("Conversation, one turn per line").fill(
        "user: By the way, I'm allergic to peanuts.\nassistant: Noted.\nuser: عندي حساسية من السمسم.")
    page.get_by_role("button", name="Propose memories").click()
    expect(page.get_by_text("proposals for user:ada")).to_be_visible()
    # Each proposal says its language and tags; the model's translation of the Arabic turn is refused, with why.
    expect(page.get_by_text("Arabic · add: \u2068لديها حساسية من السمسم.\u2069 [health, allergy]", exact=False)).to_be_visible()
    expect(page.get_by_text("English · add: \u2068Allergic to peanuts.\u2069", exact=False)).to_be_visible()
    expect(page.get_by_text("English · none: \u2068Allergic to sesame.\u2069 [allergy] — Written in English, but the user said it in Arabic",
                            exact=False)).to_be_visible()
    page.get_by_role("button", name="Remember the chosen ones").click()
    expect(page.get_by_text("2 applied to user:ada.")).to_be_visible()
    page.get_by_label("Scope (user:ID, bot:NAME or global)").fill("user:ada")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("peanuts", exact=False).first).to_be_visible()
    page.get_by_label("Search this scope").fill("peanuts")
    page.get_by_role("button", name="Search memories").click()
    expect(page.get_by_role("heading", name=re.compile("matching “peanuts”"))).to_be_visible()
    check("peanuts" in page.locator(".card p").first.inner_text(), "a memory search puts the matching memory first", page.locator(".card p").first.inner_text())

    open_screen(page, "Bots")
    expect(page.get_by_role("cell", name="astro", exact=True)).to_be_visible()
    page.get_by_role("button", name="Sources astro sees").click()
    expect(page.get_by_role("heading", name="astro sees 4 sources")).to_be_visible()
    expect(page.get_by_role("link", name="reading-an-ephemeris", exact=True)).to_be_visible()
    page.get_by_role("button", name="Preview").click()
    expect(page.get_by_label("The report's context block")).to_contain_text("<context>")
    accessible(page, "bots")

    # Usage: the request log as charts, and the index's figures.
    open_screen(page, "Usage")
    chart = page.get_by_role("img", name="Requests by route")
    expect(chart).to_be_visible()
    check("POST /v1/search" in (chart.get_attribute("aria-label") or ""), "the usage charts count the playground's searches", chart.get_attribute("aria-label"))
    accessible(page, "usage")

    # Make a scoped token (secret shown once) and revoke another.
    open_screen(page, "Tokens")
    for name, scopes in [("temporary", "user:zoe"), ("ada-only", "user:ada")]:
        page.get_by_label("Name", exact=True).fill(name)
        page.get_by_label("Scopes (comma-separated)").fill(scopes)
        page.get_by_label("Bots (comma-separated)").fill("astro")
        page.get_by_role("button", name="Create token").click()
        expect(page.get_by_text(f"Token {name} made")).to_be_visible()
    secret = page.locator(".secret").inner_text().strip()
    check(secret.startswith("kb_"), "the new token's secret is shown once", secret[:6])
    accessible(page, "tokens")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke temporary").click()
    expect(page.get_by_role("row").filter(has_text="temporary")).to_contain_text("revoked")

    # The scoped token's console: its own user's memories, not another's; no tokens screen.
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, base, secret)
    open_screen(page, "Memories")
    page.get_by_label("Scope (user:ID, bot:NAME or global)").fill("user:bob")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_role("alert")).to_contain_text("user:bob")
    check(page.get_by_text("allergic to cats").count() == 0, "a scoped token's console cannot open another user's memories")
    page.get_by_label("Scope (user:ID, bot:NAME or global)").fill("user:ada")
    page.get_by_role("button", name="Show").click()
    expect(page.get_by_text("Ada drinks black tea every morning.")).to_be_visible()
    open_screen(page, "Chat")
    offered = page.locator("#main select").locator("option").all_inner_texts()
    check(offered == ["astro"], "a scoped token's Chat screen offers its bots only", offered)
    scoped_pages(page, base, secret)
    open_screen(page, "Tokens")
    expect(page.get_by_text("only the admin token makes, lists and revokes tokens")).to_be_visible()
    open_screen(page, "Sources")
    expect(page.get_by_text('lacks the right "sources"')).to_be_visible()

    # The only errors are the refusals the steps above ask for (a wrong token, a scoped token's 403s).
    check(not [e for e in errors if ("403" not in e and "401" not in e) or "/v1/" not in e], "no other error on any screen", errors)
    context.close()

    # A phone-sized screen: every screen fits its width (tables scroll inside their box), and the
    # keyboard reaches the menu and the form.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = phone.new_page()
    sign_in(page, base, ADMIN)
    for name, heading in [("Status", None), ("Sources", None), ("Playground", "Retrieval playground"), ("Chat", None), ("Memories", None), ("Bots", None),
                          ("Tokens", None), ("Usage", None)]:
        open_screen(page, name, heading)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 1, f"{name} fits a phone's width", f"{overflow} px too wide")
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "phone-usage.png"), full_page=False)
    page.goto(base + "/console/#/playground")
    expect(page.get_by_role("heading", name="Retrieval playground")).to_be_visible()
    page.locator(".brand").focus()   # from the top of the page
    reached = []
    for _ in range(14):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.textContent.trim() || document.activeElement.id"))
    check("Playground" in reached and any(r.startswith("f") for r in reached), "the keyboard reaches the menu and then the form", reached)
    phone.close()


if __name__ == "__main__":
    main()
