// The Tokens screen: scoped tokens made, listed and revoked.

import { api, guarded, session } from "./api.js";
import { el, field, hiddenNote, page, table } from "./dom.js";

export async function tokens() {
  if (!session.me.admin) { page("Tokens", hiddenNote("Tokens", "only the admin token makes, lists and revokes tokens.")); return; }
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
