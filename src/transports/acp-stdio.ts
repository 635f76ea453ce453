import type { Readable, Writable } from "node:stream";
import type { AcpAgent } from "../acp/agent.js";
import { attachAcpJsonRpc } from "./acp-jsonrpc.js";
import { pumpLines, settledWithin } from "./line-pump.js";

export interface AcpStdioOptions {
  /** How long requests in flight (a prompt: its turn) get to be answered once input has ended. */
  drainTimeoutMs: number;
  /** Ends the input early, as its end would (SIGTERM). */
  stop?: AbortSignal;
}

/** How long prompts get to be answered `cancelled` once their turns were interrupted. */
const ANSWER_AFTER_INTERRUPT_MS = 2_000;

/**
 * ACP on a pair of streams (stdin/stdout of an agent an editor spawned): one JSON-RPC message per
 * line each way. When input ends — the editor closed it, or `stop` says the process is stopping — requests in
 * flight get `drainTimeoutMs` to be answered; turns still running then are interrupted (and their
 * prompts answered `cancelled`) before this resolves, so none outlives the process.
 */
export async function serveAcpStdio(agent: AcpAgent, input: Readable, output: Writable, options: AcpStdioOptions): Promise<void> {
  const connection = attachAcpJsonRpc(agent, (text) => void output.write(`${text}\n`));
  const open = await pumpLines(input, (line) => connection.receive(line), options.stop);
  if (!(await settledWithin(open, options.drainTimeoutMs))) {
    await connection.interruptTurns();
    await settledWithin(open, ANSWER_AFTER_INTERRUPT_MS);
  }
  // Updates sent right after an answer (see SessionLink.sendAfterAnswer) still go out.
  await new Promise((resolve) => setImmediate(resolve));
  await connection.close(0);
}
