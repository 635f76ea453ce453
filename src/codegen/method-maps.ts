import type { DialectRegistry, Sender } from "../registry/model.js";
import { messageName, methodTypeBase, paramsName, payloadName, resultName } from "../registry/names.js";
import { entriesFor } from "./bundle.js";

/**
 * The lookup types appended to each generated bundle: per direction, every method, message type
 * or event type of that version mapped to its generated params/result/message/payload types. They
 * keep the link the JSON Schema definitions lose — which params and result belong to one method —
 * so code can type a call, a handler table or a dispatch table from the method name alone.
 */

/** One property of a map type: the wire name and the generated type names it stands for. */
interface MapMember {
  key: string;
  /** `{ params, result }` for requests, one type name otherwise. */
  value: string | { params: string; result: string };
}

export interface MethodMap {
  name: string;
  description: string;
  members: MapMember[];
}

/** The map type names, also checked against the definitions so a registry name cannot shadow one. */
export const MAP_TYPE_NAMES = [
  "ClientRequests",
  "ServerRequests",
  "ClientNotifications",
  "ServerNotifications",
  "ServerMessages",
  "Events",
] as const;

export function methodMaps(registry: DialectRegistry, version: number | string): MethodMap[] {
  const entries = entriesFor(registry, version);
  const requestsFrom = (sender: Sender): MapMember[] =>
    entries.methods
      .filter((m) => m.sender === sender)
      .map((m) => ({ key: m.name, value: { params: paramsName(methodTypeBase(m)), result: resultName(methodTypeBase(m)) } }));
  const notificationsFrom = (sender: Sender): MapMember[] =>
    entries.notifications.filter((n) => n.sender === sender).map((n) => ({ key: n.name, value: paramsName(methodTypeBase(n)) }));
  return [
    {
      name: "ClientRequests",
      description: "Requests a client sends and the server answers, by method: the params and the success result.",
      members: requestsFrom("client"),
    },
    {
      name: "ServerRequests",
      description: "Requests a server sends and the client answers (reverse requests), by method: the params and the success result.",
      members: requestsFrom("server"),
    },
    {
      name: "ClientNotifications",
      description: "Notifications a client sends (no response), by method: the params.",
      members: notificationsFrom("client"),
    },
    {
      name: "ServerNotifications",
      description: "Notifications a server sends (no response), by method: the params.",
      members: notificationsFrom("server"),
    },
    {
      name: "ServerMessages",
      description: "Server → client message types, by `type`: the whole message.",
      members: entries.serverMessages.map((s) => ({ key: s.name, value: messageName(s.name) })),
    },
    {
      name: "Events",
      description: "Event types carried by session/event, by `type`: the payload.",
      members: entries.events.map((e) => ({ key: e.name, value: payloadName(e.name) })),
    },
  ];
}

/** Every generated type name a map refers to (each must exist in the compiled bundle). */
export function referencedTypeNames(maps: MethodMap[]): string[] {
  return maps.flatMap((map) => map.members.flatMap(({ value }) => (typeof value === "string" ? [value] : [value.params, value.result])));
}

/** The maps as TypeScript, in the style of the compiled output around them. */
export function methodMapsToTypeScript(maps: MethodMap[]): string {
  return maps.map(mapToTypeScript).join("");
}

function mapToTypeScript(map: MethodMap): string {
  const doc = `/**\n * ${map.description}${map.members.length ? "" : "\n * This dialect has none in this version."}\n */\n`;
  if (!map.members.length) return `${doc}export interface ${map.name} {}\n`;
  const lines = map.members.map(({ key, value }) =>
    typeof value === "string"
      ? `  ${propertyKey(key)}: ${value};`
      : `  ${propertyKey(key)}: {\n    params: ${value.params};\n    result: ${value.result};\n  };`,
  );
  return `${doc}export interface ${map.name} {\n${lines.join("\n")}\n}\n`;
}

const propertyKey = (key: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : JSON.stringify(key));
