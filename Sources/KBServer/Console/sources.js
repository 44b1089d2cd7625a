// The Sources screen: the list, filters, uploads and their jobs.

import { api, go, guarded, session, token } from "./api.js";
import { el, field, hiddenNote, may, page, table } from "./dom.js";

export const mediaTypes = { pdf: "application/pdf", md: "text/markdown", markdown: "text/markdown", txt: "text/plain", png: "image/png",
  jpg: "image/jpeg", jpeg: "image/jpeg", tif: "image/tiff", tiff: "image/tiff", epub: "application/epub+zip", html: "text/html",
  htm: "text/html", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", csv: "text/csv",
  jsonl: "application/x-ndjson", ndjson: "application/x-ndjson" };

// What was uploaded in this visit, kept while the list is redrawn.
export const uploads = el("div", { "aria-live": "polite" });

export async function sources() {
  if (!may("sources")) { page("Sources", hiddenNote("The source list", `the token ${session.me.name} lacks the right "sources".`)); return; }
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const kind = el("select", {}, ["", ...session.vocabulary.kinds].map(k => el("option", { value: k, text: k || "any", selected: params.get("kind") === k })));
  const user = el("input", { value: params.get("user") || "" });
  const bot = el("input", { value: params.get("bot") || "" });
  const tag = el("input", { value: params.get("tag") || "" });
  const query = new URLSearchParams({ limit: "200" });
  for (const name of ["kind", "user", "bot", "tag"]) if (params.get(name)) query.set(name, params.get(name));
  const list = await api("GET", "/v1/sources?" + query);
  const filters = el("form", { class: "grid", onsubmit: event => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const [name, node] of Object.entries({ kind, user, bot, tag })) if (node.value.trim()) next.set(name, node.value.trim());
    go("#/sources?" + next);
  } }, field("Kind", kind), field("User", user), field("Seen by bot", bot), field("Tag", tag), el("button", { type: "submit", text: "Filter" }));

  const uploadUser = el("input", {});
  const progress = uploads;
  const fileInput = el("input", { type: "file", multiple: true });
  const drop = el("div", { class: "drop" }, el("p", { text: "Drop files here (PDF, scans, Markdown, EPUB, HTML, DOCX, CSV, JSON Lines), or choose them:" }),
    field("Files", fileInput));
  const upload = async files => {
    for (const file of files) await guarded(() => uploadOne(file, uploadUser.value.trim(), progress));
    await guarded(sources);
  };
  fileInput.addEventListener("change", () => upload([...fileInput.files]));
  drop.addEventListener("dragover", event => { event.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", event => { event.preventDefault(); drop.classList.remove("over"); upload([...event.dataTransfer.files]); });

  const rows = list.sources.map(s => [
    el("a", { href: "#/snippets?id=" + encodeURIComponent(s.id), text: s.title }), s.kind,
    s.state === "ready" ? String(s.snippets ?? "") : s.state, s.user || "", (s.ingestedAt || "").slice(0, 19).replace("T", " "),
    el("div", { class: "row" }, s.origin === "upload" && s.state === "ready" && !session.me.readOnly ? el("button", { class: "plain", type: "button", "aria-label": `Re-read ${s.title}`, text: "Re-read",
      onclick: () => guarded(async () => {
        const again = await api("POST", "/v1/sources/" + encodeURIComponent(s.id) + "/reread", {});
        await follow(again.job, `${s.title} (re-read)`, uploads);
        await sources();
      }) }) : null,
    el("button", { class: "danger", type: "button", "aria-label": `Delete ${s.title}`, text: "Delete", onclick: () => guarded(async () => {
      if (!confirm(`Delete ${s.title} with its snippets?`)) return;
      await api("DELETE", "/v1/sources/" + encodeURIComponent(s.id));
      await sources();
    }) })),
  ]);
  page("Sources",
    el("section", {}, el("h2", { text: "Add" }), el("form", { class: "grid", onsubmit: e => e.preventDefault() }, field("For user (optional: private to them)", uploadUser)), drop, progress),
    el("section", {}, el("h2", { text: `Sources (${list.total})` }), filters, table(["title (its snippets)", "kind", "snippets", "user", "added", ""], rows, [3, 4])));
}

export async function uploadOne(file, user, progress) {
  const extension = file.name.split(".").pop().toLowerCase();
  const type = mediaTypes[extension] || file.type;
  const query = new URLSearchParams({ title: file.name.replace(/\.[^.]+$/, "") });
  if (user) query.set("user", user);
  const added = await api("POST", "/v1/sources?" + query, file, type);
  await follow(added.job, file.name, progress);
}

/// Shows a job's progress (pages, snippets) until it is done or failed, with its error.
export async function follow(first, name, progress) {
  const line = el("p", { text: `${name}: ${first.state}…` });
  const bar = el("progress", { max: "1", value: "0", "aria-label": `${name} progress` });
  progress.append(line, bar);
  let job = first;
  while (job.state !== "done" && job.state !== "failed") {
    const p = job.progress || {};
    const total = (p.pagesTotal || 0) + (p.snippetsTotal || 0);
    const done = (p.pagesDone || 0) + (p.snippetsDone || 0);
    bar.max = String(Math.max(total, 1));
    bar.value = String(done);
    line.textContent = `${name}: ${job.state}, pages ${p.pagesDone || 0}/${p.pagesTotal || 0}, snippets ${p.snippetsDone || 0}/${p.snippetsTotal || 0}`;
    await new Promise(resolve => setTimeout(resolve, 400));
    job = await api("GET", "/v1/jobs/" + encodeURIComponent(job.id));
  }
  bar.max = "1";
  bar.value = "1";
  if (job.state === "failed") {
    line.textContent = `${name}: failed — ${job.error || "no reason given"}`;
    line.className = "alert";
  } else {
    line.textContent = `${name}: done, ${job.progress.snippetsDone ?? job.progress.snippetsTotal ?? ""} snippets.`;
    line.className = "ok";
  }
}
