// kb's console: plain JavaScript modules that speak only to kb's public HTTP API with the token the user
// signs in with (kept in this tab's sessionStorage, never in a URL). Every text from the index is
// put on the page as text (textContent), never as markup. This module routes between the screens.

import { api, guarded, session, token } from "./api.js";
import { bots } from "./bots.js";
import { chat } from "./chat.js";
import { el } from "./dom.js";
import { memories } from "./memories.js";
import { playground } from "./playground.js";
import { loadVocabulary, signIn, signOut } from "./signin.js";
import { snippets } from "./snippets.js";
import { sources } from "./sources.js";
import { status } from "./status.js";
import { tokens } from "./tokens.js";
import { usage } from "./usage.js";

const screens = { status, sources, snippets, playground, chat, memories, bots, tokens, usage };

export async function render() {
  const name = (location.hash.replace(/^#\//, "").split("?")[0]) || "status";
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.getAttribute("href") === "#/" + name) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  document.getElementById("nav").hidden = !token();
  if (!token() || name === "signin") { document.getElementById("who").textContent = ""; signIn(); return; }
  await guarded(async () => {
    if (!session.me) session.me = await api("GET", "/v1/me");
    if (!session.vocabulary) session.vocabulary = await loadVocabulary();
    const who = document.getElementById("who");
    who.replaceChildren(`Signed in as ${session.me.name}${session.me.readOnly ? " (read-only)" : ""} `,
      el("button", { class: "plain", type: "button", text: "Sign out", onclick: () => signOut() }));
    await (screens[name] || status)();
  });
}

window.addEventListener("hashchange", render);
render();
