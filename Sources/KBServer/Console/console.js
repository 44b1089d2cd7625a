// kb's console: plain JavaScript that speaks only to kb's public HTTP API with the token the user
// signs in with (kept in this tab's sessionStorage, never in a URL). Every text from the index is
// put on the page as text (textContent), never as markup.

const main = document.getElementById("main");
const alertBox = document.getElementById("alert");
let me = null;
// kb's words for kinds of source and search modes, read from its OpenAPI document (not retyped here).
let vocabulary = null;

// ---- the API ----------------------------------------------------------------------------

function token() { return sessionStorage.getItem("kb-token") || ""; }

async function api(method, path, body, contentType) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  let payload;
  if (body instanceof Blob) {
    payload = body;
    headers["Content-Type"] = contentType;
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: "omit", cache: "no-store" });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : `${method} ${path} answered ${response.status}.`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

/// Shows `hash`, drawing the screen again when it is already the current one.
function go(hash) {
  if (location.hash === hash) guarded(render); else location.hash = hash;
}

function say(message) {
  alertBox.textContent = message;
  alertBox.hidden = !message;
}

async function guarded(work) {
  say("");
  try { return await work(); } catch (error) {
    if (error.status === 401) { signOut("Your token was refused: " + error.message); return; }
    say(error.message);
  }
}

// ---- building pages ---------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

let fieldCount = 0;
function field(label, input) {
  const id = input.id || `f${++fieldCount}`;
  input.id = id;
  return el("label", { for: id }, label, input);
}

function page(title, ...children) {
  main.replaceChildren(el("h1", { text: title }), ...children.flat().filter(c => c !== null && c !== undefined && c !== false));
  document.title = `${title} · kb console`;
  main.focus();
}

function table(headers, rows, optional = []) {
  return el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", { scope: "col", class: optional.includes(i) ? "optional" : null, text: h })))),
    el("tbody", {}, rows.map(cells => el("tr", {}, cells.map((c, i) => el("td", { class: optional.includes(i) ? "optional" : null }, c)))))));
}

function pageLabel(pages) {
  if (!pages) return "";
  const start = pages.startLabel || String(pages.start);
  const end = pages.endLabel || String(pages.end);
  return start === end ? `p. ${start}` : `pp. ${start}–${end}`;
}

function may(right) { return me && (me.admin || me.allow.includes(right)); }

function hiddenNote(what, why) { return el("p", { class: "note", text: `${what} is hidden: ${why}` }); }

// ---- sign-in ----------------------------------------------------------------------------

// The kinds a source may have (GET /v1/sources?kind=) and the search modes with the default, as
// kb's OpenAPI document declares them.
async function loadVocabulary() {
  const documented = await api("GET", "/openapi.json");
  const kind = (documented.paths["/v1/sources"].get.parameters || []).find(p => p.name === "kind");
  const mode = documented.components.schemas.SearchRequest.properties.mode;
  return { kinds: kind.schema.enum, modes: mode.enum, mode: mode.default };
}

function signOut(message) {
  sessionStorage.removeItem("kb-token");
  me = null;
  vocabulary = null;
  location.hash = "#/signin";
  render();
  if (message) say(message);
}

function signIn() {
  const input = el("input", { type: "password", autocomplete: "off", required: true });
  const form = el("form", { class: "grid", onsubmit: async event => {
    event.preventDefault();
    sessionStorage.setItem("kb-token", input.value.trim());
    await guarded(async () => {
      me = await api("GET", "/v1/me");
      // Back to the screen that was asked for (a shared playground address, say), else Status.
      if (!location.hash || location.hash.startsWith("#/signin")) location.hash = "#/status"; else render();
    });
  } }, field("API token (the admin token, or a scoped kb_… token)", input), el("button", { type: "submit", text: "Sign in" }));
  page("Sign in", el("section", {}, form,
    el("p", { class: "note", text: "The token stays in this browser tab only; it is sent with each request to kb and never put in an address." })));
}

// ---- status -----------------------------------------------------------------------------

async function status() {
  const data = await api("GET", "/v1/status");
  const index = data.index || data;
  const q = data.queryEmbedder || {};
  const stat = (name, value) => el("div", { class: "stat" }, el("b", { text: value }), name);
  page("Status",
    el("div", { class: "stats" },
      stat("sources", index.sources), stat("snippets", index.snippets), stat("tags", index.tags),
      stat("on disk", index.sizeOnDisk ? `${(index.sizeOnDisk / 1048576).toFixed(1)} MB` : "—"),
      stat("query embedder", q.available === false ? "keywords only" : "available"),
      stat("jobs queued or running", String((data.jobs?.queued || 0) + (data.jobs?.running || 0) + (data.jobs?.receiving || 0)))),
    el("h2", { text: "Model and languages" }),
    el("p", { text: index.embedder ? `Embedder: ${index.embedder.name}${index.embedder.dimension ? ` (${index.embedder.dimension} dimensions)` : " (keyword-only)"}, kept by this index (kb reindex --model NAME moves it). Keywords: ${index.keywordLanguage || "english"}.` : "No embedder yet: the first ingest chooses it." }),
    index.languageWarning ? el("p", { class: "alert", role: "alert", text: index.languageWarning }) : el("span"),
    table(["language", "snippets"], Object.entries(index.languages || {}).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, String(v)])),
    el("h2", { text: "Sources by kind" }),
    table(["kind", "sources"], Object.entries(index.sourcesByKind || {}).map(([k, v]) => [k, String(v)])),
    el("p", { class: "note", text: `Index: ${index.path || ""}` }));
}

