/**
 * Compares what two servers put on the wire in one scenario, for what a client depends on: which
 * responses, notifications and server requests come, in what order, with which statuses, item
 * types, error codes and which fields have values. Everything else is normalised away first:
 *
 * - ids become placeholders numbered in order of first appearance per kind (`<thread#1>`,
 *   `<turn#2>`, `<item#1>`, …), so an id that is repeated where a client matches it must repeat;
 * - strings become `<string>` except the values clients branch on (VALUE_KEYS: types, statuses,
 *   methods, flags, decisions…); numbers become `<number>` except error codes;
 * - a null field and an absent one are the same (both are "no value" to serde's Option and to
 *   JavaScript's `??`), and fields whose names start with `_` are dropped;
 * - a run of deltas of one item (agent text, reasoning, command output; ACP's message and thought
 *   chunks) is one message: how a text is cut into pieces is the model's business, not the
 *   protocol's.
 *
 * Each message becomes a label (`response thread/start`, `notification turn/started`,
 * `request item/commandExecution/requestApproval`, `error -32600 response turn/start`) and a
 * set of leaf paths. The two sequences of labels are aligned (longest common subsequence): a
 * label on one side only is a missing or extra message, one on both sides unaligned a difference
 * of order; aligned messages are compared leaf by leaf, the elements of an array together (the
 * set of values found at each path, and the lengths), so one line covers every element.
 */

export type WireMessage = Record<string, any>;
/** One message as it travelled: `out` from the client, `in` from the server. */
export interface WireEntry {
  direction: "in" | "out";
  message: WireMessage;
  /** Which connection of the scenario (0 = the shared one). */
  connection: number;
}

const VALUE_KEYS = new Set([
  "type",
  "status",
  "method",
  "mode",
  "decision",
  "activeFlags",
  "availableDecisions",
  "itemsView",
  "sortDirection",
  "source",
  "kind",
  "role",
  "platformFamily",
  "platformOs",
  "approvalPolicy",
  "approvalsReviewer",
  "sessionUpdate",
  "stopReason",
  "outcome",
  "currentModeId",
  "protocolVersion",
]);
const ID_KINDS: Record<string, string> = {
  threadId: "thread",
  turnId: "turn",
  itemId: "item",
  requestId: "request",
  rootTurnId: "turn",
  sessionId: "session",
  toolCallId: "item",
  callId: "item",
};
const ID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OPAQUE_KEYS = new Set(["rawInput", "rawOutput"]);
const ACP_CHUNKS = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);
const DELTAS = new Set(["item/agentMessage/delta", "item/reasoning/summaryTextDelta", "item/reasoning/textDelta", "item/commandExecution/outputDelta", "item/reasoning/summaryPartAdded"]);

/** The placeholders of one side of a scenario. */
export class Normaliser {
  private readonly ids = new Map<string, string>();
  private readonly counts = new Map<string, number>();

  id(kind: string, value: string): string {
    let placeholder = this.ids.get(value);
    if (!placeholder) {
      const n = (this.counts.get(kind) ?? 0) + 1;
      this.counts.set(kind, n);
      placeholder = `<${kind}#${n}>`;
      this.ids.set(value, placeholder);
    }
    return placeholder;
  }

  /** The id kind of a string under `key` in an object whose parent key is `parent`. */
  private idKind(key: string, parent: string | undefined): string | undefined {
    if (ID_KINDS[key]) return ID_KINDS[key];
    if (key !== "id") return undefined;
    if (parent === "thread" || parent === "threads") return "thread";
    if (parent === "data") return "entry";
    if (parent === "turn" || parent === "turns") return "turn";
    if (parent === "item" || parent === "items") return "item";
    if (parent === "sessions") return "session";
    return undefined;
  }

  value(value: unknown, key: string | undefined, parent: string | undefined): unknown {
    if (value === null || value === undefined) return undefined;
    if (Array.isArray(value)) return value.map((element) => this.value(element, key, key === undefined ? parent : key));
    // What an agent puts in these is its own business (ACP's rawInput/rawOutput): only whether one came counts.
    if (key && OPAQUE_KEYS.has(key)) return "<value>";
    if (typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const name of Object.keys(value).sort()) {
        if (name.startsWith("_")) continue;
        const normalised = this.value((value as Record<string, unknown>)[name], name, key);
        // A map keyed by ids (thread/list's readStates) is keyed by placeholders.
        if (normalised !== undefined) out[this.ids.get(name) ?? (ID_LIKE.test(name) ? "<id>" : name)] = normalised;
      }
      return out;
    }
    if (typeof value === "string") {
      const kind = key ? this.idKind(key, parent) : undefined;
      if (kind) return this.id(kind, value);
      if (this.ids.has(value)) return this.ids.get(value);
      if (key && VALUE_KEYS.has(key)) return value;
      return "<string>";
    }
    if (typeof value === "number") return key === "code" ? value : "<number>";
    return value;
  }
}

export interface Shaped {
  label: string;
  connection: number;
  /** Leaf path (array indices removed) → the values found there; `PATH[]#` holds array lengths. */
  leaves: Map<string, Set<string>>;
}

