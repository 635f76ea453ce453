import { randomUUID } from "node:crypto";
import type { SessionExecParams, SessionExecResult } from "../../../generated/tau-v18.js";
import type { TauUpstream, UpstreamLog } from "../../tau/upstream.js";
import { commandTimeoutMs } from "./client-tools.js";
import type { CommandToolConfig } from "./tools-config.js";
import { errorReply, textReply, type ToolReply } from "./tool-reply.js";

/**
 * Runs an approved command tool in the session's execution environment with `session.exec`
 * (DESIGN §4.4). The configured command and args travel as argv (`exec "$0" "$@"` makes the first
 * one the program), and the model's arguments as JSON on stdin, so nothing the model writes is ever
 * interpreted by a shell.
 */

/** Runs argv[0] with the remaining values as its arguments, without shell interpolation (spec §4.3). */
export const EXEC_ARGV = 'exec "$0" "$@"';
/** How much of a failed command's output the error carries (its end, where the reason usually is). */
export const ERROR_OUTPUT_TAIL_CHARS = 4_000;

/**
 * Resolves with the reply for Tau, or undefined when `signal` aborted (Tau cancelled the call:
 * the run is cancelled upstream too and nothing further may be sent).
 */
export async function runCommandTool(
  upstream: Pick<TauUpstream, "request">,
  sessionId: string,
  tool: CommandToolConfig,
  args: unknown,
  signal: AbortSignal,
  log?: UpstreamLog,
): Promise<ToolReply | undefined> {
  if (signal.aborted) return undefined;
  const params: SessionExecParams = {
    sessionId,
    execId: `gw-${randomUUID()}`,
    command: EXEC_ARGV,
    args: [tool.command, ...(tool.args ?? [])],
    stdinBase64: Buffer.from(JSON.stringify(args), "utf8").toString("base64"),
    timeoutMs: commandTimeoutMs(tool),
  };
  const cancel = () => {
    upstream
      .request("session.cancelExec", { sessionId, execId: params.execId })
      .catch((error: unknown) => log?.("debug", "session.cancelExec failed", { sessionId, execId: params.execId, error: String(error) }));
  };
  signal.addEventListener("abort", cancel, { once: true });
  try {
    const result = await upstream.request("session.exec", params, { signal });
    return signal.aborted ? undefined : commandReply(tool, params.timeoutMs!, result);
  } catch (error) {
    if (signal.aborted) return undefined;
    return errorReply(`could not run ${tool.command}: ${(error as Error).message}`);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/** Exit 0 → the output is the tool result; anything else fails the tool with the output's end. */
export function commandReply(tool: CommandToolConfig, timeoutMs: number, result: SessionExecResult): ToolReply {
  const truncatedNote = result.truncated ? "\n[output truncated]" : "";
  if (result.exitCode === 0 && !result.timedOut && !result.aborted) return textReply(result.output + truncatedNote);
  const what = result.timedOut
    ? `timed out after ${timeoutMs} ms`
    : result.aborted
      ? "was aborted"
      : result.exitCode === null
        ? `was killed by ${result.closeSignal ?? "a signal"}`
        : `exited with ${result.exitCode}`;
  const tail = result.output.length > ERROR_OUTPUT_TAIL_CHARS ? `…${result.output.slice(-ERROR_OUTPUT_TAIL_CHARS)}` : result.output;
  return errorReply(tail.trim() ? `${tool.command} ${what}: ${tail.trimEnd()}` : `${tool.command} ${what}`);
}