// ---- sources ----------------------------------------------------------------------------

const mediaTypes = { pdf: "application/pdf", md: "text/markdown", markdown: "text/markdown", txt: "text/plain", png: "image/png",
  jpg: "image/jpeg", jpeg: "image/jpeg", tif: "image/tiff", tiff: "image/tiff", epub: "application/epub+zip", html: "text/html",
  htm: "text/html", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", csv: "text/csv",
  jsonl: "application/x-ndjson", ndjson: "application/x-ndjson" };

// What was uploaded in this visit, kept while the list is redrawn.
const uploads = el("div", { "aria-live": "polite" });

async function sources() {
  if (!may("sources")) { page("Sources", hiddenNote("The source list", `the token ${me.name} lacks the right "sources".`)); return; }
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const kind = el("select", {}, ["", ...vocabulary.kinds].map(k => el("option", { value: k, text: k || "any", selected: params.get("kind") === k })));
  const user = el("input", { value: params.get("user") || "" });
  const bot = el("input", { value: params.get("bot") || "" });
  const tag = el("input", { value: params.get("tag") || "" });
  const query = new URLSearchParams({ limit: "200" });
  for (const name of ["kind", "user", "bot", "tag"]) if (params.get(name)) query.set(name, params.get(name));
  const list = await api("GET", "/v1/sources?" + query);
  const filters = el("form", { class: "grid", onsubmit: event => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, node] of Object.entries({ kind, user, bot, tag })) if (node.value.trim()) next.set(name, node.value.trim());
    go("#/sources?" + next);
  } }, field("Kind", kind), field("User", user), field("Seen by bot", bot), field("Tag", tag), el("button", { type: "submit", text: "Filter" }));

  const uploadUser = el("input", {});
  const progress = uploads;
  const fileInput = el("input", { type: "file", multiple: true });
  const drop = el("div", { class: "drop" }, el("p", { text: "Drop files here (PDF, scans, Markdown, EPUB, HTML, DOCX, CSV, JSON Lines), or choose them:" }),
    field("Files", fileInput));
  const upload = async files => {
    for (const file of files) await guarded(() => uploadOne(file, uploadUser.value.trim(), progress));
    await guarded(sources);
  };
  fileInput.addEventListener("change", () => upload([...fileInput.files]));
  drop.addEventListener("dragover", event => { event.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", event => { event.preventDefault(); drop.classList.remove("over"); upload([...event.dataTransfer.files]); });

  const rows = list.sources.map(s => [
    el("a", { href: "#/snippets?id=" + encodeURIComponent(s.id), text: s.title }), s.kind,
    s.state === "ready" ? String(s.snippets ?? "") : s.state, s.user || "", (s.ingestedAt || "").slice(0, 19).replace("T", " "),
    el("div", { class: "row" }, s.origin === "upload" && s.state === "ready" && !me.readOnly ? el("button", { class: "plain", type: "button", "aria-label": `Re-read ${s.title}`, text: "Re-read",
      onclick: () => guarded(async () => {
        const again = await api("POST", "/v1/sources/" + encodeURIComponent(s.id) + "/reread", {});
        await follow(again.job, `${s.title} (re-read)`, uploads);
        await sources();
      }) }) : null,
    el("button", { class: "danger", type: "button", "aria-label": `Delete ${s.title}`, text: "Delete", onclick: () => guarded(async () => {
      if (!confirm(`Delete ${s.title} with its snippets?`)) return;
      await api("DELETE", "/v1/sources/" + encodeURIComponent(s.id));
      await sources();
    }) })),
  ]);
  page("Sources",
    el("section", {}, el("h2", { text: "Add" }), el("form", { class: "grid", onsubmit: e => e.preventDefault() }, field("For user (optional: private to them)", uploadUser)), drop, progress),
    el("section", {}, el("h2", { text: `Sources (${list.total})` }), filters, table(["title (its snippets)", "kind", "snippets", "user", "added", ""], rows, [3, 4])));
}

async function uploadOne(file, user, progress) {
  const extension = file.name.split(".").pop().toLowerCase();
  const type = mediaTypes[extension] || file.type;
  const query = new URLSearchParams({ title: file.name.replace(/\.[^.]+$/, "") });
  if (user) query.set("user", user);
  const added = await api("POST", "/v1/sources?" + query, file, type);
  await follow(added.job, file.name, progress);
}

/// Shows a job's progress (pages, snippets) until it is done or failed, with its error.
async function follow(first, name, progress) {
  const line = el("p", { text: `${name}: ${first.state}…` });
  const bar = el("progress", { max: "1", value: "0", "aria-label": `${name} progress` });
  progress.append(line, bar);
  let job = first;
  while (job.state !== "done" && job.state !== "failed") {
    const p = job.progress || {};
    const total = (p.pagesTotal || 0) + (p.snippetsTotal || 0);
    const done = (p.pagesDone || 0) + (p.snippetsDone || 0);
    bar.max = String(Math.max(total, 1));
    bar.value = String(done);
    line.textContent = `${name}: ${job.state}, pages ${p.pagesDone || 0}/${p.pagesTotal || 0}, snippets ${p.snippetsDone || 0}/${p.snippetsTotal || 0}`;
    await new Promise(resolve => setTimeout(resolve, 400));
    job = await api("GET", "/v1/jobs/" + encodeURIComponent(job.id));
  }
  bar.max = "1";
  bar.value = "1";
  if (job.state === "failed") {
    line.textContent = `${name}: failed — ${job.error || "no reason given"}`;
    line.className = "alert";
  } else {
    line.textContent = `${name}: done, ${job.progress.snippetsDone ?? job.progress.snippetsTotal ?? ""} snippets.`;
    line.className = "ok";
  }
}

// ---- the chunk inspector ----------------------------------------------------------------

async function snippets() {
  const id = new URLSearchParams(location.hash.split("?")[1] || "").get("id");
  const data = await api("GET", "/v1/sources/" + encodeURIComponent(id) + "/snippets");
  const s = data.source;
  const facts = [s.kind, `${data.snippets.length} snippets`, s.user ? `private to ${s.user}` : null, s.state !== "ready" ? `job ${s.state}` : null,
    s.ocr ? `OCR ${s.ocr}${s.ocrConfidence != null ? `, weakest page ${s.ocrConfidence}` : ""}` : null].filter(Boolean).join(" · ");
  const pages = new Map();
  for (const snippet of data.snippets) {
    const key = snippet.pages ? pageLabel(snippet.pages) : "";
    if (!pages.has(key)) pages.set(key, []);
    pages.get(key).push(snippet);
  }
  // A PDF's page text beside the snippets made from it (the page a snippet starts on).
  const pageText = snippet0 => {
    const number = snippet0.pages ? snippet0.pages.start : null;
    const found = number && data.pages ? data.pages.find(p => p.number === number) : null;
    if (!found) return null;
    return el("div", { class: "page-text" }, el("h3", { text: `Page text (p. ${found.label})` }),
      found.text.trim() ? el("pre", { class: "block", tabindex: "0", "aria-label": `Text of page ${found.label}`, text: found.text })
                        : el("p", { class: "note", text: "No text layer: the snippets came from OCR." }));
  };
  const groups = [...pages.entries()].map(([label, list]) => el("section", { class: data.pages ? "beside" : null }, label ? el("h2", { text: label }) : null,
    pageText(list[0]), el("div", { class: "snippets" },
    list.map(snippet => el("div", { class: "card" },
      el("div", { class: "row" }, el("span", { class: "badge", text: `#${snippet.ordinal}` }),
        snippet.headingPath && snippet.headingPath.length ? el("span", { class: "muted", text: snippet.headingPath.join(" › ") }) : null,
        (snippet.tags || []).map(t => el("span", { class: "badge", text: t })),
        snippet.weight != null && snippet.weight !== 1 ? el("span", { class: "badge", text: `weight ${snippet.weight}` }) : null,
        snippet.ocr ? el("span", { class: "badge", text: `OCR ${snippet.ocr.confidence ?? ""}` }) : null),
      el("p", { class: "snippet-text", text: snippet.text }))))));
  page(`Snippets of ${s.title}`, el("p", { class: "note", text: facts }), el("p", {}, el("a", { href: "#/sources", text: "← Sources" })),
    data.snippets.length ? groups : el("p", { text: s.state !== "ready" ? "Its job is still reading it." : "It has no snippets." }));
}

// ---- usage ------------------------------------------------------------------------------

function bars(title, rows, value, format = v => String(v), empty = "No requests logged.") {
  // A bar chart as SVG, one bar per row, with the numbers written beside the bars.
  const width = 640, bar = 22, gap = 6, label = 200;
  const max = Math.max(1, ...rows.map(value));
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${Math.max(1, rows.length) * (bar + gap)}`);
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${title}: ` + rows.map(r => `${r.key || "(none)"} ${format(value(r))}`).join(", "));
  svg.setAttribute("class", "chart");
  rows.forEach((row, i) => {
    const y = i * (bar + gap);
    const text = (x, content, anchor) => {
      const node = document.createElementNS("http://www.w3.org/2000/svg", "text");
      node.setAttribute("x", x); node.setAttribute("y", y + bar * 0.7); node.setAttribute("text-anchor", anchor);
      node.textContent = content;
      return node;
    };
    const rect = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    const w = Math.max(1, (width - label - 90) * value(row) / max);
    rect.setAttribute("x", label); rect.setAttribute("y", y); rect.setAttribute("width", w); rect.setAttribute("height", bar);
    svg.append(text(label - 8, row.key || "(none)", "end"), rect, text(label + w + 6, format(value(row)), "start"));
  });
  return el("figure", {}, el("figcaption", { text: title }), rows.length ? svg : el("p", { class: "note", text: empty }));
}

