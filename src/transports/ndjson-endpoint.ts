import type { Readable, Writable } from "node:stream";
import { SHUTDOWN_TURN_ENDING } from "../bridge/turn-endings.js";
import type { JsonRpcEndpoint, OpenEndpoint } from "./jsonrpc-endpoint.js";
import { NdjsonStream, type NdjsonEnd, type NdjsonStreamOptions } from "./ndjson-stream.js";
import { PIPE_TRANSPORT } from "./outbound-policy.js";
import { textOf } from "./shared-text.js";
import { untilAborted } from "./stop-signal.js";

/**
 * Any dialect's JSON-RPC endpoint as NDJSON on a pair of streams: stdin/stdout of a command a
 * client spawned, or one client of a Unix socket. One message per line each way, with the bounds
 * every NDJSON stream has (ndjson-stream.ts: line length, no reading while the output is backed
 * up, deadlines); the in-flight limit is the endpoint's gate.
 */
export function serveNdjson<Endpoint extends JsonRpcEndpoint>(input: Readable, output: Writable, open: OpenEndpoint<Endpoint>, options: NdjsonStreamOptions): { stream: NdjsonStream; endpoint: Endpoint } {
  let endpoint!: Endpoint;
  const stream = new NdjsonStream(
    input,
    output,
    (send) => {
      endpoint = open((message) => send(textOf(message)), PIPE_TRANSPORT);
      return {
        receive: (line) => endpoint.receive(line),
        oversized: (maxLineBytes) => endpoint.skipOversized(maxLineBytes),
        close: () => void endpoint.close(),
      };
    },
    options,
  );
  return { stream, endpoint };
}

/**
 * How a dialect's stdio command stops: what its requests in flight get, and what ends the work
 * still running once their time is up.
 */
export interface StdioStopRule<Endpoint extends JsonRpcEndpoint> {
  /**
   * Whether lines are still read while the requests in flight finish (a new request then gets the
   * gate's retryable refusal, a cancel is heard), or reading stops as soon as the stop begins.
   */
  readsWhileDraining: boolean;
  /**
   * When the work still running is ended: `on-signal`, only when a signal stopped the command, and
   * whether or not requests are open (a Codex turn outlives its `turn/start`; at the end of input
   * requests get the drain time and the turns run on); `in-flight`, whenever requests are still
   * unanswered once the drain time is up (an ACP prompt, an MCP tool call: each waits for its turn).
   */
  interrupts: "on-signal" | "in-flight";
  /** Ends that work within `budgetMs`; without it nothing is ended. */
  interrupt?(endpoint: Endpoint, budgetMs: number): Promise<unknown> | void;
  /** How long the requests of interrupted work then get to be answered (`in-flight`). */
  answersMs?: number;
}

export interface NdjsonStdioOptions<Endpoint extends JsonRpcEndpoint> extends NdjsonStreamOptions {
  /** How long requests in flight get to be answered once input has ended or `stop` aborted. */
  drainTimeoutMs: number;
  /** Ends the input early, as its end would (SIGTERM). */
  stop?: AbortSignal;
  /** Stops waiting for the requests in flight before `drainTimeoutMs` has passed (a second signal). */
  hurry?: AbortSignal;
  rule: StdioStopRule<Endpoint>;
}

/**
 * A dialect's endpoint on stdin/stdout until input ends, the output goes away or `stop` aborts;
 * then the requests in flight are answered (within `drainTimeoutMs`, or until `hurry`), the work
 * still running is ended as the dialect's rule says, and everything is closed before this resolves.
 */
export async function serveNdjsonStdio<Endpoint extends JsonRpcEndpoint>(
  input: Readable,
  output: Writable,
  open: OpenEndpoint<Endpoint>,
  options: NdjsonStdioOptions<Endpoint>,
): Promise<NdjsonEnd | "stopped"> {
  const { rule } = options;
  const { stream, endpoint } = serveNdjson(input, output, open, options);
  const why = await Promise.race([stream.ended, untilAborted(options.stop)]);
  if (rule.interrupts === "on-signal" && why !== "stopped") {
    await stream.close(options.drainTimeoutMs);
    await endpoint.close();
    return why;
  }
  if (!rule.readsWhileDraining) stream.stopReading();
  await Promise.race([stream.whenSettled(options.drainTimeoutMs), untilAborted(options.hurry)]);
  stream.stopReading();
  if (rule.interrupt && (rule.interrupts === "on-signal" || stream.inFlight > 0)) {
    await rule.interrupt(endpoint, SHUTDOWN_TURN_ENDING.turnsMs);
    if (rule.interrupts === "in-flight") await stream.whenSettled(rule.answersMs ?? SHUTDOWN_TURN_ENDING.answersMs);
  }
  // The stream first: lines read but not yet handed on are answered before the endpoint closes.
  // The requests in flight had their drain time: the close gives them (and the output) only its own grace.
  await stream.close();
  await endpoint.close();
  return why;
}
