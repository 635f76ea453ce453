/**
 * How much a Codex client may ask the gateway to take on with thread/start `dynamicTools`: every
 * tool's schema is checked against the JSON Schema meta-schema by the gateway, which costs time on
 * the event loop in proportion to the schema's size. So the count of tools and the size of each
 * schema are bounded (checked before any work), and each schema is checked in an event-loop turn
 * of its own.
 */

/** OpenAI's function-calling API takes at most 128 tools in a request: no model is offered more. */
export const MAX_DYNAMIC_TOOLS = 128;
/** Objects and arrays in one tool's inputSchema (checked in about 10 ms at this size). */
export const MAX_TOOL_SCHEMA_NODES = 1_000;

/** Whether `schema` holds more than `max` objects and arrays; stops counting past `max`. */
export function exceedsNodes(schema: unknown, max: number): boolean {
  let count = 0;
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (++count > max) return true;
    for (const value of Array.isArray(node) ? node : Object.values(node)) if (typeof value === "object" && value !== null) stack.push(value);
  }
  return false;
}

/** Resolves in the next event-loop turn, after what waits for I/O. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
