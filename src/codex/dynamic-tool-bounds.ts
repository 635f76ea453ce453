import type { RpcError } from "../shared/rpc-error.js";
import { invalidParams } from "./codex-errors.js";

/**
 * How much a Codex client may ask the gateway to take on with thread/start `dynamicTools`: every
 * tool's schema is checked against the JSON Schema meta-schema by the gateway, which costs time on
 * the event loop in proportion to the schema's size. So the count of tools and the size of each
 * schema are bounded (checked before any work: before the params are validated, whose validator
 * walks every tool), and each schema is checked in an event-loop turn of its own.
 */

/** OpenAI's function-calling API takes at most 128 tools in a request: no model is offered more. */
export const MAX_DYNAMIC_TOOLS = 128;
/** Objects and arrays in one tool's inputSchema (checked in about 10 ms at this size). */
export const MAX_TOOL_SCHEMA_NODES = 1_000;

/**
 * Whether `schema` holds more than `max` objects and arrays; stops counting past `max`. Nodes are
 * counted as they are found, and an object's members are walked without making an array of them,
 * so a schema of 20,000 properties costs what its first `max` nodes do, not a copy of every member.
 */
export function exceedsNodes(schema: unknown, max: number): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  let count = 1;
  if (count > max) return true;
  const stack: object[] = [schema];
  const found = (value: unknown): boolean => {
    if (typeof value !== "object" || value === null) return false;
    stack.push(value);
    return ++count > max;
  };
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (const item of node) if (found(item)) return true;
    } else {
      for (const key in node) if (Object.hasOwn(node, key) && found((node as Record<string, unknown>)[key])) return true;
    }
  }
  return false;
}

/**
 * The refusal of thread/start params, as received, whose `dynamicTools` hold more tools than the
 * bound or a tool whose `inputSchema` is larger than the bound; undefined for any other params
 * (what is not of the right shape is the validator's to refuse). A spec is a function or a
 * namespace of functions (`{type:"namespace", tools:[…]}`, as the terminal UI registers its own):
 * the gateway offers only the first kind, but the validator walks both, so every function counts,
 * in a namespace or not, and each one's schema is bounded. The count is taken from the lengths of
 * the arrays before any tool is looked at.
 */
export function dynamicToolsOverBounds(params: unknown): RpcError | undefined {
  const specs = typeof params === "object" && params !== null ? (params as { dynamicTools?: unknown }).dynamicTools : undefined;
  if (!Array.isArray(specs)) return undefined;
  let count = specs.length;
  // A namespace holds its functions; it is not one itself. (Past the bound by the specs alone, they are not looked at.)
  if (count <= MAX_DYNAMIC_TOOLS) for (const spec of specs) count += (namespaceTools(spec)?.length ?? 1) - 1;
  if (count > MAX_DYNAMIC_TOOLS) return invalidParams("dynamicTools", `${count} tools are more than the ${MAX_DYNAMIC_TOOLS} the gateway takes${count === specs.length ? "" : " (functions in a namespace count)"}`);
  for (const [index, spec] of specs.entries()) {
    const inNamespace = namespaceTools(spec);
    const placed: Array<[string, unknown]> = inNamespace ? inNamespace.map((tool, at) => [`dynamicTools[${index}].tools[${at}]`, tool]) : [[`dynamicTools[${index}]`, spec]];
    for (const [at, tool] of placed) {
      const schema: unknown = typeof tool === "object" && tool !== null ? (tool as { inputSchema?: unknown }).inputSchema : undefined;
      if (exceedsNodes(schema, MAX_TOOL_SCHEMA_NODES)) {
        return invalidParams(`${at}.inputSchema`, `holds more than the ${MAX_TOOL_SCHEMA_NODES} objects and arrays the gateway takes in one tool's schema`);
      }
    }
  }
  return undefined;
}

/** The `tools` of a namespace spec, or undefined for any other spec. */
function namespaceTools(spec: unknown): unknown[] | undefined {
  if (typeof spec !== "object" || spec === null) return undefined;
  const { type, tools } = spec as { type?: unknown; tools?: unknown };
  return type === "namespace" && Array.isArray(tools) ? tools : undefined;
}

/** Resolves in the next event-loop turn, after what waits for I/O. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
