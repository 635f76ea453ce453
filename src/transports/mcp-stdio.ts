import type { Readable, Writable } from "node:stream";
import type { McpServer } from "../mcp/server.js";
import type { CallGate } from "./jsonrpc-envelope.js";
import { attachMcpJsonRpc } from "./mcp-jsonrpc.js";
import { NdjsonStream, type NdjsonEnd } from "./ndjson-stream.js";
import { PIPE_TRANSPORT } from "./outbound-policy.js";
import type { ConnectionRecording } from "./recording/recording-folder.js";
import { untilAborted } from "./stop-signal.js";

export interface McpStdioOptions {
  /** Longest line accepted, in bytes; a longer one is skipped and answered -32600. */
  maxLineBytes: number;
  /** How long requests in flight (a tool call: its turn) get to be answered once input has ended. */
  drainTimeoutMs: number;
  /** The in-flight limit (and whatever else wraps each request). */
  gate?: CallGate;
  /** Ends the input early, as its end would (SIGTERM). */
  stop?: AbortSignal;
  /** Stops waiting for the requests in flight before `drainTimeoutMs` has passed (a second signal). */
  hurry?: AbortSignal;
  onError?(error: unknown): void;
  /** Records every line both ways (`--record FILE`). */
  recording?: ConnectionRecording;
}

/** How long the calls of interrupted turns get to be answered before the process goes on stopping. */
const INTERRUPTED_ANSWERS_MS = 5_000;

/**
 * MCP's stdio transport (an MCP host spawns the server): one JSON-RPC message per line each way,
 * with the bounds every stdio surface has (ndjson-stream.ts). When input ends — the host closed
 * it, or `stop` says the process is stopping — requests in flight get `drainTimeoutMs` to be
 * answered (or until `hurry` aborts); turns of tool calls still running are then interrupted, and
 * their calls answered with how the turn ended, before this resolves.
 */
export async function serveMcpStdio(server: McpServer, input: Readable, output: Writable, options: McpStdioOptions): Promise<NdjsonEnd | "stopped"> {
  let connection!: ReturnType<typeof attachMcpJsonRpc>;
  const stream = new NdjsonStream(
    input,
    output,
    (send) => {
      connection = attachMcpJsonRpc(server, send, { gate: options.gate, transport: PIPE_TRANSPORT });
      return {
        receive: (line) => connection.receive(line),
        oversized: (maxLineBytes) => connection.skipOversized(maxLineBytes),
        close: () => connection.close(),
      };
    },
    { maxLineBytes: options.maxLineBytes, onError: options.onError, recording: options.recording },
  );
  const why = await Promise.race([stream.ended, untilAborted(options.stop)]);
  stream.stopReading();
  await Promise.race([stream.whenSettled(options.drainTimeoutMs), untilAborted(options.hurry)]);
  if (stream.inFlight > 0) {
    connection.interruptCalls();
    await stream.whenSettled(INTERRUPTED_ANSWERS_MS);
  }
  connection.close();
  await stream.close();
  return why;
}
