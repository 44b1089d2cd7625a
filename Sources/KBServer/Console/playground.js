// The Playground: search and context, every hit explained.

import { api, go, session } from "./api.js";
import { citationList } from "./citations.js";
import { el, field, page, pageLabel } from "./dom.js";

/// Why a hit is there, in a line: its place in each ranking, the fused score, weight, filters.
export function why(e) {
  const parts = [];
  parts.push(e.keywordRank ? `keyword #${e.keywordRank} (score ${e.keywordScore.toFixed(2)})` : "no keyword match");
  parts.push(e.vectorRank ? `vector #${e.vectorRank} (cosine ${e.cosine.toFixed(3)})` : "not in the vector ranking");
  parts.push(`fused ${e.fused.toFixed(4)}`);
  if (e.weight != null && e.weight !== 1) parts.push(`weight ${e.weight}`);
  if (e.query) parts.push(`found by "${e.query}"`);
  if (e.filters && e.filters.length) parts.push("filters: " + e.filters.join("; "));
  return "Why: " + parts.join(" · ");
}

export async function playground() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const input = (name, attributes = {}) => el("input", { name, value: params.get(name) || attributes.value || "", ...attributes });
  const q = input("q", { required: true });
  const mode = el("select", { name: "mode" }, session.vocabulary.modes.map(m => el("option", { value: m, text: m, selected: (params.get("mode") || session.vocabulary.mode) === m })));
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
  const search = { query: params.get("q"), mode: params.get("mode") || session.vocabulary.mode, k: Number(params.get("k") || 8), bot: params.get("bot") || undefined,
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
      citationList(context.citations, { bot: search.bot, user: search.user, block: context.context })));
    results.querySelector(".meter span").style.width = share + "%";
  }
}