async function usage() {
  if (!me.admin) { page("Usage", hiddenNote("Usage", "only the admin token reads the request log.")); return; }
  const since = new URLSearchParams(location.hash.split("?")[1] || "").get("since") || "30d";
  const [days, routes, botRows, status] = await Promise.all([
    api("GET", `/v1/usage?by=day&since=${encodeURIComponent(since)}`), api("GET", `/v1/usage?by=route&since=${encodeURIComponent(since)}`),
    api("GET", `/v1/usage?by=bot&since=${encodeURIComponent(since)}`), api("GET", "/v1/status")]);
  const choose = el("select", { onchange: event => { location.hash = "#/usage?since=" + event.target.value; } },
    ["1d", "7d", "30d", "90d"].map(v => el("option", { value: v, text: `last ${v}`, selected: v === since })));
  const ms = v => `${v.toFixed(1)} ms`;
  const index = status.index || status;
  page("Usage",
    el("form", { class: "grid", onsubmit: e => e.preventDefault() }, field("Period", choose)),
    el("div", { class: "stats" }, ...[["sources", index.sources], ["snippets", index.snippets],
      ["on disk", `${((index.sizeOnDisk || 0) / 1048576).toFixed(1)} MB`], ["requests", days.rows.reduce((n, r) => n + r.requests, 0)]]
      .map(([name, value]) => el("div", { class: "stat" }, el("b", { text: value }), name))),
    el("section", {}, bars("Requests per day", days.rows, r => r.requests), bars("Requests by route", routes.rows, r => r.requests),
      bars("Requests by bot", botRows.rows, r => r.requests), bars("Latency per day, median (p50)", days.rows, r => r.p50LatencyMilliseconds, ms),
      bars("Latency per day, p99", days.rows, r => r.p99LatencyMilliseconds, ms), bars("Latency by route, p99", routes.rows, r => r.p99LatencyMilliseconds, ms), bars("Degraded answers per day", days.rows, r => r.degraded),
      bars("Context tokens served per day", days.rows, r => r.tokens)),
    el("section", {}, bars("Embedding tokens by remote embedder, over the index's life",
      Object.entries(days.embeddingTokens || {}).map(([key, tokens]) => ({ key, tokens })), r => r.tokens, String,
      "No remote embedder has been used (the local model counts no tokens).")));
}

