// The chunk inspector: a source's snippets by page beside the page's text, each snippet of a PDF
// or a scan able to open the page itself with its words marked.

import { api, guarded } from "./api.js";
import { el, page, pageLabel } from "./dom.js";
import { snippetPages } from "./pageview.js";

export async function snippets() {
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
      el("p", { class: "snippet-text", text: snippet.text }),
      (data.pages || s.kind === "image") && snippet.pages ? pageButton(s.id, snippet) : null)))));
  page(`Snippets of ${s.title}`, el("p", { class: "note", text: facts }), el("p", {}, el("a", { href: "#/sources", text: "← Sources" })),
    data.snippets.length ? groups : el("p", { text: s.state !== "ready" ? "Its job is still reading it." : "It has no snippets." }));
}

// A button that shows (and hides again) the pages a snippet is on, its words marked.
function pageButton(id, snippet) {
  const holder = el("div", { class: "page-figures", hidden: true });
  const button = el("button", { type: "button", "aria-expanded": "false",
    text: `Show ${pageLabel(snippet.pages)}`, onclick: () => guarded(async () => {
      const open = button.getAttribute("aria-expanded") === "true";
      if (!open && !holder.childElementCount) holder.replaceChildren(...await snippetPages(id, snippet));
      holder.hidden = open;
      button.setAttribute("aria-expanded", String(!open));
      button.textContent = `${open ? "Show" : "Hide"} ${pageLabel(snippet.pages)}`;
    }) });
  return el("div", { class: "page-open" }, button, holder);
}
