// How the frames log is laid out, with no DOM: streaming deltas collapse into one expandable row
// per streamed item, and the worst verdict of a collapsed row is the one it shows.

/**
 * @typedef {{ seq: number, connection: string, dialect: string, direction: string, method?: string, session?: string, message?: string, verdict: { status: string } }} RowFrame
 * @typedef {{ type: "frame", frame: RowFrame } | { type: "stream", key: string, frames: RowFrame[], status: string }} Row
 */

const parsed = new WeakMap();

/** The frame's message as a value (parsed once), or undefined when it is not JSON. */
export function messageOf(frame) {
  if (frame.message === undefined) return undefined;
  if (!parsed.has(frame)) {
    try {
      parsed.set(frame, JSON.parse(frame.message));
    } catch {
      parsed.set(frame, undefined);
    }
  }
  return parsed.get(frame);
}

const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * What streamed item a frame is a delta of, or undefined when it is none: a Codex `…/delta`
 * notification (per item), an ACP `session/update` whose update is a `…_chunk` (per kind and
 * message), an Ask `session/event` of `model.streaming`, `model.thinking` or `tool.delta` (per type
 * and tool call). Deltas of different items, sessions or connections never share a row.
 */
export function streamKey(frame) {
  const message = messageOf(frame);
  if (!isObject(message) || typeof message.method !== "string" || "id" in message) return undefined;
  const params = isObject(message.params) ? message.params : {};
  const base = `${frame.connection}|${frame.session ?? ""}|${message.method}`;
  if (message.method.endsWith("/delta")) return `${base}|${params.itemId ?? ""}`;
  if (message.method === "session/update" && isObject(params.update)) {
    const kind = params.update.sessionUpdate;
    if (typeof kind === "string" && kind.endsWith("_chunk")) return `${base}|${kind}|${params.update.messageId ?? ""}`;
  }
  if (message.method === "session/event" && isObject(params.event)) {
    const type = params.event.type;
    if (type === "model.streaming" || type === "model.thinking" || type === "tool.delta") {
      const payload = isObject(params.event.payload) ? params.event.payload : {};
      return `${base}|${type}|${payload.id ?? ""}`;
    }
  }
  return undefined;
}

const SEVERITY = ["valid", "sequence-gap", "unpaired", "duplicate-id", "unknown-method", "invalid", "not-json"];
const worse = (a, b) => (SEVERITY.indexOf(b) > SEVERITY.indexOf(a) ? b : a);

/**
 * Lays frames (in order) out as rows: a delta joins the open stream row of its connection when it
 * continues the same item with no other frame of that connection in between; anything else
 * starts a row of its own.
 * @param {RowFrame[]} frames
 * @returns {Row[]}
 */
export function collapseFrames(frames) {
  /** @type {Row[]} */
  const rows = [];
  /** The row the last frame of each connection went to. */
  const last = new Map();
  for (const frame of frames) {
    const key = streamKey(frame);
    const previous = last.get(frame.connection);
    if (key !== undefined && previous?.type === "stream" && previous.key === key) {
      previous.frames.push(frame);
      previous.status = worse(previous.status, frame.verdict.status);
      continue;
    }
    /** @type {Row} */
    const row = key === undefined ? { type: "frame", frame } : { type: "stream", key, frames: [frame], status: frame.verdict.status };
    rows.push(row);
    last.set(frame.connection, row);
  }
  return rows;
}

/** The text a stream row stands for: its deltas joined, as the client would show them. */
export function streamedText(row) {
  return row.frames
    .map((frame) => {
      const message = messageOf(frame);
      const params = isObject(message) && isObject(message.params) ? message.params : {};
      if (typeof params.delta === "string") return params.delta;
      if (isObject(params.update) && isObject(params.update.content) && typeof params.update.content.text === "string") return params.update.content.text;
      if (isObject(params.event) && isObject(params.event.payload)) {
        const payload = params.event.payload;
        return typeof payload.delta === "string" ? payload.delta : typeof payload.partial === "string" ? payload.partial : "";
      }
      return "";
    })
    .join("");
}