// ---- playground -------------------------------------------------------------------------

/// Why a hit is there, in a line: its place in each ranking, the fused score, weight, filters.
function why(e) {
  const parts = [];
  parts.push(e.keywordRank ? `keyword #${e.keywordRank} (score ${e.keywordScore.toFixed(2)})` : "no keyword match");
  parts.push(e.vectorRank ? `vector #${e.vectorRank} (cosine ${e.cosine.toFixed(3)})` : "not in the vector ranking");
  parts.push(`fused ${e.fused.toFixed(4)}`);
  if (e.weight != null && e.weight !== 1) parts.push(`weight ${e.weight}`);
  if (e.query) parts.push(`found by "${e.query}"`);
  if (e.filters && e.filters.length) parts.push("filters: " + e.filters.join("; "));
  return "Why: " + parts.join(" · ");
}

async function playground() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const input = (name, attributes = {}) => el("input", { name, value: params.get(name) || attributes.value || "", ...attributes });
  const q = input("q", { required: true });
  const mode = el("select", { name: "mode" }, vocabulary.modes.map(m => el("option", { value: m, text: m, selected: (params.get("mode") || vocabulary.mode) === m })));
  const k = input("k", { type: "number", min: "1", max: "100", value: "8" });
  const bot = input("bot");
  const user = input("user");
  const kinds = input("kinds");
  const tags = input("tags");
  const budget = input("budget", { type: "number", min: "100", value: "1500" });
  const candidates = input("candidates", { type: "number", min: "1", max: "10000", value: "50" });
  const keywordWeight = input("kw", { type: "number", min: "0", step: "0.1", value: "1" });
  const vectorWeight = input("vw", { type: "number", min: "0", step: "0.1", value: "1" });
  const diversity = input("diversity", { type: "number", min: "0", max: "1", step: "0.05" });
  const groupBy = el("select", { name: "group" }, [["", "every snippet"], ["source", "one per source"]].map(([v, t]) => el("option", { value: v, text: t, selected: (params.get("group") || "") === v })));
  const history = el("textarea", { name: "history", rows: "3" }, params.get("history") || "");
  const form = el("form", { class: "grid", onsubmit: event => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, node] of Object.entries({ q, mode, k, bot, user, kinds, tags, budget, history, candidates, kw: keywordWeight, vw: vectorWeight, diversity, group: groupBy })) {
      if (node.value) next.set(name, node.value);
    }
    go("#/playground?" + next);   // the settings, never the token, so a result can be shared
  } },
    el("div", { class: "wide" }, field("Query", q)), field("Mode", mode), field("Results (k)", k), field("Bot", bot), field("User", user),
    field("Kinds (comma-separated)", kinds), field("Tags (comma-separated)", tags), field("Context budget (tokens)", budget),
    field("Candidates per ranking", candidates), field("Keyword weight", keywordWeight), field("Vector weight", vectorWeight),
    field("Diversity λ (blank: off)", diversity), field("Group", groupBy),
    el("div", { class: "wide" }, field("Earlier turns, one per line (user: … / assistant: …)", history)),
    el("button", { type: "submit", text: "Search" }));
  const results = el("div");
  page("Retrieval playground", el("section", {}, form), results);
  if (!params.get("q")) return;

  const list = value => value ? value.split(",").map(s => s.trim()).filter(Boolean) : undefined;
  const search = { query: params.get("q"), mode: params.get("mode") || vocabulary.mode, k: Number(params.get("k") || 8), bot: params.get("bot") || undefined,
    user: params.get("user") || undefined, kinds: list(params.get("kinds")), tags: list(params.get("tags")), explain: true,
    candidates: params.get("candidates") ? Number(params.get("candidates")) : undefined,
    keywordWeight: params.get("kw") ? Number(params.get("kw")) : undefined, vectorWeight: params.get("vw") ? Number(params.get("vw")) : undefined,
    diversity: params.get("diversity") ? Number(params.get("diversity")) : undefined, groupBy: params.get("group") || undefined };
  const found = await api("POST", "/v1/search", search);
  const hits = el("ol", { class: "hits" }, found.hits.map(hit => el("li", {},
    el("div", { class: "hit-head" }, el("strong", { text: `${hit.rank}. ${hit.sourceTitle}` }), el("span", { class: "badge", text: hit.kind }),
      hit.snippet.pages ? el("span", { class: "badge", text: pageLabel(hit.snippet.pages) }) : null,
      el("span", { class: "muted", text: `score ${Number(hit.score).toFixed(4)}${hit.snippet.weight && hit.snippet.weight !== 1 ? `, weight ${hit.snippet.weight}` : ""}` })),
    hit.snippet.headingPath && hit.snippet.headingPath.length ? el("div", { class: "note", text: hit.snippet.headingPath.join(" › ") }) : null,
    hit.explanation ? el("div", { class: "why", text: why(hit.explanation) }) : null,
    el("p", { text: hit.excerpt.replaceAll("**", "") }),
    el("div", { class: "note", text: hit.sourcePath })))) ;
  results.append(el("section", {}, el("h2", { text: `Search: ${found.hits.length} hits (${found.mode}${found.degraded ? ", from keywords only" : ""})` }), hits));

  if (search.bot) {
    const turns = (params.get("history") || "").split("\n").map(l => l.trim()).filter(Boolean).map(l => {
      const [role, ...rest] = l.split(":");
      return { role: role.trim().toLowerCase() === "assistant" ? "assistant" : "user", content: rest.join(":").trim() || l };
    });
    const request = { bot: search.bot, query: search.query, user: search.user, budget: Number(params.get("budget") || 1500),
      history: turns.length ? turns : undefined, tags: search.tags, kinds: search.kinds };
    const context = await api("POST", "/v1/context", request);
    const share = Math.min(100, Math.round(100 * context.tokens / context.budget));
    results.append(el("section", {}, el("h2", { text: `Context for ${search.bot}${search.user ? " and " + search.user : ""}` }),
      el("p", { text: `${context.tokens} of ${context.budget} tokens (${context.counter})${context.degraded ? ", from keywords only" : ""}` }),
      el("div", { class: "meter", role: "img", "aria-label": `${share}% of the budget` }, el("span", { style: null })),
      el("pre", { class: "block", tabindex: "0", "aria-label": "The context block as the bot gets it", text: context.context }),
      el("h2", { text: "Citations" }),
      table(["#", "kind", "title", "pages", "path"], context.citations.map(c => [String(c.number), c.kind, c.title, c.pageLabel || "", c.path]), [4])));
    results.querySelector(".meter span").style.width = share + "%";
  }
}

