// The Bots screen: bots and report previews.

import { api, guarded, session, token } from "./api.js";
import { el, field, hiddenNote, may, page, table } from "./dom.js";

export async function bots() {
  const list = await api("GET", "/v1/bots");
  const canEdit = may("bots") && !(session.me && session.me.readOnly);
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
    canEdit ? editor() : hiddenNote("Making and changing bots", `the token ${session.me.name} lacks the right "bots".`),
    may("reports") ? await reportsSection() : hiddenNote("Report previews", `the token ${session.me.name} lacks the right "reports".`));
}

export async function reportsSection() {
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

export function editor(bot) {
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

export function editBot(bot) {
  document.getElementById("bot-editor").replaceWith(editor(bot));
  document.querySelector("#bot-editor textarea").focus();
}
