import type { DialectRegistry, EventEntry, MethodEntry, NotificationEntry, Sender } from "../registry/model.js";
import { eventName, messageName, methodTypeBase, notificationName, paramsName, payloadName, requestName, responseName, resultName } from "../registry/names.js";
import { resolveForVersion } from "../registry/resolve.js";
import { anyOf, DEFINITIONS, inRange, ref, type Schema } from "../registry/schema.js";

/**
 * One JSON Schema bundle per dialect and version: every named definition of the registry, every
 * entry's params/result/payload and whole message as a named definition, and per direction a
 * union of every message that may travel that way (`ClientMessage`, `ServerMessage`).
 */

export interface Bundle {
  dialect: DialectRegistry["dialect"];
  version: number | string;
  /** File name under schema/ (and, with .ts, under generated/). */
  baseName: string;
  schema: Schema;
}

export const bundleBaseName = (dialect: string, version: number | string) => `${dialect}-v${version}`;
export const SCHEMA_ID_PREFIX = "urn:tau-gateway:schema:";

/** The entries of a registry that exist in `version`. */
export function entriesFor(registry: DialectRegistry, version: number | string) {
  const present = (e: { versions?: { since?: number; until?: number } }) =>
    typeof version !== "number" || !e.versions || inRange(e.versions, version);
  return {
    methods: registry.methods.filter(present),
    notifications: registry.notifications.filter(present),
    serverMessages: registry.serverMessages.filter(present),
    events: registry.events.filter(present),
    errors: registry.errors.filter(present),
  };
}

export function buildBundle(registry: DialectRegistry, version: number | string): Bundle {
  const numeric = typeof version === "number" ? version : undefined;
  const entries = entriesFor(registry, version);
  const defs: Record<string, Schema> = {};
  const define = (name: string, schema: Schema, description?: string) => {
    if (name in defs) throw new Error(`${registry.dialect} v${version}: definition ${name} defined twice`);
    defs[name] = withTitle(name, resolveForVersion(schema, numeric), description);
  };

  for (const [name, schema] of Object.entries(registry.definitions)) define(name, schema);

  const fromClient: string[] = [];
  const fromServer: string[] = [];
  const sentBy = (sender: Sender) => (sender === "client" ? fromClient : fromServer);

  for (const m of entries.methods) defineMethod(m);
  for (const n of entries.notifications) defineNotification(n);
  for (const s of entries.serverMessages) {
    define(messageName(s.name), s.message, s.description);
    fromServer.push(messageName(s.name));
  }
  if (entries.events.length) {
    for (const e of entries.events) defineEvent(e);
    define("Event", anyOf(...entries.events.map((e) => ref(eventName(e.name)))), "Any event carried by session/event.");
  }

  // Responses: a Tau server sends them as the `response` server message; JSON-RPC responses
  // travel opposite to the requests they answer and are matched to them by id.
  for (const name of registry.frame.responseMessages ?? []) {
    if (!(name in defs)) throw new Error(`${registry.dialect} v${version}: response message ${name} is not defined`);
    for (const list of [fromClient, fromServer]) list.push(name);
  }
  define("ClientMessage", anyOf(...fromClient.map(ref)), "Every message a client may send.");
  define("ServerMessage", anyOf(...fromServer.map(ref)), "Every message a server may send.");

  return {
    dialect: registry.dialect,
    version,
    baseName: bundleBaseName(registry.dialect, version),
    schema: {
      $schema: "https://json-schema.org/draft/2019-09/schema",
      $id: `${SCHEMA_ID_PREFIX}${bundleBaseName(registry.dialect, version)}`,
      title: `${registry.title} ${typeof version === "number" ? `v${version}` : version}`,
      description:
        "Generated from the tau-gateway registry; do not edit. Objects without additionalProperties:false accept unknown fields (Tau strips them, Ask ignores them).",
      anyOf: [ref("ClientMessage"), ref("ServerMessage")],
      [DEFINITIONS]: defs,
    },
  };

  function defineMethod(m: MethodEntry) {
    const base = methodTypeBase(m);
    define(paramsName(base), m.params, `Params of ${m.name}.`);
    define(resultName(base), m.result, `Result of ${m.name}.`);
    define(requestName(base), registry.frame.request(m, ref(paramsName(base))), m.description);
    define(responseName(base), registry.frame.response(m, ref(resultName(base))), `Success response to ${m.name}.`);
    sentBy(m.sender).push(requestName(base));
  }

  function defineNotification(n: NotificationEntry) {
    const base = methodTypeBase(n);
    define(paramsName(base), n.params, `Params of ${n.name}.`);
    define(notificationName(base), registry.frame.request(n, ref(paramsName(base))), n.description);
    sentBy(n.sender).push(notificationName(base));
  }

  function defineEvent(e: EventEntry) {
    if (!registry.frame.event) throw new Error(`${registry.dialect} has events but no event frame`);
    define(payloadName(e.name), e.payload, `Payload of ${e.name}.`);
    const description = e.extension ? `${e.description} (gateway extension)` : e.description;
    define(eventName(e.name), registry.frame.event(e, ref(payloadName(e.name))), description);
  }
}

/** Titles give every definition a stable generated type name. */
function withTitle(name: string, schema: Schema, description?: string): Schema {
  const { title: _ignored, ...rest } = schema;
  return { title: name, ...(description && !rest.description ? { description } : {}), ...rest };
}