// ---- memories ---------------------------------------------------------------------------

async function memories() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const suggested = me && !me.admin && me.scopes.length ? me.scopes[0].replace("user:*", "user:") : "";
  const scope = el("input", { value: params.get("scope") || suggested, required: true });
  const form = el("form", { class: "grid", onsubmit: event => { event.preventDefault(); go("#/memories?scope=" + encodeURIComponent(scope.value.trim())); } },
    field("Scope (user:ID, bot:NAME or global)", scope), el("button", { type: "submit", text: "Show" }));
  page("Memories", el("section", {}, form, me && !me.admin ? el("p", { class: "note", text: `This token reads only the scopes ${me.scopes.join(", ") || "(none)"}.` }) : null),
    learnFromConversation());
  if (!params.get("scope")) return;
  const chosen = params.get("scope");
  const wanted = params.get("q");
  let list = await api("GET", "/v1/memories?scope=" + encodeURIComponent(chosen));
  if (wanted) {
    const found = await api("POST", "/v1/memories/search", { query: wanted, scopes: [chosen], k: 50 });
    list = found.hits.map(hit => hit.memory);
  }
  const search = el("input", { type: "search", value: wanted || "" });
  const section = el("section", {}, el("h2", { text: `${chosen}: ${list.length} memories${wanted ? ` matching “${wanted}”` : ""}` }),
    el("form", { class: "grid", role: "search", onsubmit: event => { event.preventDefault();
      go("#/memories?scope=" + encodeURIComponent(chosen) + (search.value.trim() ? "&q=" + encodeURIComponent(search.value.trim()) : "")); } },
      field("Search this scope", search), el("button", { type: "submit", text: "Search memories" })));
  for (const memory of list) {
    const detail = el("div");
    const item = el("div", { class: "card" },
      el("p", { text: memory.content }),
      el("div", { class: "row" }, el("span", { class: "badge", text: `v${memory.version}` }), (memory.tags || []).map(t => el("span", { class: "badge", text: t })),
        el("button", { class: "plain", type: "button", text: "History", "aria-label": `History of ${memory.content}`, onclick: () => guarded(async () => {
          const full = await api("GET", "/v1/memories/" + encodeURIComponent(memory.id));
          // The earlier versions, oldest first, then the current one.
          const versions = [...(full.history || []), full.memory];
          detail.replaceChildren(el("ol", { class: "history", "aria-label": "Versions" }, versions.map(v =>
            el("li", { text: `v${v.version} (${(v.updatedAt || "").slice(0, 19).replace("T", " ")})${v === full.memory ? ", current" : ""}: ${v.content}` }))));
        }) }),
        el("button", { class: "plain", type: "button", text: "Edit", "aria-label": `Edit ${memory.content}`, onclick: () => {
          const text = el("textarea", {}, memory.content);
          detail.replaceChildren(el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
            await api("PATCH", "/v1/memories/" + encodeURIComponent(memory.id), { content: text.value });
            await memories();
          }); } }, el("div", { class: "wide" }, field("New content", text)), el("button", { type: "submit", text: "Save" })));
          text.focus();
        } }),
        el("button", { class: "danger", type: "button", text: "Forget", "aria-label": `Forget ${memory.content}`, onclick: () => guarded(async () => {
          if (!confirm(`Forget "${memory.content}" and its history?`)) return;
          await api("DELETE", "/v1/memories/" + encodeURIComponent(memory.id));
          await memories();
        }) })),
      detail);
    section.append(item);
  }
  if (chosen.startsWith("user:") && list.length) {
    section.append(el("button", { class: "danger", type: "button", text: `Erase ${chosen}`, onclick: () => guarded(async () => {
      if (!confirm(`Erase everything of ${chosen}: ${list.length} memories with all their versions, and ${chosen.slice(5)}'s private sources. This cannot be undone.`)) return;
      const erased = await api("DELETE", "/v1/memories?scope=" + encodeURIComponent(chosen));
      say("");
      await memories();
      main.append(el("p", { class: "ok", text: `Erased ${erased.memories} memories (${erased.versions} versions).` }));
    }) }));
  }
  main.append(section);
}

