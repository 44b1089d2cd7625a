// The Status screen: what the index holds.

import { api } from "./api.js";
import { el, page, table } from "./dom.js";

export async function status() {
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
