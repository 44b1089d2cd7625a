// Building pages: elements (text is always set as text, never as markup), fields, tables.

import { session } from "./api.js";

export const main = document.getElementById("main");

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export let fieldCount = 0;
export function field(label, input) {
  const id = input.id || `f${++fieldCount}`;
  input.id = id;
  return el("label", { for: id }, label, input);
}

export function page(title, ...children) {
  main.replaceChildren(el("h1", { text: title }), ...children.flat().filter(c => c !== null && c !== undefined && c !== false));
  document.title = `${title} · kb console`;
  main.focus();
}

export function table(headers, rows, optional = []) {
  return el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h, i) => el("th", { scope: "col", class: optional.includes(i) ? "optional" : null, text: h })))),
    el("tbody", {}, rows.map(cells => el("tr", {}, cells.map((c, i) => el("td", { class: optional.includes(i) ? "optional" : null }, c)))))));
}

export function pageLabel(pages) {
  if (!pages) return "";
  const start = pages.startLabel || String(pages.start);
  const end = pages.endLabel || String(pages.end);
  return start === end ? `p. ${start}` : `pp. ${start}–${end}`;
}

export function may(right) { return session.me && (session.me.admin || session.me.allow.includes(right)); }

export function hiddenNote(what, why) { return el("p", { class: "note", text: `${what} is hidden: ${why}` }); }