function learnFromConversation() {
  // Paste a conversation, review what kb would remember, store the chosen proposals.
  const user = el("input", { required: true });
  const turns = el("textarea", { rows: "4", placeholder: "user: I'm allergic to peanuts.\nassistant: Noted." });
  const review = el("div", { "aria-live": "polite" });
  const parse = () => turns.value.split("\n").map(l => l.trim()).filter(Boolean).map(l => {
    const [role, ...rest] = l.split(":");
    return { role: role.trim().toLowerCase() === "assistant" ? "assistant" : "user", content: rest.join(":").trim() || l };
  });
  return el("section", {}, el("h2", { text: "Learn from a conversation" }),
    el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
      const proposed = await api("POST", "/v1/memories/extract", { user: user.value.trim(), turns: parse() });
      const boxes = proposed.proposals.map(p => el("input", { type: "checkbox", checked: p.action !== "none" }));
      review.replaceChildren(el("p", { text: `${proposed.proposals.length} proposals for ${proposed.scope} (by ${proposed.extractor}):` }),
        el("ul", {}, proposed.proposals.map((p, i) => el("li", {}, field(`${p.action}: ${p.content} — ${p.reason}`, boxes[i])))),
        el("button", { type: "button", text: "Remember the chosen ones", onclick: () => guarded(async () => {
          let stored = 0;
          for (const [i, p] of proposed.proposals.entries()) {
            if (!boxes[i].checked || p.action === "none") continue;
            if (p.action === "add") await api("POST", "/v1/memories", { content: p.content, scope: proposed.scope, tags: p.tags });
            else if (p.action === "update") await api("PATCH", "/v1/memories/" + encodeURIComponent(p.replaces), { content: p.content });
            else if (p.action === "forget") await api("DELETE", "/v1/memories/" + encodeURIComponent(p.replaces));
            stored += 1;
          }
          const note = `${stored} applied to ${proposed.scope}.`;
          location.hash = "#/memories?scope=" + encodeURIComponent(proposed.scope);
          await render();
          say("");
          main.querySelector("h1").after(el("p", { class: "ok", role: "status", text: note }));
        }) }));
    }); } }, field("User", user), el("div", { class: "wide" }, field("Conversation, one turn per line (user: … / assistant: …)", turns)),
      el("button", { type: "submit", text: "Propose memories" })),
    review);
}

