"""Web pages against a local kb, in a real browser (Debian's Chromium driven by Playwright).

`kb serve` on 127.0.0.1 without a token is the documented way to run kb for oneself, and the
one a web page can reach through the user's browser. This starts such a service and a second
web server (the attacker's site, named evil.example and resolved to 127.0.0.1 inside the browser)
whose page tries everything a page can do without the user's help: `fetch` in every mode,
`sendBeacon`, form posts of every encoding into hidden frames, images and scripts pointing at
kb; and a page whose own name is pointed at kb (DNS rebinding) that asks kb as its own origin.
Afterwards kb's memories, bots, tokens and sources must be exactly as before, and no page may
have read a secret kb holds.

Controls, so that the checks can fail: the same page from an origin kb is told to trust
(`--allow-origin`) reads the secret and stores a memory; a page of kb's own origin does too;
and the OpenAI Python client, curl and kb's own CLI keep working.

    KB_BIN=.build/debug/kb python Tests/Browser/browser_safety.py     (scripts/browser-test.sh)
"""

import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from playwright.sync_api import sync_playwright

KB = os.environ.get("KB_BIN", ".build/debug/kb")
CHROMIUM = os.environ.get("KB_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
SECRET = "xyzzy-7d1f-ada-secret"
FAILURES = []


def check(condition, what):
    print(("  ok    " if condition else "  FAIL  ") + what, flush=True)
    if not condition:
        FAILURES.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """`kb serve` on a free loopback port over the index at `db`."""

    def __init__(self, db, work, *args):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(work, f"serve-{self.port}.log"), "w")
        self.process = subprocess.Popen([KB, "serve", "--db", db, "--port", str(self.port), *args],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(600):
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=1)
                return
            except Exception:
                time.sleep(0.1)
        self.stop()
        raise SystemExit(f"kb serve did not start; see {self.log.name}")

    def call(self, method, path, body=None, headers=None):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers or {})
        if body is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def state(self):
        """Everything a page could have changed."""
        memories = self.call("GET", "/v1/memories?all=true")[1]
        return {
            "memories": sorted((m["id"], m["version"], m["content"]) for m in memories),
            "bots": sorted((b["name"], b["systemPrompt"], tuple(b["sources"])) for b in self.call("GET", "/v1/bots")[1]),
            "tokens": sorted((t["name"], t.get("revokedAt")) for t in self.call("GET", "/v1/tokens")[1]),
            "sources": sorted((s["id"], s["contentHash"]) for s in self.call("GET", "/v1/sources?limit=100")[1]["sources"]),
        }

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


