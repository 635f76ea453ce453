import type { DialectRegistry } from "../registry/model.js";
import { entriesFor } from "./bundle.js";

/**
 * The per-method facts of the registry's client requests and notifications, appended to each
 * generated bundle as typed constants (beside the method maps), so a dialect's surface reads them
 * from the registry instead of keeping its own lists: which methods a connection may send before
 * its handshake, which only an experimental-API connection may send, and which params fields need
 * that opt-in.
 */
export function methodFactsToTypeScript(registry: DialectRegistry, version: number | string): string {
  const entries = entriesFor(registry, version);
  const fromClient = [...entries.methods.filter((m) => m.kind === "request" && m.sender === "client"), ...entries.notifications.filter((n) => n.sender === "client")];
  const names = (pick: (entry: (typeof fromClient)[number]) => boolean | undefined) => fromClient.filter(pick).map((e) => e.name);
  const fields = fromClient.flatMap((e) => (e.experimentalFields?.length ? [[e.name, e.experimentalFields] as const] : []));
  return [
    constant(
      "BEFORE_INITIALIZE",
      "Client requests and notifications a connection may send before its handshake is done.",
      "ReadonlySet<keyof ClientRequests | keyof ClientNotifications>",
      `new Set(${list(names((e) => e.beforeInitialize))})`,
    ),
    constant(
      "EXPERIMENTAL_METHODS",
      "Client requests only a connection that opted in to the experimental API may send.",
      "ReadonlySet<keyof ClientRequests>",
      `new Set(${list(names((e) => e.experimental))})`,
    ),
    constant(
      "EXPERIMENTAL_FIELDS",
      "Params fields, by method, only the experimental API has: a value for one (null counts as none) needs the opt-in.",
      "{ readonly [M in keyof ClientRequests]?: readonly string[] }",
      fields.length ? `{\n${fields.map(([name, f]) => `  ${JSON.stringify(name)}: ${list(f)},`).join("\n")}\n}` : "{}",
    ),
  ].join("");
}

const list = (values: readonly string[]) => `[${values.map((v) => JSON.stringify(v)).join(", ")}]`;

const constant = (name: string, description: string, type: string, value: string) => `/**\n * ${description}\n */\nexport const ${name}: ${type} = ${value};\n`;
