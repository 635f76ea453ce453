// The inspector page: the DOM side. What needs no DOM lives in feed.js, filter.js, rows.js and render.js.
import { followFeed } from "./feed.js";
import { matchesFilter, parseFilter } from "./filter.js";
import { collapseFrames, messageOf, streamedText } from "./rows.js";
import { ciCommand, directionWord, formatDuration, HUNG_AFTER_MS, verdictText } from "./render.js";
import { sessionPanel } from "./session-panel.js";
import { setupTranscriptDrop } from "./transcript-drop.js";
import { viewerText } from "./viewer.js";

const TOKEN_KEY = "tau-gateway-inspector-token";
/** Frames the page holds (the newest); the gateway keeps its own, per connection. */
const MAX_FRAMES = 10_000;
/** Rows drawn at once (the newest). */
const MAX_ROWS = 1500;

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const connections = new Map();
let frames = [];
/** A transcript checked offline ({name, frames}), shown instead of the live frames while set. */
let transcript;
let filter = parseFilter("");
let selected;
let feed;
const expanded = new Set();
let drawQueued = false;

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name === "className") node.className = value;
    else node.setAttribute(name, String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child ?? "")));
  return node;
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

const session = sessionPanel({ el, token, frames: () => frames, queueDraw });

function start() {
  feed?.stop();
  feed = followFeed({
    url: "/inspector/feed",
    token: token(),
    onEvent,
    onState(state, detail) {
      const badge = $("feed-state");
      badge.dataset.state = state;
      badge.textContent = state === "open" ? "live" : state === "refused" ? `refused: ${detail}` : `reconnecting (${detail})`;
      $("token-form").hidden = state !== "refused";
      if (state === "open") void showViewer();
    },
  });
}

/** Says whose traffic the page shows (an operator: everyone's; a tenant: its own), and marks the body for read-only controls. */
async function showViewer() {
  const response = await authorizedFetch("/inspector/api/viewer");
  if (!response.ok) return;
  const viewer = await response.json();
  document.body.dataset.viewer = viewer.operator ? "operator" : "tenant";
  $("viewer").textContent = viewerText(viewer);
}

function onEvent(type, data) {
  if (type === "snapshot") {
    connections.clear();
    for (const connection of data.connections) connections.set(connection.id, connection);
    frames = data.frames;
  } else if (type === "connection") {
    connections.set(data.connection.id, data.connection);
  } else if (type === "frame") {
    frames.push(data.frame);
    if (frames.length > MAX_FRAMES) frames.splice(0, frames.length - MAX_FRAMES);
    const connection = connections.get(data.frame.connection);
    if (connection) {
      connection.inflight = data.inflight;
      connection.frames = data.frame.index;
      if (data.frame.direction === "client" && data.frame.method === "initialize") refreshConnections();
    }
  }
  session.onEvent(type, data);
  queueDraw();
}

/** A client's name arrives in its initialize request: the connection list learns it from the API. */
async function refreshConnections() {
  const response = await authorizedFetch("/inspector/api/connections");
  if (!response.ok) return;
  for (const connection of (await response.json()).connections) connections.set(connection.id, connection);
  queueDraw();
}

function authorizedFetch(url, init = {}) {
  const headers = { ...init.headers };
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  return fetch(url, { ...init, headers, cache: "no-store" });
}

function queueDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    drawConnections();
    drawFrames();
    session.draw();
  });
}

function drawConnections() {
  const body = $("connections").querySelector("tbody");
  const now = Date.now();
  const rows = [...connections.values()].reverse().map((c) => {
    const waited = c.inflight.oldestSince ? now - Date.parse(c.inflight.oldestSince) : 0;
    const hung = c.inflight.count > 0 && waited > HUNG_AFTER_MS;
    const age = formatDuration((c.closed ? Date.parse(c.closed) : now) - Date.parse(c.opened));
    const row = el(
      "tr",
      { className: [c.closed ? "closed" : "", hung ? "hung" : "", c.id === selected ? "selected" : ""].join(" ").trim(), "data-connection": c.id, "data-dialect": c.dialect },
      el("td", {}, `${c.id}`, el("br"), `${c.transport}`),
      el("td", {}, c.client ? `${c.client.name ?? "?"} ${c.client.version ?? ""}` : ""),
      el("td", {}, c.tenant ? `${c.tenant}${c.tokenId ? ` (${c.tokenId})` : ""}` : "—"),
      el("td", {}, c.closed ? `closed after ${age}` : age),
      el("td", { className: "inflight" }, c.inflight.count > 0 ? `${c.inflight.count}, oldest ${formatDuration(waited)}` : "0"),
      el("td", {}, el("button", { type: "button", "data-download": c.id }, "Download JSONL")),
    );
    row.addEventListener("click", (event) => {
      if (event.target instanceof HTMLButtonElement) return;
      selected = selected === c.id ? undefined : c.id;
      showCiCommand();
      queueDraw();
    });
    row.querySelector("button")?.addEventListener("click", () => download(c.id));
    return row;
  });
  body.replaceChildren(...rows);
}

