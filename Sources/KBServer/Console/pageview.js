// A page of a PDF or scanned source as kb renders it, with a snippet's words marked on it: what the chunk
// inspector (and a citation) opens. The picture is fetched with the signed-in token and shown
// from a blob: URL; the marks are boxes placed by the words' positions on the page.

import { apiBlob, api } from "./api.js";
import { el } from "./dom.js";

/// A figure for page `number` of source `id`, the words of the snippets `ordinals` (one or a
/// list; none: the page alone) marked; read with the rights of `bot` and `user` when given (a
/// scoped token reads through one of its bots, a private source only for its user).
export async function pageFigure(id, number, label, ordinals, { bot, user } = {}) {
  const base = "/v1/sources/" + encodeURIComponent(id) + "/pages/" + number;
  const rights = new URLSearchParams();
  if (bot) rights.set("bot", bot);
  if (user) rights.set("user", user);
  const query = extra => "?" + new URLSearchParams([...new URLSearchParams(extra), ...rights]);
  const list = ordinals == null ? [] : [].concat(ordinals);
  const [blob, ...found] = await Promise.all([apiBlob(base + query("width=1000")), ...list.map(o => api("GET", base + "/words" + query("snippet=" + o)))]);
  const words = { words: found.flatMap(f => f.words) };
  const ordinal = list.length ? list.map(o => `#${o}`).join(", ") : null;
  const image = el("img", { src: URL.createObjectURL(blob), alt: `Page ${label} of the source`, class: "page-image" });
  image.addEventListener("load", () => URL.revokeObjectURL(image.src), { once: true });
  const marks = words.words.map(w => {
    const box = el("span", { class: "mark-box", "data-text": w.text });
    box.style.left = `${(w.x0 * 100).toFixed(3)}%`;
    box.style.top = `${(w.y0 * 100).toFixed(3)}%`;
    box.style.width = `${((w.x1 - w.x0) * 100).toFixed(3)}%`;
    box.style.height = `${((w.y1 - w.y0) * 100).toFixed(3)}%`;
    return box;
  });
  const caption = ordinal == null ? `Page ${label}` : `Page ${label}: ${words.words.length} words of snippet ${ordinal} marked`;
  return el("figure", { class: "page-figure", "data-page": String(number) }, el("div", { class: "page-frame" }, image, marks), el("figcaption", { text: caption }));
}

/// The pages a snippet runs over, each as a figure with its words marked.
export async function snippetPages(id, snippet) {
  const figures = [];
  for (let number = snippet.pages.start; number <= snippet.pages.end; number++) {
    const label = number === snippet.pages.start ? snippet.pages.startLabel : number === snippet.pages.end ? snippet.pages.endLabel : String(number);
    figures.push(await pageFigure(id, number, label || String(number), snippet.ordinal));
  }
  return figures;
}