function leaves(value: unknown, path: string, out: Map<string, Set<string>>): void {
  const add = (at: string, leaf: string) => {
    const values = out.get(at) ?? new Set<string>();
    values.add(leaf);
    out.set(at, values);
  };
  if (Array.isArray(value)) {
    add(`${path}[]#`, String(value.length));
    for (const element of value) leaves(element, `${path}[]`, out);
    return;
  }
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) add(path, "{}");
    for (const key of keys) leaves((value as Record<string, unknown>)[key], path ? `${path}.${key}` : key, out);
    return;
  }
  add(path, JSON.stringify(value));
}

/** The messages a server sent in a scenario, labelled and flattened, deltas of one item run together. */
export function shape(entries: WireEntry[]): Shaped[] {
  const normaliser = new Normaliser();
  const methods = new Map<string, string>();
  const shaped: Shaped[] = [];
  let lastDelta: { key: string; index: number } | undefined;
  for (const { direction, message, connection } of entries) {
    if (direction === "out") {
      if (typeof message.method === "string" && "id" in message) methods.set(`${connection}:${JSON.stringify(message.id)}`, message.method);
      else if (!("method" in message) && "id" in message) lastDelta = undefined;
      continue;
    }
    let label: string;
    let body: unknown;
    if (typeof message.method === "string") {
      label = `${"id" in message ? "request" : "notification"} ${message.method}`;
      // ACP's one notification carries many kinds: the kind is part of what a client sees.
      if (message.method === "session/update") label += ` ${message.params?.update?.sessionUpdate}`;
      body = { params: message.params };
      if ("id" in message) normaliser.id("request", String(message.id));
    } else {
      const method = methods.get(`${connection}:${JSON.stringify(message.id)}`) ?? "?";
      label = message.error ? `error response ${method}` : `response ${method}`;
      body = message.error ? { error: { code: message.error.code, data: message.error.data } } : { result: message.result };
    }
    const chunk = message.method === "session/update" && ACP_CHUNKS.has(message.params?.update?.sessionUpdate);
    if (typeof message.method === "string" && (DELTAS.has(message.method) || chunk)) {
      const key = `${connection}:${label}:${message.params?.itemId ?? message.params?.sessionId}`;
      if (lastDelta?.key === key) continue;
      lastDelta = { key, index: shaped.length };
    } else lastDelta = undefined;
    const flat: Shaped["leaves"] = new Map();
    leaves(normaliser.value(body, undefined, undefined), "", flat);
    shaped.push({ label, connection, leaves: flat });
  }
  return shaped;
}

/** Longest common subsequence of two label lists: the aligned index pairs. */
function align(a: string[], b: string[]): Array<[number, number]> {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
  const pairs: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([i, j]);
      i++;
      j++;
    } else if (table[i + 1]![j]! >= table[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

const show = (values: Set<string>) => [...values].sort().join("|");

/** True when `path` lies inside an array that is empty on one side and not on the other (its length says it all). */
function insideUnevenArray(path: string, a: Shaped["leaves"], b: Shaped["leaves"]): boolean {
  for (let at = path.indexOf("[]"); at !== -1; at = path.indexOf("[]", at + 2)) {
    const count = `${path.slice(0, at)}[]#`;
    if (count === path) return false;
    const empty = (leaves: Shaped["leaves"]) => show(leaves.get(count) ?? new Set()) === "0";
    if (empty(a) !== empty(b)) return true;
  }
  return false;
}

/**
 * The differences of `actual` (the gateway) from `reference` (the real server), one line each:
 *   `only in reference: LABEL`, `only in tau-gateway: LABEL`, `order: LABEL`,
 *   `LABEL: PATH only in reference` / `… only in tau-gateway` / `LABEL: PATH is A in reference, B in tau-gateway`.
 * Lines are unique (a difference found on several elements or messages is listed once).
 */
export function wireDifferences(reference: Shaped[], actual: Shaped[]): string[] {
  const referenceName = "reference";
  const found = new Set<string>();
  const connections = new Set([...reference, ...actual].map((m) => m.connection));
  for (const connection of connections) {
    const ref = reference.filter((m) => m.connection === connection);
    const act = actual.filter((m) => m.connection === connection);
    const pairs = align(
      ref.map((m) => m.label),
      act.map((m) => m.label),
    );
    const refAligned = new Set(pairs.map(([i]) => i));
    const actAligned = new Set(pairs.map(([, j]) => j));
    const refOnly = ref.filter((_, i) => !refAligned.has(i)).map((m) => m.label);
    const actOnly = act.filter((_, j) => !actAligned.has(j)).map((m) => m.label);
    for (const label of refOnly) found.add(actOnly.includes(label) ? `order: ${label}` : `only in ${referenceName}: ${label}`);
    for (const label of actOnly) if (!refOnly.includes(label)) found.add(`only in tau-gateway: ${label}`);
    for (const [i, j] of pairs) {
      const a = ref[i]!;
      const b = act[j]!;
      const paths = new Set([...a.leaves.keys(), ...b.leaves.keys()]);
      for (const path of paths) {
        const x = a.leaves.get(path);
        const y = b.leaves.get(path);
        if (x && y && show(x) === show(y)) continue;
        if (insideUnevenArray(path, a.leaves, b.leaves)) continue;
        const where = `${a.label}: ${path}`;
        if (x === undefined) found.add(`${where} only in tau-gateway`);
        else if (y === undefined) found.add(`${where} only in ${referenceName}`);
        else found.add(`${where} is ${show(x)} in ${referenceName}, ${show(y)} in tau-gateway`);
      }
    }
  }
  return [...found].sort();
}
