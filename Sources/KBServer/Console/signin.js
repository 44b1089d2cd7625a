// Signing in and out, and kb's own vocabulary (kinds, modes) read from its OpenAPI document.

import { api, go, guarded, say, session } from "./api.js";
import { el, field, page } from "./dom.js";

// The kinds a source may have (GET /v1/sources?kind=) and the search modes with the default, as
// kb's OpenAPI document declares them.
export async function loadVocabulary() {
  const documented = await api("GET", "/openapi.json");
  const kind = (documented.paths["/v1/sources"].get.parameters || []).find(p => p.name === "kind");
  const mode = documented.components.schemas.SearchRequest.properties.mode;
  return { kinds: kind.schema.enum, modes: mode.enum, mode: mode.default };
}

export function signOut(message) {
  sessionStorage.removeItem("kb-token");
  session.me = null;
  session.vocabulary = null;
  go("#/signin");
  if (message) say(message);
}

export function signIn() {
  const input = el("input", { type: "password", autocomplete: "off", required: true });
  const form = el("form", { class: "grid", onsubmit: async event => {
    event.preventDefault();
    sessionStorage.setItem("kb-token", input.value.trim());
    await guarded(async () => {
      session.me = await api("GET", "/v1/me");
      // Back to the screen that was asked for (a shared playground address, say), else Status.
      go(!location.hash || location.hash.startsWith("#/signin") ? "#/status" : location.hash);
    });
  } }, field("API token (the admin token, or a scoped kb_… token)", input), el("button", { type: "submit", text: "Sign in" }));
  page("Sign in", el("section", {}, form,
    el("p", { class: "note", text: "The token stays in this browser tab only; it is sent with each request to kb and never put in an address." })));
}
