import type { Readable, Writable } from "node:stream";
import type { AcpAgent } from "../acp/agent.js";
import { SHUTDOWN_TURN_ENDING } from "../bridge/turn-endings.js";
import { attachAcpJsonRpc } from "./acp-jsonrpc.js";
import type { CallGate } from "./jsonrpc-envelope.js";
import { NdjsonStream, type NdjsonEnd } from "./ndjson-stream.js";
import { PIPE_TRANSPORT } from "./outbound-policy.js";
import type { ConnectionRecording } from "./recording/recording-folder.js";
import { untilAborted } from "./stop-signal.js";

export interface AcpStdioOptions {
  /** Longest line accepted, in bytes; a longer one is skipped and answered -32600. */
  maxLineBytes: number;
  /** How long requests in flight (a prompt: its turn) get to be answered once input has ended. */
  drainTimeoutMs: number;
  /** The in-flight limit (and whatever else wraps each request). */
  gate?: CallGate;
  /** Ends the input early, as its end would (SIGTERM). */
  stop?: AbortSignal;
  /** Stops waiting for the requests in flight before `drainTimeoutMs` has passed (a second signal). */
  hurry?: AbortSignal;
  /** A connection failed to handle a line (a bug: it answers its own failures). */
  onError?(error: unknown): void;
  /** Records every line both ways (`--record FILE`). */
  recording?: ConnectionRecording;
}


/**
 * ACP on a pair of streams (stdin/stdout of an agent an editor spawned): one JSON-RPC message per
 * line each way, with the bounds every stdio surface has (ndjson-stream.ts: line length, no reading
 * while stdout is backed up; the in-flight limit is `options.gate`). When input ends — the editor
 * closed it, or `stop` says the process is stopping — requests in flight get `drainTimeoutMs` to be
 * answered (or until `hurry` aborts); turns still running then are interrupted (and their prompts
 * answered `cancelled`) before this resolves, so none outlives the process.
 */
export async function serveAcpStdio(agent: AcpAgent, input: Readable, output: Writable, options: AcpStdioOptions): Promise<NdjsonEnd | "stopped"> {
  let connection!: ReturnType<typeof attachAcpJsonRpc>;
  const stream = new NdjsonStream(
    input,
    output,
    (send) => {
      connection = attachAcpJsonRpc(agent, send, { gate: options.gate, transport: PIPE_TRANSPORT });
      return {
        receive: (line) => connection.receive(line),
        oversized: (maxLineBytes) => connection.skipOversized(maxLineBytes),
        close: () => void connection.close(),
      };
    },
    { maxLineBytes: options.maxLineBytes, onError: options.onError, recording: options.recording },
  );
  const why = await Promise.race([stream.ended, untilAborted(options.stop)]);
  // Input is still read while the prompts in flight finish: a new request is refused as retryable
  // (options.gate), a cancel is heard.
  await Promise.race([stream.whenSettled(options.drainTimeoutMs), untilAborted(options.hurry)]);
  stream.stopReading();
  if (stream.inFlight > 0) {
    await connection.interruptTurns(SHUTDOWN_TURN_ENDING.turnsMs);
    await stream.whenSettled(SHUTDOWN_TURN_ENDING.answersMs);
  }
  // The stream first: lines read but not yet handed on are answered before the connection closes.
  await stream.close();
  await connection.close();
  return why;
}