# The attacker's page. `KB` is kb's address; `mode` is "attack" (everything a page can try) or
# "trusted" (only what a page allowed by --allow-origin would do: CORS reads and JSON writes).
PAGE = r"""<!doctype html><meta charset="utf-8"><title>a page</title><body><script>
const params = new URLSearchParams(location.search), KB = params.get("kb"), mode = params.get("mode");
const results = [];
const note = (name, value) => results.push({name, ...value});
const body = (what) => JSON.stringify({content: "planted by " + what, scope: "user:ada"});
async function tryFetch(name, url, options) {
  try {
    const response = await fetch(url, options);
    let text = "";
    try { text = await response.text(); } catch (e) {}
    note(name, {status: response.status, type: response.type, text});
  } catch (e) { note(name, {error: String(e)}); }
}
function form(name, action, enctype, fields) {
  return new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = name; frame.style.display = "none";
    document.body.appendChild(frame);
    const f = document.createElement("form");
    f.method = "POST"; f.action = action; f.enctype = enctype; f.target = name;
    for (const [key, value] of fields) {
      const input = document.createElement("input");
      input.type = "hidden"; input.name = key; input.value = value; f.appendChild(input);
    }
    document.body.appendChild(f);
    let settled = false;
    const done = (how) => { if (!settled) { settled = true; note(name, {form: how}); resolve(); } };
    frame.onload = () => done("loaded"); setTimeout(() => done("timeout"), 4000);
    f.submit();
  });
}
function tag(name, kind, url) {
  return new Promise((resolve) => {
    const element = document.createElement(kind);
    element.onload = () => { note(name, {loaded: true}); resolve(); };
    element.onerror = () => { note(name, {loaded: false}); resolve(); };
    element.src = url; document.body.appendChild(element);
    setTimeout(() => { note(name, {loaded: "timeout"}); resolve(); }, 4000);
  });
}
async function attack() {
  const json = {"Content-Type": "application/json"};
  // Simple requests: no preflight, the browser sends them whatever kb says.
  for (const [route, payload] of [["/v1/memories", body("fetch")], ["/v1/bots", JSON.stringify({name: "planted-bot"})],
      ["/v1/tokens", JSON.stringify({name: "planted-token"})], ["/v1/sources", JSON.stringify({id: "planted", text: "planted by fetch"})],
      ["/v1/memories/extract", JSON.stringify({user: "ada", apply: true, turns: [{role: "user", content: "I live in Atlantis."}]})]]) {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      await tryFetch("no-cors " + type + " " + route, KB + route, {method: "POST", mode: "no-cors", headers: {"Content-Type": type}, body: payload});
    }
    await tryFetch("no-cors typeless blob " + route, KB + route, {method: "POST", mode: "no-cors", body: new Blob([payload])});
    navigator.sendBeacon(KB + route, new Blob([payload], {type: "text/plain"}));
    // Needs a preflight, which kb must refuse.
    await tryFetch("cors json " + route, KB + route, {method: "POST", headers: json, body: payload});
  }
  await tryFetch("cors patch bot", KB + "/v1/bots/astro", {method: "PATCH", headers: json, body: JSON.stringify({systemPrompt: "planted"})});
  await tryFetch("cors delete scope", KB + "/v1/memories?scope=user:ada", {method: "DELETE"});
  await tryFetch("no-cors delete", KB + "/v1/memories?scope=user:ada", {method: "DELETE", mode: "no-cors"});
  // Reads.
  for (const route of ["/v1/memories?scope=user:ada", "/v1/tokens", "/v1/status", "/v1/sources", "/openapi.json"]) {
    await tryFetch("read " + route, KB + route, {});
    await tryFetch("read no-cors " + route, KB + route, {mode: "no-cors"});
  }
  await tryFetch("search", KB + "/v1/search", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
      body: JSON.stringify({query: "secret"})});
  // Forms: text/plain shaped into JSON, url-encoded, multipart.
  const shaped = [['{"content": "planted by form", "scope": "user:ada", "x": "', '"}']];
  await form("form text/plain memories", KB + "/v1/memories", "text/plain", shaped);
  await form("form text/plain sources", KB + "/v1/sources?id=planted-form", "text/plain", [["note", "planted by form"]]);
  await form("form text/plain bots", KB + "/v1/bots", "text/plain", [['{"name": "planted-form-bot", "x": "', '"}']]);
  await form("form urlencoded memories", KB + "/v1/memories", "application/x-www-form-urlencoded", [["content", "planted by form"], ["scope", "user:ada"]]);
  await form("form multipart sources", KB + "/v1/sources", "multipart/form-data", [["text", "planted by form"]]);
  await tag("img memories", "img", KB + "/v1/memories?scope=user:ada");
  await tag("script memories", "script", KB + "/v1/memories?scope=user:ada");
}
async function trusted() {
  await tryFetch("read /v1/memories?scope=user:ada", KB + "/v1/memories?scope=user:ada", {});
  await tryFetch("cors json /v1/memories", KB + "/v1/memories", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({content: "stored by a trusted page", scope: "user:ada"})});
  await tryFetch("no-cors text/plain /v1/memories", KB + "/v1/memories", {method: "POST", mode: "no-cors",
      headers: {"Content-Type": "text/plain"}, body: body("a trusted page's simple request")});
}
(mode === "trusted" ? trusted() : attack()).then(() => { window.results = results; window.done = true; });
</script>"""

# A page served at kb's own address under another name (DNS rebinding): it asks kb as its origin.
REBOUND = r"""<!doctype html><meta charset="utf-8"><body><script>
const results = [];
async function go(name, url, options) {
  try { const r = await fetch(url, options); results.push({name, status: r.status, text: await r.text()}); }
  catch (e) { results.push({name, error: String(e)}); }
}
(async () => {
  await go("read", "/v1/memories?scope=user:ada", {});
  await go("read tokens", "/v1/tokens", {});
  await go("write", "/v1/memories", {method: "POST", headers: {"Content-Type": "application/json"},
           body: JSON.stringify({content: "planted by a rebound name", scope: "user:ada"})});
  window.results = results; window.done = true;
})();
</script>"""


