import { methodKey, type MethodKind, type SchemaNode, type Surface, type SurfaceMethod } from "./surface.js";
import { matchCodexResults } from "./codex-results.js";
import { isObject } from "../../shared/unknown-values.js";
import { unescapePointerSegment } from "../../shared/json-pointer.js";

/**
 * The bundle layouts `schema diff` reads, each turned into a Surface:
 * - tau-gateway's own (schema/*.schema.json): `$defs.ClientMessage` / `ServerMessage` list every
 *   message definition; a request `XRequest` has its success response in `XResponse`.
 * - the official Codex app-server bundle (`codex app-server generate-json-schema`): the
 *   `ClientRequest`, `ClientNotification`, `ServerRequest`, `ServerNotification` unions; a request's
 *   result is found by the names Codex gives responses (codex-results.ts).
 * - the official ACP schema: definitions annotated with `x-method` and `x-side` (the side that
 *   handles it), `XRequest` / `XNotification` being the params and `XResponse` the result.
 */

type Json = Record<string, unknown>;

export class BundleFormatError extends Error {}

export function readSurface(document: unknown): Surface {
  if (!isObject(document)) throw new BundleFormatError("not a JSON Schema bundle (the document is not an object)");
  const defs = document.$defs;
  const definitions = document.definitions;
  if (isObject(defs) && isObject(defs.ClientMessage) && isObject(defs.ServerMessage)) return ours(document, defs);
  if (isObject(definitions) && isObject(definitions.ClientRequest) && isObject(definitions.ServerNotification)) return codexOfficial(document, definitions);
  if (isObject(defs) && Object.values(defs).some((d) => isObject(d) && typeof d["x-method"] === "string")) return acpOfficial(document, defs);
  throw new BundleFormatError(
    "not a schema bundle this command knows: expected tau-gateway's (schema/*.schema.json), the official Codex app-server one or the official ACP one",
  );
}

/** The node a local `$ref` ("#/a/b") points at in `document`. */
export function resolvePointer(document: Json, ref: string): SchemaNode | undefined {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const segment = unescapePointerSegment(decodeURIComponent(raw));
    if (!isObject(node)) return undefined;
    node = node[segment];
  }
  return isObject(node) || typeof node === "boolean" ? node : undefined;
}

function add(methods: Map<string, SurfaceMethod>, method: SurfaceMethod): void {
  const key = methodKey(method.kind, method.name);
  if (!methods.has(key)) methods.set(key, method);
}

/** The value a property is pinned to (`const`, or a one-value `enum`), if any. */
export function pinnedValue(node: unknown): unknown {
  if (!isObject(node)) return undefined;
  if ("const" in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length === 1) return node.enum[0];
  return undefined;
}

const refName = (node: unknown) => (isObject(node) && typeof node.$ref === "string" ? node.$ref.split("/").pop() : undefined);

function ours(document: Json, defs: Json): Surface {
  const methods = new Map<string, SurfaceMethod>();
  const members = (union: unknown) => (isObject(union) && Array.isArray(union.anyOf) ? union.anyOf : []).map(refName).filter((n): n is string => !!n);
  for (const [side, union] of [["client", defs.ClientMessage], ["server", defs.ServerMessage]] as const) {
    for (const name of members(union)) {
      const def = defs[name];
      if (!isObject(def) || !isObject(def.properties)) continue;
      const properties = def.properties;
      const method = pinnedValue(properties.method);
      if (typeof method === "string") {
        // A request carries an id (not always a required one: Codex reads a request without one as a notification).
        const isRequest = "id" in properties;
        const kind: MethodKind = side === "client" ? (isRequest ? "request" : "notification") : isRequest ? "server-request" : "server-notification";
        const response = defs[name.replace(/Request$/, "Response")];
        const result = isRequest && name.endsWith("Request") && isObject(response) && isObject(response.properties) ? (response.properties.result as SchemaNode | undefined) : undefined;
        add(methods, { kind, name: method, params: properties.params as SchemaNode | undefined, result });
        continue;
      }
      // Tau's server messages are told apart by `type`; responses are read with their requests.
      const type = pinnedValue(properties.type);
      if (side === "server" && typeof type === "string" && type !== "response") add(methods, { kind: "server-notification", name: type, params: def });
    }
  }
  return { layout: "tau-gateway", document, methods, envelopes: new Map(), warnings: [] };
}

