import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import type { AskBridge } from "../bridge/ask-bridge.js";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "./ask-jsonrpc.js";

/**
 * The Ask surface as NDJSON on a pair of streams (stdin/stdout for clients that spawn an
 * app-server executable): one JSON message per line each way; resolves when input ends and every
 * request received has been answered.
 */
export async function serveAskStdio(bridge: AskBridge, input: Readable, output: Writable, options: AskJsonRpcOptions): Promise<void> {
  const connection = attachAskJsonRpc(bridge, (text) => void output.write(`${text}\n`), options);
  const pending = new Set<Promise<void>>();
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const handled = connection.receive(line);
    pending.add(handled);
    void handled.finally(() => pending.delete(handled));
  }
  await Promise.allSettled([...pending]);
  connection.close();
}