class Attacker(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        page = PAGE.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


def run_page(browser, url):
    page = browser.new_page()
    page.goto(url)
    page.wait_for_function("window.done === true", timeout=120_000)
    results = page.evaluate("window.results")
    page.close()
    return results


def readable(result):
    """Whether the page got kb's answer in its hands."""
    return bool(result.get("text")) and result.get("type") != "opaque"


def main():
    work = tempfile.mkdtemp(prefix="kb-browser-")
    db = os.path.join(work, "kb.sqlite")
    notes = os.path.join(work, "notes")
    os.makedirs(notes)
    with open(os.path.join(notes, "venus.md"), "w") as f:
        f.write("# Venus\n\nVenus rules love, beauty and money.\n")
    subprocess.run([KB, "ingest", "--db", db, notes], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([KB, "bot", "create", "astro", "--db", db, "--source", notes, "--system-prompt", "You are a tutor."],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([KB, "memory", "add", "--db", db, "--scope", "user:ada", f"Ada's locker code is {SECRET}."],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([KB, "token", "create", "ada-app", "--db", db, "--scope", "user:ada"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    evil = f"http://evil.example:{attacker.server_address[1]}"

    kb = Service(db, work)   # no token: the case a page can reach
    trusted = None
    try:
        with sync_playwright() as playwright:
            # Chromium's own guard against public pages calling local addresses (Local Network
            # Access) is off: kb must hold without it, as in other browsers and older versions.
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
                "--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebound.example 127.0.0.1",
                "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights"])

            print("A page of another site attacks a kb without a token", flush=True)
            before = kb.state()
            check(any(SECRET in m[2] for m in before["memories"]), "the secret is there to be stolen")
            results = run_page(browser, f"{evil}/?kb={kb.url}&mode=attack")
            check(len(results) > 40, f"the page ran its {len(results)} attempts")
            leaked = [r["name"] for r in results if SECRET in json.dumps(r)]
            check(not leaked, "no attempt saw the secret" + (f" (leaked: {leaked})" if leaked else ""))
            read = [r["name"] for r in results if readable(r)]
            check(not read, "no attempt could read kb's answer" + (f" (read: {read})" if read else ""))
            time.sleep(1)   # beacons are sent after the page has gone on
            after = kb.state()
            for key in before:
                check(after[key] == before[key], f"{key} unchanged")

            print("A page whose name is rebound to kb's address", flush=True)
            page = browser.new_page()
            rebound = f"http://rebound.example:{kb.port}/"
            page.route(rebound, lambda route: route.fulfill(status=200, content_type="text/html", body=REBOUND))
            page.goto(rebound)
            page.wait_for_function("window.done === true", timeout=60_000)
            results = page.evaluate("window.results")
            page.close()
            check(all(r.get("status") == 421 for r in results), "every request answered 421: " + ", ".join(
                f"{r['name']} {r.get('status', r.get('error'))}" for r in results))
            check(not any(SECRET in json.dumps(r) for r in results), "nothing read")
            check(kb.state() == before, "nothing stored")

            print("Controls: pages kb trusts", flush=True)
            page = browser.new_page()
            # A page of kb's own origin (the console's place), delivered by the browser's test hook.
            page.route(kb.url + "/own-page", lambda route: route.fulfill(status=200, content_type="text/html", body="<!doctype html><p>kb"))
            page.goto(kb.url + "/own-page")
            own = page.evaluate("""async () => {
                const r = await fetch('/v1/memories', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                     body: JSON.stringify({content: 'stored by kb\\'s own page', scope: 'user:ada'})});
                const read = await fetch('/v1/memories?scope=user:ada');
                return {status: r.status, read: await read.text()};
            }""")
            page.close()
            check(own["status"] == 201 and SECRET in own["read"], f"a page of kb's own origin writes ({own['status']}) and reads")
            kb.stop()
            trusted = Service(db, work, "--allow-origin", evil)
            results = {r["name"]: r for r in run_page(browser, f"{evil}/?kb={trusted.url}&mode=trusted")}
            check(SECRET in results["read /v1/memories?scope=user:ada"].get("text", ""), "a page of an allowed origin reads the memories")
            check(results["cors json /v1/memories"].get("status") == 201, "a page of an allowed origin stores a memory")
            contents = [m[2] for m in trusted.state()["memories"]]
            check("stored by a trusted page" in contents, "the allowed page's memory is in kb")
            check(not any("simple request" in c for c in contents), "its text/plain request was still refused (415)")
            browser.close()

        print("Programs keep working", flush=True)
        from openai import OpenAI
        client = OpenAI(base_url=trusted.url + "/v1", api_key="not-needed")
        vectors = client.embeddings.create(model="all-MiniLM-L6-v2", input=["Venus rules love.", "Saturn rules time."])
        check(len(vectors.data) == 2 and len(vectors.data[0].embedding) == 384, "the OpenAI Python client gets embeddings")
        curl = subprocess.run(["curl", "-s", "-w", "\n%{http_code}", trusted.url + "/v1/search", "-H", "Content-Type: application/json",
                               "-d", '{"query": "Venus", "k": 1}'], capture_output=True, text=True)
        check(curl.stdout.endswith("\n200") and "Venus" in curl.stdout, "curl searches")
        remote = subprocess.run([KB, "ingest", "--db", os.path.join(work, "remote.sqlite"), "--embedder", "openai:all-MiniLM-L6-v2",
                                 "--embedder-url", trusted.url + "/v1", notes], capture_output=True, text=True)
        check(remote.returncode == 0, "kb ingest embeds through kb serve (kb's own HTTP client)" + (f": {remote.stderr}" if remote.returncode else ""))
    finally:
        kb.stop() if kb.process.poll() is None else None
        if trusted:
            trusted.stop()
        attacker.shutdown()
        shutil.rmtree(work, ignore_errors=True)

    if FAILURES:
        print(f"{len(FAILURES)} browser check(s) failed.", file=sys.stderr)
        sys.exit(1)
    print("All browser checks passed.")


if __name__ == "__main__":
    main()
