import { randomUUID } from "node:crypto";
import type { SessionExecParams, SessionExecResult } from "../../../generated/tau-v18.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { errorText } from "../../shared/unknown-values.js";
import type { ToolContext } from "./gateway-tool.js";
import { errorReply, textReply, type ToolCall, type ToolReply } from "./tool-call.js";
import { DEFAULT_COMMAND_TIMEOUT_MS, type CommandToolConfig } from "./tools-config.js";

/**
 * How an approved command tool runs (command-tools.ts decides whether it does): in the session's
 * execution environment with Tau's `session.exec`, the configured command and args as argv
 * (`exec "$0" "$@"` makes the first one the program) and the model's arguments as JSON on stdin,
 * so nothing the model writes is ever interpreted by a shell; and how its end reads as the result.
 */

/** Runs argv[0] with the remaining values as its arguments, without shell interpolation (spec §4.3). */
export const EXEC_ARGV = 'exec "$0" "$@"';

/** The limit a command tool's run gets. */
export const commandTimeoutMs = (tool: CommandToolConfig): number => tool.timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;

/** `session.exec` of the command; when Tau cancels the call, the run is cancelled upstream too (`session.cancelExec`). */
export async function execCommand(upstream: Pick<TauUpstream, "request">, context: Pick<ToolContext, "sessionId" | "log">, call: ToolCall, tool: CommandToolConfig): Promise<ToolReply> {
  const { sessionId, log } = context;
  const timeoutMs = commandTimeoutMs(tool);
  const params: SessionExecParams = {
    sessionId,
    execId: `gw-${randomUUID()}`,
    command: EXEC_ARGV,
    args: [tool.command, ...(tool.args ?? [])],
    stdinBase64: Buffer.from(JSON.stringify(call.message.arguments), "utf8").toString("base64"),
    timeoutMs,
  };
  const cancel = () => {
    upstream
      .request("session.cancelExec", { sessionId, execId: params.execId })
      .catch((error: unknown) => log?.("debug", "session.cancelExec failed", { sessionId, execId: params.execId, error: errorText(error) }));
  };
  call.signal.addEventListener("abort", cancel, { once: true });
  try {
    const result = await upstream.request("session.exec", params, { signal: call.signal });
    return commandReply(tool, timeoutMs, result);
  } finally {
    call.signal.removeEventListener("abort", cancel);
  }
}

/** How much of a failed command's output the error carries (its end, where the reason usually is). */
export const ERROR_OUTPUT_TAIL_CHARS = 4_000;

/** A finished `session.exec` as the tool's result: exit 0 → the output; anything else fails the tool with the output's end. */
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
