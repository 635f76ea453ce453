import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/**
 * The official ACP v1 schema as the SDK ships it (draft 2020-12), and validators of whole messages
 * against it: what a real ACP client accepts is what these accept.
 */

type Schema = Record<string, unknown>;

const require = createRequire(import.meta.url);
export const OFFICIAL_SCHEMA_PATH = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
export const officialSchema = JSON.parse(readFileSync(OFFICIAL_SCHEMA_PATH, "utf8")) as Schema & { $defs: Record<string, Schema> };

let ajv: Ajv2020 | undefined;
const compiled = new Map<string, ValidateFunction>();

/**
 * A validator for one definition of the official schema (or, with no name, its root: any message
 * of either side). The schema's own extension keywords (`x-…`, `discriminator`) are annotations.
 */
export function officialValidator(definition?: string): ValidateFunction {
  const key = definition ?? "";
  let fn = compiled.get(key);
  if (!fn) {
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
      ajv.addSchema({ ...officialSchema, $id: "urn:acp:official:v1" });
    }
    fn = ajv.getSchema(definition ? `urn:acp:official:v1#/$defs/${definition}` : "urn:acp:official:v1")!;
    compiled.set(key, fn);
  }
  return fn;
}

/** The messages an agent sends (requests, responses, notifications) per the official schema's `Agent` branch. */
export function officialAgentMessageProblems(message: unknown): string | undefined {
  const root = officialValidator();
  if (root(message)) {
    // The root accepts a message of either side; an agent's message must fit the agent side.
    const agentSide = agentMessageValidator();
    if (agentSide(message)) return undefined;
    return JSON.stringify(agentSide.errors?.slice(0, 5));
  }
  return JSON.stringify(root.errors?.slice(0, 5));
}

let agentSide: ValidateFunction | undefined;
function agentMessageValidator(): ValidateFunction {
  if (!agentSide) {
    officialValidator();
    const anyOf = officialSchema.anyOf as Schema[];
    const agent = anyOf.find((branch) => branch.title === "Agent")!;
    agentSide = ajv!.compile(rebase(agent));
  }
  return agentSide;
}

/** Points the Agent branch's references at the official schema added to the ajv instance. */
function rebase(node: unknown): Schema {
  const walk = (n: unknown): unknown => {
    if (Array.isArray(n)) return n.map(walk);
    if (n === null || typeof n !== "object") return n;
    const out: Schema = {};
    for (const [k, v] of Object.entries(n)) out[k] = k === "$ref" && typeof v === "string" && v.startsWith("#/") ? `urn:acp:official:v1${v}` : walk(v);
    return out;
  };
  return walk(node) as Schema;
}
