// Citations as a list, each opening what it cites: a PDF's or a scan's page(s) with the cited
// snippets' words marked, or a note's, web page's, EPUB's or DOCX's text under the cited heading
// with the passage marked. The Chat screen and the playground's context both use it.

import { api, guarded } from "./api.js";
import { el, pageLabel } from "./dom.js";
import { pageFigure } from "./pageview.js";

/// An ordered list of `citations` (items `cite-N`), read with the rights of `bot` and `user`;
/// `block` is the context block the citations number (to find a cited passage in its text).
/// Citations that read alike (one source, page and heading) each show the start of their passage,
/// so that a reader can tell them apart.
export function citationList(citations, { bot, user, block }) {
  const heading = c => c.headingPath && c.headingPath.length ? c.headingPath.join(" › ") : "";
  const reads = c => `${c.title}${c.pages ? ` ${pageLabel(c.pages)}` : ""} — ${heading(c)}`;
  const alike = new Map();
  for (const c of citations) alike.set(reads(c), (alike.get(reads(c)) || 0) + 1);
  return el("ol", { class: "citations" }, citations.map(c => {
    const opened = el("div", { class: "page-figures" });
    const label = c.pages ? ` ${pageLabel(c.pages)}` : "";
    const start = alike.get(reads(c)) > 1 ? passageStart(citedPassage(block, c.number)) : "";
    return el("li", { id: `cite-${c.number}`, value: String(c.number) },
      el("span", { text: `${c.title}${label}` }), heading(c) ? el("span", { class: "muted", text: ` — ${heading(c)}` }) : null,
      start ? el("span", { class: "passage-start", text: ` “${start}”` }) : null,
      c.pages && c.sourceID ? el("button", { type: "button", class: "plain", text: "Open the page", "aria-label": `Open${label} of ${c.title}`,
        onclick: () => guarded(async () => {
          const figures = [];
          for (let n = c.pages.start; n <= c.pages.end; n++) {
            const label = n === c.pages.start ? c.pages.startLabel : n === c.pages.end ? c.pages.endLabel : String(n);
            figures.push(await pageFigure(c.sourceID, n, label || String(n), c.snippets || null, { bot, user }));
          }
          opened.replaceChildren(...figures);
        }) }) : c.sourceID ? el("button", { type: "button", class: "plain", text: "Open the text", "aria-label": `Open the text of ${c.title}`,
        onclick: () => guarded(async () => { opened.replaceChildren(await citedText(c, user, bot, block)); }) }) : null,
      opened);
  }));
}

// A cited note, web page, EPUB or DOCX: the text under the citation's heading (the rights of
// reading the source), the cited passage — item n of the context block the model got — marked.
async function citedText(c, user, bot, block) {
  const query = new URLSearchParams();
  for (const heading of c.headingPath || []) query.append("heading", heading);
  query.set("bot", bot);
  if (user) query.set("user", user);
  const read = await api("GET", `/v1/sources/${encodeURIComponent(c.sourceID)}/text?${query}`);
  const cited = citedPassage(block, c.number);
  const at = cited ? read.text.indexOf(cited.slice(0, 80)) : -1;
  const end = at < 0 ? -1 : Math.min(read.text.length, at + cited.length);
  return el("pre", { class: "block", tabindex: "0", "aria-label": `Text of ${c.title}` },
    at < 0 ? read.text : [read.text.slice(0, at), el("mark", { text: read.text.slice(at, end) }), read.text.slice(end)]);
}

// Item `number` of the context block the model got: the cited passage's text ("" if absent).
function citedPassage(block, number) {
  const item = new RegExp(`<source id="${number}"[^>]*>\\n([\\s\\S]*?)\\n</source>`).exec(block || "");
  return item ? item[1].replace(/<\\\//g, "</").trim() : "";
}

// The first dozen words of a passage, "…" where it goes on.
function passageStart(text) {
  const words = text.split(/\s+/).filter(Boolean);
  return words.length > 12 ? `${words.slice(0, 12).join(" ")}…` : words.join(" ");
}
