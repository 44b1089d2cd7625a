// kb's HTTP API with the signed-in token, the signed-in session, messages and errors.

import { signOut } from "./signin.js";

// Who is signed in, and kb's words for kinds of source and search modes (read from its OpenAPI
// document, not retyped here): set at sign-in, cleared at sign-out.
export const session = { me: null, vocabulary: null };

export const alertBox = document.getElementById("alert");

export function token() { return sessionStorage.getItem("kb-token") || ""; }

export async function api(method, path, body, contentType) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  let payload;
  if (body instanceof Blob) {
    payload = body;
    headers["Content-Type"] = contentType;
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: "omit", cache: "no-store" });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : `${method} ${path} answered ${response.status}.`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

/// Shows `hash`, drawing the screen again when it is already the current one.
export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent("hashchange")); else location.hash = hash;
}

export function say(message) {
  alertBox.textContent = message;
  alertBox.hidden = !message;
}

export async function guarded(work) {
  say("");
  try { return await work(); } catch (error) {
    if (error.status === 401) { signOut("Your token was refused: " + error.message); return; }
    say(error.message);
  }
}

/// A binary answer (a page's picture) as a Blob, with the signed-in token.
export async function apiBlob(path) {
  const headers = {};
  if (token()) headers["Authorization"] = "Bearer " + token();
  const response = await fetch(path, { headers, credentials: "omit", cache: "no-store" });
  if (!response.ok) {
    let message = `GET ${path} answered ${response.status}.`;
    try { const data = await response.json(); if (data && data.error) message = data.error.message; } catch { /* not JSON */ }
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return response.blob();
}

/// A streamed chat completion: POSTs `body` and calls `onChunk` with each Server-Sent Event's
/// JSON as it arrives, until `data: [DONE]`. `signal` aborts it (kb then closes the model's request).
export async function apiStream(path, body, signal, onChunk) {
  const headers = { "Content-Type": "application/json", "Accept": "text/event-stream" };
  if (token()) headers["Authorization"] = "Bearer " + token();
  const response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), credentials: "omit", cache: "no-store", signal });
  if (!response.ok) {
    let message = `POST ${path} answered ${response.status}.`;
    try { const data = await response.json(); if (data && data.error) message = data.error.message; } catch { /* not JSON */ }
    throw Object.assign(new Error(message), { status: response.status });
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = event.split("\n").filter(line => line.startsWith("data:")).map(line => line.slice(5).trimStart()).join("\n");
      if (!data) continue;
      if (data === "[DONE]") return;
      onChunk(JSON.parse(data));
    }
  }
}