function showCiCommand() {
  $("ci-box").hidden = selected === undefined;
  if (selected !== undefined) $("ci-command").textContent = ciCommand(selected);
}

async function download(id) {
  const response = await authorizedFetch(`/inspector/api/connections/${encodeURIComponent(id)}/transcript`);
  if (!response.ok) return;
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: `${id}.jsonl` });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  selected = id;
  showCiCommand();
  queueDraw();
}

function drawFrames() {
  const source = transcript ? transcript.frames : frames;
  const visible = source.filter((frame) => (transcript !== undefined || selected === undefined || frame.connection === selected) && matchesFilter(filter, frame));
  const rows = collapseFrames(visible).slice(-MAX_ROWS);
  $("frames-count").textContent = `(${visible.length} of ${source.length}${transcript ? ` in ${transcript.name}` : ""})`;
  const body = $("frames").querySelector("tbody");
  const out = [];
  for (const row of rows) {
    if (row.type === "frame") out.push(...frameRows(row.frame));
    else out.push(...streamRows(row));
  }
  body.replaceChildren(...out);
}

function frameCells(frame, label) {
  const latency = frame.answers?.latencyMs !== undefined ? formatDuration(frame.answers.latencyMs) : "";
  const what = label ?? [frame.method, frame.id !== undefined ? `#${frame.id}` : ""].filter(Boolean).join(" ");
  return [
    el("td", {}, frame.index),
    el("td", {}, (frame.time ?? "").slice(11, 23)),
    el("td", {}, frame.connection),
    el("td", {}, directionWord(frame.direction)),
    el("td", {}, frame.kind),
    el("td", {}, what),
    el("td", {}, latency),
    el("td", { className: "verdict" }, verdictText(frame.verdict)),
  ];
}

function frameRows(frame) {
  const key = `${frame.connection}/${frame.index}`;
  const row = el("tr", { className: `frame ${frame.verdict.status}`, "data-status": frame.verdict.status, "data-method": frame.method, "data-pointer": frame.verdict.issues[0]?.pointer }, ...frameCells(frame));
  row.addEventListener("click", () => toggle(key));
  if (!expanded.has(key)) return [row];
  const value = messageOf(frame);
  const text = value === undefined ? frame.raw ?? "" : JSON.stringify(value, null, 2);
  return [row, el("tr", { className: "detail" }, el("td", { colspan: 8 }, text))];
}

function streamRows(row) {
  const first = row.frames[0];
  const key = `stream:${row.key}:${first.index}`;
  const label = `${first.method} ×${row.frames.length}`;
  const verdict = row.status === "valid" ? { status: "valid", issues: [] } : row.frames.find((f) => f.verdict.status === row.status).verdict;
  const line = el("tr", { className: `frame stream ${row.status}`, "data-status": row.status, "data-method": first.method, "data-stream": row.frames.length }, ...frameCells({ ...first, verdict }, label));
  line.addEventListener("click", () => toggle(key));
  if (!expanded.has(key)) return [line];
  return [line, el("tr", { className: "detail" }, el("td", { colspan: 8 }, streamedText(row))), ...row.frames.flatMap((frame) => frameRows(frame))];
}

function toggle(key) {
  if (expanded.has(key)) expanded.delete(key);
  else expanded.add(key);
  queueDraw();
}

$("filter").addEventListener("input", (event) => {
  filter = parseFilter(/** @type {HTMLInputElement} */ (event.target).value);
  $("filter-errors").textContent = filter.errors.join("; ");
  queueDraw();
});

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, /** @type {HTMLInputElement} */ ($("token")).value);
  start();
});

$("copy-ci").addEventListener("click", async () => {
  const text = $("ci-command").textContent ?? "";
  try {
    await navigator.clipboard.writeText(text);
    $("copy-ci").textContent = "Copied";
  } catch {
    getSelection()?.selectAllChildren($("ci-command"));
    $("copy-ci").textContent = "Selected: press Ctrl+C";
  }
});

setupTranscriptDrop({
  post: (url, body) => authorizedFetch(url, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body }),
  onShow(checked) {
    transcript = checked;
    expanded.clear();
    queueDraw();
  },
  onClear() {
    transcript = undefined;
    queueDraw();
  },
});

// Ages and hung calls move on without new events.
setInterval(queueDraw, 1000);
start();
