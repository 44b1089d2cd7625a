// The Chat screen: talk to a bot as an app would — the same streamed request to kb's chat
// completions endpoint — and see what the answer stands on: its citations (each opening its page),
// the context block the model got with its tokens, and the memories the turn could teach.

import { api, apiStream, guarded, say, session } from "./api.js";
import { el, field, page } from "./dom.js";
import { applyProposal } from "./memories.js";
import { citationList } from "./citations.js";

// The conversation of each bot and user, kept in this tab only.
const saved = () => JSON.parse(sessionStorage.getItem("kb-chat") || "{}");
const keep = (key, turns) => sessionStorage.setItem("kb-chat", JSON.stringify({ ...saved(), [key]: turns }));

export async function chat() {
  const models = (await api("GET", "/v1/models")).data.map(m => m.id).filter(id => !id.includes("/"));
  if (!models.length) {
    page("Chat", el("p", { class: "note", text: `The token ${session.me.name} may use no bot. Make one on the Bots screen (or give the token a bot).` }));
    return;
  }
  const bot = el("select", {}, models.map(id => el("option", { value: id, text: id })));
  const user = el("input", { placeholder: "ada", autocomplete: "off" });
  if (session.me.scopes && session.me.scopes.length) user.value = (session.me.scopes.find(s => s.startsWith("user:")) || "").slice(5);
  const message = el("textarea", { rows: "3", required: true });
  const send = el("button", { type: "submit", text: "Send" });
  const stop = el("button", { type: "button", text: "Stop", disabled: true });
  const log = el("div", { class: "chat-log", "aria-live": "polite" });
  const clear = el("button", { type: "button", class: "plain", text: "Start over", onclick: () => { keep(key(), []); draw(); } });
  const key = () => `${bot.value}|${user.value.trim()}`;
  let running = null;

  // Earlier turns as they were said; the latest answer keeps its details on the page.
  const draw = () => log.replaceChildren(...(saved()[key()] || []).map(turn =>
    el("div", { class: `turn ${turn.role}` }, el("p", { class: "who-said", text: turn.role === "user" ? "You" : bot.value }),
      el("p", { class: "said", text: turn.content }))));
  bot.addEventListener("change", draw);
  user.addEventListener("change", draw);

  stop.addEventListener("click", () => { if (running) running.abort(); });
  // As chat screens do: Enter sends, Shift+Enter starts a new line (and Enter that ends an input
  // method's composition only ends it).
  message.addEventListener("keydown", event => {
    if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    if (!send.disabled) form.requestSubmit();
  });
  const form = el("form", { class: "grid", onsubmit: event => { event.preventDefault(); guarded(async () => {
    const text = message.value.trim();
    if (!text) return;
    const earlier = saved()[key()] || [];
    const turns = [...earlier, { role: "user", content: text }];
    log.append(el("div", { class: "turn user" }, el("p", { class: "who-said", text: "You" }), el("p", { class: "said", text })));
    const answer = el("p", { class: "said", text: "" });
    const details = el("div", { class: "answer-details" });
    const status = el("p", { class: "note", text: "Asking…" });
    log.append(el("div", { class: "turn assistant" }, el("p", { class: "who-said", text: bot.value }), answer, status, details));
    message.value = "";
    running = new AbortController();
    send.disabled = true;
    stop.disabled = false;
    const body = { model: bot.value, stream: true, messages: turns.map(({ role, content }) => ({ role, content })),
                   kb: { showContext: true, ...(user.value.trim() ? { user: user.value.trim() } : {}) } };
    let summary = null;
    try {
      await apiStream("/v1/chat/completions", body, running.signal, chunk => {
        if (chunk.error) throw Object.assign(new Error(chunk.error.message || "The model failed mid-answer."), { status: 502 });
        for (const choice of chunk.choices || []) if (choice.delta && choice.delta.content) answer.textContent += choice.delta.content;
        if (chunk.kb) summary = chunk.kb;
        status.textContent = "Answering…";
      });
      status.textContent = summary ? `${summary.contextTokens} of ${summary.budget} context tokens · ${summary.upstreamModel}` : "Answered.";
      keep(key(), [...turns, { role: "assistant", content: answer.textContent }]);
      if (summary) details.replaceChildren(...answerDetails(answer, summary, turns, user.value.trim(), bot.value));
    } catch (error) {
      if (error.name === "AbortError") { status.textContent = "Stopped: kb closed the request to the model."; keep(key(), [...turns, { role: "assistant", content: answer.textContent }]); }
      else if (error.status === 422 && /--llm/.test(error.message)) { status.textContent = ""; say(noModel(error.message)); }
      else { status.textContent = ""; say(`${error.status === 504 ? "The model gave no answer in time" : "The model failed"}: ${error.message}`); }
    } finally {
      running = null;
      send.disabled = false;
      stop.disabled = true;
    }
  }); } }, field("Bot", bot), field("User (whose memories the bot reads)", user), field("Message (Enter sends, Shift+Enter for a new line)", message),
    el("div", { class: "row" }, send, stop, clear));
  page("Chat", el("p", { class: "note", text: "The same streamed request an app makes to kb's /v1/chat/completions; the conversation stays in this tab." }),
    log, form);
  draw();
}