function codexOfficial(document: Json, definitions: Json): Surface {
  const methods = new Map<string, SurfaceMethod>();
  const envelopes: Surface["envelopes"] = new Map();
  const warnings: Surface["warnings"] = [];
  const v2 = isObject(definitions.v2) ? definitions.v2 : {};
  const definition = (name: string) => (definitions[name] ?? v2[name]) as SchemaNode | undefined;
  const names = [...Object.keys(definitions), ...Object.keys(v2)];
  const unions: Array<[string, MethodKind]> = [
    ["ClientRequest", "request"],
    ["ClientNotification", "notification"],
    ["ServerRequest", "server-request"],
    ["ServerNotification", "server-notification"],
  ];
  for (const [union, kind] of unions) {
    const node = definitions[union];
    if (!isObject(node)) continue;
    const members = [...(Array.isArray(node.oneOf) ? node.oneOf : []), ...(Array.isArray(node.anyOf) ? node.anyOf : [])];
    const found: SurfaceMethod[] = [];
    for (const member of members) {
      if (!isObject(member) || !isObject(member.properties)) continue;
      const name = pinnedValue(member.properties.method);
      if (typeof name === "string") found.push({ kind, name, params: member.properties.params as SchemaNode | undefined });
    }
    if (kind === "request" || kind === "server-request") {
      const { results, ambiguous } = matchCodexResults(
        found.map((m) => ({ method: m.name, paramsName: coreRefName(m.params) })),
        names,
      );
      for (const m of found) {
        const result = results.get(m.name);
        if (result !== undefined) m.result = definition(result);
      }
      for (const [method, fits] of ambiguous) warnings.push({ method, text: `${union} ${method}: its result could be any of ${fits.join(", ")}` });
    }
    found.forEach((m) => add(methods, m));
    // What stands beside the union's `oneOf` is part of every member.
    if (isObject(node.properties)) envelopes.set(kind, { name: union, schema: { type: "object", properties: node.properties, required: node.required ?? [] } });
  }
  return { layout: "codex (official)", document, methods, envelopes, warnings };
}

/** The definition a node names: a `$ref`, or one inside a nullable `anyOf` or an `allOf` wrapper. */
function coreRefName(node: unknown): string | undefined {
  if (!isObject(node)) return undefined;
  if (typeof node.$ref === "string") return refName(node);
  const wrapped = [node.anyOf, node.oneOf, node.allOf].find(Array.isArray) as unknown[] | undefined;
  const refs = (wrapped ?? []).filter((n) => !(isObject(n) && n.type === "null"));
  return refs.length === 1 ? refName(refs[0]) : undefined;
}

function acpOfficial(document: Json, defs: Json): Surface {
  const methods = new Map<string, SurfaceMethod>();
  const results = new Map<string, SchemaNode>();
  const found: Array<{ kind: MethodKind; name: string; params: SchemaNode }> = [];
  for (const [defName, def] of Object.entries(defs)) {
    if (!isObject(def) || typeof def["x-method"] !== "string") continue;
    const name = def["x-method"];
    // x-side is the side that handles the message; "protocol" messages go both ways.
    const handledBy = def["x-side"];
    const sides = handledBy === "protocol" ? ["agent", "client"] : [handledBy];
    for (const side of sides) {
      const clientSends = side === "agent";
      if (defName.endsWith("Response")) results.set(`${clientSends ? "request" : "server-request"} ${name}`, def);
      else if (defName.endsWith("Request")) found.push({ kind: clientSends ? "request" : "server-request", name, params: def });
      else if (defName.endsWith("Notification")) found.push({ kind: clientSends ? "notification" : "server-notification", name, params: def });
    }
  }
  for (const m of found) add(methods, { ...m, result: results.get(methodKey(m.kind, m.name)) });
  return { layout: "acp (official)", document, methods, envelopes: new Map(), warnings: [] };
}
