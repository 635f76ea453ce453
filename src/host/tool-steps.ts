import type { ClientToolDefinition, ContentBlock, ImageContent, TextContent } from "../../generated/tau-v18.js";
import type { AssistantStream } from "./assistant-stream.js";
import type { ClientToolOutcome } from "./client-tool-broker.js";
import { runExec } from "./exec-runner.js";
import { AbortedError } from "./pause.js";
import type { SessionState } from "./session-state.js";
import { textContent, ToolRunRecorder } from "./tool-run.js";

/** What the two tool directives need from the turn. */
export interface ToolStepEnvironment {
  state: SessionState;
  assistant: AssistantStream;
  signal: AbortSignal;
  cwd: string;
  env?: Record<string, string>;
  /** The client tools attached when the turn started. */
  clientTools: ClientToolDefinition[];
  callClientTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ClientToolOutcome>;
}

const SUMMARY_MAX = 200;
const short = (text: string) => {
  const oneLine = text.trim().replace(/\s+/g, " ");
  return oneLine.length > SUMMARY_MAX ? `${oneLine.slice(0, SUMMARY_MAX - 1)}…` : oneLine;
};

/** `/bash COMMAND`: a host `bash` tool call run like session.exec. Returns the reply line. */
export async function runBashStep(env: ToolStepEnvironment, command: string): Promise<string> {
  const tool = ToolRunRecorder.start(env.state, env.assistant, "bash", { command });
  tool.running();
  const result = await runExec({ command, cwd: env.cwd, env: env.env }, env.signal).catch((err: Error) => err);
  if (result instanceof Error) {
    tool.finish({ status: "failed", content: textContent(result.message), isError: true, error: result.message });
    return `Tool bash failed: ${short(result.message)}`;
  }
  if (result.aborted) {
    tool.finish({ status: "cancelled", content: textContent("the command was cancelled"), isError: true, error: "cancelled" });
    throw new AbortedError();
  }
  const failed = result.exitCode !== 0 || result.timedOut;
  const status = result.timedOut ? "timed out" : result.exitCode === null ? `killed by ${result.closeSignal}` : `exit code ${result.exitCode}`;
  const output = result.output === "" ? "(no output)" : result.output;
  tool.finish({
    status: failed ? "failed" : "succeeded",
    content: textContent(failed ? `${output}\n(${status})` : output),
    isError: failed,
    summary: status,
    ...(failed ? { error: `command failed (${status})` } : {}),
  });
  return failed ? `Tool bash failed (${status}): ${short(output)}` : `Tool bash returned: ${short(output)}`;
}

/** `/tool NAME JSON`: a call of a client tool through the broker. Returns the reply line. */
export async function runClientToolStep(env: ToolStepEnvironment, name: string, args: Record<string, unknown>): Promise<string> {
  const tool = ToolRunRecorder.start(env.state, env.assistant, name, args);
  if (!env.clientTools.some((t) => t.name === name)) {
    const error = `unknown tool: ${name} (no attached client advertises it)`;
    tool.finish({ status: "failed", content: textContent(error), isError: true, error });
    return `Tool ${name} failed: ${error}`;
  }
  tool.running();
  const outcome = await env.callClientTool(name, args, env.signal);
  switch (outcome.status) {
    case "succeeded": {
      const content = outcome.content.map(toModelContent);
      tool.finish({ status: "succeeded", content, isError: false, summary: "succeeded" });
      return `Tool ${name} returned: ${short(describeContent(content))}`;
    }
    case "failed":
      tool.finish({ status: "failed", content: textContent(outcome.error), isError: true, error: outcome.error });
      return `Tool ${name} failed: ${short(outcome.error)}`;
    case "blocked": {
      const error = "the client did not acknowledge the call before its deadline";
      tool.finish({ status: "blocked", content: textContent(error), isError: true, error });
      return `Tool ${name} was blocked: ${error}`;
    }
    case "cancelled": {
      const error = `the call was cancelled (${outcome.reason})`;
      tool.finish({ status: "cancelled", content: textContent(error), isError: true, error });
      if (outcome.reason === "aborted" || env.signal.aborted) throw new AbortedError();
      return `Tool ${name} was cancelled: ${outcome.reason}`;
    }
  }
}

function toModelContent(block: ContentBlock): TextContent | ImageContent {
  if (block.type === "text") return block.textSignature === undefined ? { type: "text", text: block.text } : { type: "text", text: block.text, textSignature: block.textSignature };
  return { type: "image", data: block.data, mimeType: block.mimeType };
}

function describeContent(content: Array<TextContent | ImageContent>): string {
  const parts = content.map((block) => (block.type === "text" ? block.text : `[${block.mimeType} image]`));
  return parts.length ? parts.join(" ") : "(no content)";
}
