// The Memories screen: search, edit, history, learning from a conversation.

import { api, go, guarded, say, session, token } from "./api.js";
import { render } from "./console.js";
import { el, field, main, page } from "./dom.js";

export async function memories() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const suggested = session.me && !session.me.admin && session.me.scopes.length ? session.me.scopes[0].replace("user:*", "user:") : "";
  const scope = el("input", { value: params.get("scope") || suggested, required: true });
  const form = el("form", { class: "grid", onsubmit: event => { event.preventDefault(); go("#/memories?scope=" + encodeURIComponent(scope.value.trim())); } },
    field("Scope (user:ID, bot:NAME or global)", scope), el("button", { type: "submit", text: "Show" }));
  page("Memories", el("section", {}, form, session.me && !session.me.admin ? el("p", { class: "note", text: `This token reads only the scopes ${session.me.scopes.join(", ") || "(none)"}.` }) : null),
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

export function learnFromConversation() {
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
        el("ul", {}, proposed.proposals.map((p, i) => el("li", {}, field(proposalText(p), boxes[i])))),
        el("button", { type: "button", text: "Remember the chosen ones", onclick: () => guarded(async () => {
          let stored = 0;
          for (const [i, p] of proposed.proposals.entries()) {
            if (!boxes[i].checked || p.action === "none") continue;
            await applyProposal(p, proposed.scope);
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

const languageNames = { en: "English", uk: "Ukrainian", ru: "Russian", ar: "Arabic" };

/// A proposal as one line: what, in which language, with its tags and why. The content keeps its
/// own direction (Arabic reads right to left inside an English line).
function proposalText(p) {
  const language = p.language ? `${languageNames[p.language] || p.language} · ` : "";
  const tags = p.tags && p.tags.length ? ` [${p.tags.join(", ")}]` : "";
  return `${language}${p.action}: \u2068${p.content}\u2069${tags} — ${p.reason}`;
}

/// Stores one proposal of `/v1/memories/extract` through the memory API, as `apply` would.
export async function applyProposal(p, scope) {
  // The valid time the conversation gave it (a dated plan expires as with `apply`).
  const time = Object.fromEntries(["validFrom", "expiresAt"].filter(k => p[k]).map(k => [k, p[k]]));
  if (p.action === "add") await api("POST", "/v1/memories", { content: p.content, scope, tags: p.tags, ...time });
  else if (p.action === "supersede") await api("POST", "/v1/memories", { content: p.content, scope, tags: p.tags, supersede: p.replaces, ...time });
  else if (p.action === "update") await api("PATCH", "/v1/memories/" + encodeURIComponent(p.replaces), { content: p.content });
  else if (p.action === "forget") await api("DELETE", "/v1/memories/" + encodeURIComponent(p.replaces));
}
