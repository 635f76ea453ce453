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

/**
 * Problems of the messages an agent sent, checked as an ACP client would take them: each against
 * the official definition for its method — a request's or notification's params by method, a
 * response's result by the method of the client's request it answers (`fromClient` are the
 * client's messages), an error as the official Error — and the whole message against the root.
 * (The root alone accepts any params for any method: it admits extension methods.)
 */
export function agentMessageProblems(fromAgent: unknown[], fromClient: unknown[]): string[] {
  const clientRequests = new Map<string, string>();
  for (const m of fromClient) if (isRequest(m)) clientRequests.set(JSON.stringify(m.id), m.method);
  const problems: string[] = [];
  fromAgent.forEach((message, index) => {
    const at = `#${index} ${JSON.stringify(message).slice(0, 200)}`;
    const root = officialValidator();
    if (!root(message)) return problems.push(`${at}: ${JSON.stringify(root.errors?.slice(0, 3))}`);
    const m = message as Record<string, unknown>;
    let definition: string | undefined;
    let value: unknown;
    if (typeof m.method === "string") {
      const suffix = "id" in m ? "Request" : "Notification";
      definition = definitionFor(m.method, "client", suffix);
      value = m.params;
    } else if ("error" in m) {
      definition = "Error";
      value = m.error;
    } else {
      const method = clientRequests.get(JSON.stringify(m.id));
      if (!method) return problems.push(`${at}: answers no request of the client`);
      definition = definitionFor(method, "agent", "Response");
      value = m.result;
    }
    if (!definition) return problems.push(`${at}: no official definition`);
    const check = officialValidator(definition);
    if (!check(value)) problems.push(`${at}: ${definition}: ${JSON.stringify(check.errors?.slice(0, 3))}`);
  });
  return problems;
}

function isRequest(m: unknown): m is { id: unknown; method: string } {
  return typeof m === "object" && m !== null && typeof (m as { method?: unknown }).method === "string" && "id" in m;
}

/**
 * The official definition of a method's params (`Request`/`Notification`) or result (`Response`);
 * `side` handles the method (or either side does: `x-side` "protocol", e.g. `$/cancel_request`).
 */
export function definitionFor(method: string, side: "agent" | "client", suffix: "Request" | "Response" | "Notification"): string | undefined {
  return Object.entries(officialSchema.$defs).find(([name, d]) => d["x-method"] === method && (d["x-side"] === side || d["x-side"] === "protocol") && name.endsWith(suffix))?.[0];
}