// ---- bots -------------------------------------------------------------------------------

async function bots() {
  const list = await api("GET", "/v1/bots");
  const canEdit = may("bots") && !(me && me.readOnly);
  const seen = el("div", { "aria-live": "polite" });
  const rows = list.map(bot => [bot.name, bot.systemPrompt, (bot.sources || []).join("\n"), (bot.memoryScopes || []).join(", "),
    el("div", { class: "row" },
      may("sources") ? el("button", { class: "plain", type: "button", text: "Sources it sees", "aria-label": `Sources ${bot.name} sees`, onclick: () => guarded(async () => {
        const sources = await api("GET", "/v1/sources?limit=500&bot=" + encodeURIComponent(bot.name));
        seen.replaceChildren(el("h2", { text: `${bot.name} sees ${sources.total} sources` }),
          table(["title", "kind", "snippets"], sources.sources.map(s => [el("a", { href: "#/snippets?id=" + encodeURIComponent(s.id), text: s.title }), s.kind, String(s.snippets)])));
      }) }) : null,
      canEdit ? el("button", { class: "plain", type: "button", text: "Edit", "aria-label": `Edit ${bot.name}`, onclick: () => editBot(bot) }) : null)]);
  page("Bots", table(["name", "system prompt", "sources", "memory scopes", ""], rows, [3]), seen,
    canEdit ? editor() : hiddenNote("Making and changing bots", `the token ${me.name} lacks the right "bots".`),
    may("reports") ? await reportsSection() : hiddenNote("Report previews", `the token ${me.name} lacks the right "reports".`));
}

async function reportsSection() {
  // A report template's sections, and the context it assembles now (optionally narrowed by tags).
  const reports = await api("GET", "/v1/reports");
  if (!reports.length) return el("section", {}, el("h2", { text: "Reports" }), el("p", { class: "note", text: "kb serve was started without report templates (--reports FOLDER)." }));
  const choose = el("select", {}, reports.map(r => el("option", { value: r.name, text: `${r.title} (${r.name})` })));
  const tags = el("input", { placeholder: "chart:ada" });
  const preview = el("div", { "aria-live": "polite" });
  return el("section", {}, el("h2", { text: "Reports" }),
    el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
      const report = reports.find(r => r.name === choose.value);
      const list = tags.value.split(",").map(s => s.trim()).filter(Boolean);
      const context = await api("POST", "/v1/context", { report: report.name, tags: list.length ? list : undefined });
      preview.replaceChildren(
        table(["section", "query", "snippets"], report.sections.map(s => [s.name, s.query, String(s.snippets)])),
        el("p", { text: `${context.tokens} of ${context.budget} tokens, ${context.citations.length} citations` }),
        el("pre", { class: "block", tabindex: "0", "aria-label": "The report's context block", text: context.context }));
    }); } }, field("Report", choose), field("Tags (comma-separated)", tags), el("button", { type: "submit", text: "Preview" })),
    preview);
}

