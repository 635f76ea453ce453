import type { SessionExecResult } from "../../../generated/tau-v18.js";
import type { CommandToolConfig } from "./tools-config.js";
import { errorReply, textReply, type ToolReply } from "./tool-reply.js";

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
