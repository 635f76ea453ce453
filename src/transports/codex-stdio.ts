import type { Readable, Writable } from "node:stream";
import type { CodexBridge } from "../codex/codex-bridge.js";
import { SHUTDOWN_TURN_ENDING } from "../bridge/turn-endings.js";
import { attachCodexJsonRpc, type CodexJsonRpcOptions } from "./codex-jsonrpc.js";
import { NdjsonStream, type NdjsonEnd } from "./ndjson-stream.js";
import { PIPE_TRANSPORT } from "./outbound-policy.js";
import type { ConnectionRecording } from "./recording/recording-folder.js";
import { untilAborted } from "./stop-signal.js";

export interface CodexStdioOptions extends CodexJsonRpcOptions {
  /** Longest line accepted, in bytes; a longer one is skipped (and logged: Codex answers nothing without an id). */
  maxLineBytes: number;
  /** How long requests in flight get to be answered once input has ended or `stop` aborted. */
  drainTimeoutMs: number;
  /** Ends the input early, as its end would (SIGTERM). */
  stop?: AbortSignal;
  /** Stops waiting for the requests in flight before `drainTimeoutMs` has passed (a second signal). */
  hurry?: AbortSignal;
  /** Records every line both ways (`--record FILE`). */
  recording?: ConnectionRecording;
  /**
   * When `stop` aborted: ends the turns still running (interrupted, each reported), within the
   * budget it is given, before the output closes — so the client gets their `turn/completed`.
   */
  endTurns?: (budgetMs: number) => Promise<unknown>;
}

/**
 * The Codex app-server surface as NDJSON on a pair of streams (`tau-gateway app-server`, which
 * clients spawn as `<codexPath> app-server`): one JSON message per line each way, with the bounds
 * every stdio surface has (ndjson-stream.ts: line length, no reading while stdout is backed up;
 * the in-flight limit is `options.gate`). Resolves when input ends, stdout goes away or `stop`
 * aborts, once the requests received are answered or `drainTimeoutMs` has passed; when `stop`
 * aborted, the turns still running are ended (`endTurns`) before the output closes.
 */
export async function serveCodexStdio(bridge: CodexBridge, input: Readable, output: Writable, options: CodexStdioOptions): Promise<NdjsonEnd | "stopped"> {
  const stream = new NdjsonStream(
    input,
    output,
    (send) => {
      const connection = attachCodexJsonRpc(bridge, send, { transport: PIPE_TRANSPORT, ...options });
      return {
        receive: (line) => connection.receive(line),
        oversized: (maxLineBytes) => connection.skipOversized(maxLineBytes),
        close: () => connection.close(),
      };
    },
    { maxLineBytes: options.maxLineBytes, recording: options.recording, onError: (error) => options.log?.("error", "Codex connection failed to handle a message", { error: String(error) }) },
  );
  const why = await Promise.race([stream.ended, untilAborted(options.stop)]);
  if (why === "stopped" && options.endTurns) {
    // Input is still read while the requests in flight finish: a new one is refused (options.gate), not left unread.
    await Promise.race([stream.whenSettled(options.drainTimeoutMs), untilAborted(options.hurry)]);
    stream.stopReading();
    await options.endTurns(SHUTDOWN_TURN_ENDING.turnsMs);
    // The requests in flight had their drain time: the close gives them (and the output) only its own grace.
    await stream.close();
    return why;
  }
  await stream.close(options.drainTimeoutMs);
  return why;
}
