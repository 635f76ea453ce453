import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ValidateFunction } from "ajv";
import { CLIENT_WINDOW } from "../../src/shared/client-window.js";

/**
 * The official Codex app-server schemas of the oldest and the newest @openai/codex of the client
 * window (test/fixtures/codex-VERSION: 0.169.0 and 0.171.0), compiled with ajv (draft-07), and the
 * names of their definitions per method. Messages the gateway sends are checked here, against
 * Codex's own schemas rather than the gateway's registry: valid in every release of the window.
 */

export type OfficialSchema = { definitions: Record<string, any> & { v2: Record<string, any> } };

const codexWindow = CLIENT_WINDOW.find((f) => f.package === "@openai/codex")!;
/** The releases whose official schema is committed, oldest first. */
export const OFFICIAL_RELEASES: readonly string[] = [codexWindow.oldest, codexWindow.newest];

/** Where a release's committed schema is: the stable bundle there, the experimental one in experimental/. */
export const officialSchemaDir = (release: string): string => join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", `codex-${release}`);

/** The oldest release's (the pinned one). */
export const OFFICIAL_SCHEMA_DIR = officialSchemaDir(OFFICIAL_RELEASES[0]!);
export const OFFICIAL_BUNDLE = "codex_app_server_protocol.schemas.json";

/** The stable or experimental bundle from `dir` (laid out as `generate-json-schema --out dir` and `--experimental --out dir/experimental` make it). */
export function readOfficialSchema(kind: "stable" | "experimental", dir = OFFICIAL_SCHEMA_DIR): OfficialSchema {
  const file = kind === "stable" ? join(dir, OFFICIAL_BUNDLE) : join(dir, "experimental", OFFICIAL_BUNDLE);
  return JSON.parse(readFileSync(file, "utf8")) as OfficialSchema;
}

/** The method names of one of the official message unions (ClientRequest, ServerNotification, …), with their params definition. */
export function officialMethods(schema: OfficialSchema, union: "ClientRequest" | "ServerRequest" | "ServerNotification" | "ClientNotification"): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const member of schema.definitions[union].oneOf as any[]) {
    const method = member.properties.method.enum[0] as string;
    const ref = member.properties.params?.$ref as string | undefined;
    out.set(method, ref?.split("/").pop());
  }
  return out;
}

/** Methods without params whose response the gateway serves, by the official response definition. */
const PARAMLESS_RESPONSES: Record<string, string> = { "configRequirements/read": "ConfigRequirementsReadResponse" };

/** The official definition of a request's result: `XParams` → `XResponse` (and the method without params the gateway serves). */
export function officialResultName(method: string, paramsName: string | undefined): string | undefined {
  return paramsName === undefined ? PARAMLESS_RESPONSES[method] : paramsName.replace(/Params$/, "Response");
}

/** Looks a definition up at the top level or under v2, as the combined bundle nests them. */
export function officialDefinition(schema: OfficialSchema, name: string): any {
  return schema.definitions[name] ?? schema.definitions.v2[name];
}

export interface OfficialValidator {
  /** Problems of one message the gateway sent; `respondsTo` is the method of the request a response answers. Empty when valid. */
  serverMessage(message: unknown, respondsTo?: string): string[];
}

/**
 * Validates server → client messages against the schema of every release of the window (`dirs`):
 * a problem is named with the release whose schema finds it.
 */
export function officialValidator(dirs: readonly string[] = OFFICIAL_RELEASES.map(officialSchemaDir)): OfficialValidator {
  const validators = dirs.map((dir) => ({ dir, validator: releaseValidator(dir) }));
  return {
    serverMessage(message, respondsTo) {
      return validators.flatMap(({ dir, validator }) => validator.serverMessage(message, respondsTo).map((p) => (dirs.length > 1 ? `${basename(dir)}: ${p}` : p)));
    },
  };
}

/**
 * Validates server → client messages: notifications against ServerNotification, requests against
 * ServerRequest, responses against the official response of their method (the experimental bundle
 * for methods only it has), errors against JSONRPCError.
 */
function releaseValidator(dir: string): OfficialValidator {
  const stable = readOfficialSchema("stable", dir);
  const experimental = readOfficialSchema("experimental", dir);
  const compilers = [stable, experimental].map((schema, i) => {
    const ajv = new Ajv({ strict: false, allErrors: true, allowUnionTypes: true, validateFormats: false });
    const id = `urn:codex-official:${i}`;
    ajv.addSchema({ ...schema, $id: id });
    const cache = new Map<string, ValidateFunction | undefined>();
    return (name: string): ValidateFunction | undefined => {
      if (!cache.has(name)) {
        const path = schema.definitions[name] ? `#/definitions/${name}` : schema.definitions.v2[name] ? `#/definitions/v2/${name}` : undefined;
        cache.set(name, path ? ajv.getSchema(`${id}${path}`) : undefined);
      }
      return cache.get(name);
    };
  });
  const results = new Map<string, string>();
  for (const schema of [stable, experimental]) {
    for (const union of ["ClientRequest", "ServerRequest"] as const) {
      for (const [method, params] of officialMethods(schema, union)) {
        const name = officialResultName(method, params);
        if (name) results.set(method, name);
      }
    }
  }
  const check = (name: string, value: unknown): string[] => {
    for (const compile of compilers) {
      const fn = compile(name);
      if (!fn) continue;
      if (fn(value)) return [];
      return (fn.errors ?? []).map((e) => `${name}${e.instancePath}: ${e.message}`);
    }
    return [`no official definition ${name}`];
  };
  return {
    serverMessage(message, respondsTo) {
      const m = message as Record<string, unknown>;
      if (typeof m !== "object" || m === null) return ["not an object"];
      if ("jsonrpc" in m) return ['has a "jsonrpc" member, which Codex never sends'];
      if (typeof m.method === "string") return check("id" in m ? "ServerRequest" : "ServerNotification", m);
      if ("error" in m) return check("JSONRPCError", m);
      if (!respondsTo) return ["a response to no known request"];
      const name = results.get(respondsTo);
      if (!name) return [`no official method ${respondsTo}`];
      return [...check("JSONRPCResponse", m), ...check(name, m.result)];
    },
  };
}
