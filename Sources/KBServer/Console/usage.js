// The Usage screen: the request log's charts.

import { api, session } from "./api.js";
import { el, field, hiddenNote, page } from "./dom.js";

export function bars(title, rows, value, format = v => String(v), empty = "No requests logged.") {
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

export async function usage() {
  if (!session.me.admin) { page("Usage", hiddenNote("Usage", "only the admin token reads the request log.")); return; }
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