function noModel(message) {
  return `${message} (For a local model: kb serve --llm openai:llama3.1 --llm-url http://127.0.0.1:11434/v1. The rest of the console works without one.)`;
}

// Under an answer: its citations (the [n] markers linked to them), the context the model got, and
// the memories the user's turn could teach (accept or reject each).
function answerDetails(answer, summary, turns, user, bot) {
  const citations = summary.citations || [];
  const list = citationList(citations, { bot, user, block: summary.context || "" });
  // The [n] markers in the answer's text become links to their citations.
  const text = answer.textContent;
  const parts = text.split(/(\[\d+\])/);
  answer.replaceChildren(...parts.map(part => {
    const number = /^\[(\d+)\]$/.exec(part);
    return number && citations.some(c => String(c.number) === number[1]) ? el("a", { href: `#cite-${number[1]}`, text: part,
      onclick: event => { event.preventDefault(); document.getElementById(`cite-${number[1]}`).scrollIntoView(); document.getElementById(`cite-${number[1]}`).focus(); } }) : part;
  }));
  for (const item of list.children) item.setAttribute("tabindex", "-1");
  const context = el("details", {}, el("summary", { text: `What the model got: ${summary.contextTokens} tokens of context` }),
    el("pre", { class: "block", tabindex: "0", "aria-label": "The context block", text: summary.context || "" }));
  const learned = el("div", { "aria-live": "polite" });
  const learn = user ? el("button", { type: "button", class: "plain", text: "What could kb remember from this turn?", onclick: () => guarded(async () => {
    const proposals = await api("POST", "/v1/memories/extract", { user, turns: turns.slice(-1) });
    const rows = (proposals.proposals || []).filter(p => p.action !== "none");
    learned.replaceChildren(rows.length ? el("ul", {}, rows.map(p => {
      const item = el("li", {}, el("span", { text: `${p.action}: ${p.content || ""} ` }), el("span", { class: "muted", text: p.reason || "" }));
      item.append(el("button", { type: "button", class: "plain", text: "Accept", "aria-label": `Accept: ${p.content}`, onclick: () => guarded(async () => {
        await applyProposal(p, proposals.scope);
        item.replaceChildren(el("span", { text: `Stored: ${p.content}` }));
      }) }), el("button", { type: "button", class: "plain", text: "Reject", "aria-label": `Reject: ${p.content}`, onclick: () => item.remove() }));
      return item;
    })) : el("p", { class: "note", text: "Nothing to remember from this turn." }));
  }) }) : null;
  return [citations.length ? el("h3", { text: "Citations" }) : null, citations.length ? list : null, context, learn, learned]
    .filter(Boolean);   // replaceChildren would print a null as "null"
}
