import type { CommandToolConfig } from "../../src/bridge/interactions/index.js";

/** A command tool that asks for approval and, once approved, prints the JSON arguments it was given. */
export const ECHO_TOOL: CommandToolConfig = {
  name: "echo-json",
  description: "Prints the JSON arguments it was given.",
  parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"] },
  command: "cat",
};

/** The Tau turn (of the scripted agent) that calls `echo-json` with {"a":7}, then says Done. */
export const CALL_ECHO = '/tool echo-json {"a":7}\nDone';

/** A promise and the function that settles it. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