function editor(bot) {
  const name = el("input", { value: bot ? bot.name : "", required: true, readonly: bot ? true : null });
  const prompt = el("textarea", {}, bot ? bot.systemPrompt : "");
  const sources = el("textarea", {}, bot ? (bot.sources || []).join("\n") : "");
  return el("section", { id: "bot-editor" }, el("h2", { text: bot ? `Edit ${bot.name}` : "New bot" }),
    el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
      const selectors = sources.value.split("\n").map(s => s.trim()).filter(Boolean);
      if (bot) await api("PATCH", "/v1/bots/" + encodeURIComponent(bot.name), { systemPrompt: prompt.value, sources: selectors });
      else await api("POST", "/v1/bots", { name: name.value.trim(), systemPrompt: prompt.value, sources: selectors });
      await bots();
    }); } }, field("Name", name), el("div", { class: "wide" }, field("System prompt", prompt)),
      el("div", { class: "wide" }, field("Sources, one per line (an absolute path or folder, tag:NAME, kind:pdf)", sources)),
      el("button", { type: "submit", text: bot ? "Save" : "Create" })));
}

function editBot(bot) {
  document.getElementById("bot-editor").replaceWith(editor(bot));
  document.querySelector("#bot-editor textarea").focus();
}

// ---- tokens -----------------------------------------------------------------------------

async function tokens() {
  if (!me.admin) { page("Tokens", hiddenNote("Tokens", "only the admin token makes, lists and revokes tokens.")); return; }
  const list = await api("GET", "/v1/tokens");
  const name = el("input", { required: true });
  const scopes = el("input", { placeholder: "user:ada" });
  const botNames = el("input", { placeholder: "astro" });
  const allow = el("input", { placeholder: "sources, bots, reports" });
  const expires = el("input", { placeholder: "30d" });
  const readOnly = el("input", { type: "checkbox" });
  const made = el("div", { "aria-live": "polite" });
  const split = value => value.split(",").map(s => s.trim()).filter(Boolean);
  const form = el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
    const request = { name: name.value.trim(), scopes: split(scopes.value), bots: split(botNames.value), allow: split(allow.value), readOnly: readOnly.checked };
    if (expires.value.trim()) request.expires = expires.value.trim();
    const created = await api("POST", "/v1/tokens", request);
    await tokens();
    document.getElementById("made").replaceChildren(el("p", { text: `Token ${created.info.name} made. Copy it now: it is shown this once.` }),
      el("p", { class: "secret", text: created.token }));
  }); } }, field("Name", name), field("Scopes (comma-separated)", scopes), field("Bots (comma-separated)", botNames),
    field("Rights (comma-separated)", allow), field("Expires after", expires), field("Read-only", readOnly), el("button", { type: "submit", text: "Create token" }));
  made.id = "made";
  const rows = list.map(t => [t.name, (t.scopes || []).join(", "), (t.bots || []).join(", "), (t.allow || []).join(", "),
    t.revokedAt ? "revoked" : (t.expiresAt ? "until " + t.expiresAt.slice(0, 10) : "live"),
    t.revokedAt ? "" : el("button", { class: "danger", type: "button", text: "Revoke", "aria-label": `Revoke ${t.name}`, onclick: () => guarded(async () => {
      if (!confirm(`Revoke ${t.name}? Whoever holds it is refused from now on.`)) return;
      await api("DELETE", "/v1/tokens/" + encodeURIComponent(t.name));
      await tokens();
    }) })]);
  page("Tokens", el("section", {}, el("h2", { text: "New token" }), form, made),
    el("section", {}, el("h2", { text: "Tokens" }), table(["name", "scopes", "bots", "rights", "state", ""], rows, [3])));
}

// ---- routing ----------------------------------------------------------------------------

const screens = { status, sources, snippets, playground, memories, bots, tokens, usage };

async function render() {
  const name = (location.hash.replace(/^#\//, "").split("?")[0]) || "status";
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.getAttribute("href") === "#/" + name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  document.getElementById("nav").hidden = !token();
  if (!token() || name === "signin") { document.getElementById("who").textContent = ""; signIn(); return; }
  await guarded(async () => {
    if (!me) me = await api("GET", "/v1/me");
    if (!vocabulary) vocabulary = await loadVocabulary();
    const who = document.getElementById("who");
    who.replaceChildren(`Signed in as ${me.name}${me.readOnly ? " (read-only)" : ""} `,
      el("button", { class: "plain", type: "button", text: "Sign out", onclick: () => signOut() }));
    await (screens[name] || status)();
  });
}

window.addEventListener("hashchange", render);
render();
