import type { ThreadItem } from "../../generated/codex-v2.js";
import type { CollabAgentTool } from "../../generated/codex-v2.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL, type CommandToolConfig } from "../bridge/interactions/index.js";
import { collabToolOf, completedCollabItem, startedCollabItem, type KnownAgent } from "./subagent-items.js";

/**
 * What a Tau tool call looks like to a Codex client: Tau's `bash` and the gateway's command tools
 * are commands (`commandExecution`), a tool the client registered itself is a `dynamicToolCall`,
 * `submit_plan` is a `plan`, every other tool is an `mcpToolCall` of server `tau` (the item type
 * the clients draw for arbitrary tools), Tau's agent tools (spawn_agent, wait_for_agents, …) are
 * `collabAgentToolCall` items (subagent-items.ts). `ask_user` has no item: Codex asks with
 * item/tool/requestUserInput alone.
 */

export type ToolKind =
  | { kind: "command"; command: string }
  | { kind: "dynamic" }
  | { kind: "plan"; text: string }
  | { kind: "mcp" }
  | { kind: "collab"; tool: CollabAgentTool }
  | { kind: "question" };

export interface ToolCatalog {
  /** The gateway's command tools, by name. */
  readonly commandTools: ReadonlyMap<string, CommandToolConfig>;
  /** Tools the thread's client registered (thread/start dynamicTools). */
  readonly dynamicTools: ReadonlySet<string>;
  /** The thread the tools run in: agent tools name it as their sender. */
  readonly threadId?: string;
}

/** Tau's shell tool. */
export const BASH_TOOL = "bash";
/** The server name of Tau's own tools as mcpToolCall items. */
export const TAU_TOOL_SERVER = "tau";

export function toolKind(name: string, args: Record<string, unknown> | undefined, catalog: ToolCatalog): ToolKind {
  if (name === ASK_USER_TOOL) return { kind: "question" };
  if (name === SUBMIT_PLAN_TOOL) return { kind: "plan", text: typeof args?.plan === "string" ? args.plan : "" };
  if (catalog.dynamicTools.has(name)) return { kind: "dynamic" };
  const collab = collabToolOf(name);
  if (collab) return { kind: "collab", tool: collab };
  if (name === BASH_TOOL) return { kind: "command", command: typeof args?.command === "string" ? args.command : JSON.stringify(args ?? {}) };
  const tool = catalog.commandTools.get(name);
  if (tool) return { kind: "command", command: commandLine(tool, args) };
  return { kind: "mcp" };
}

/**
 * A command tool as the shell line it amounts to: the configured program and arguments, with the
 * model's arguments as JSON on stdin (which is how the gateway runs it, without a shell).
 */
export function commandLine(tool: CommandToolConfig, args: unknown): string {
  return `${[tool.command, ...(tool.args ?? [])].map(shellQuote).join(" ")} <<< ${shellQuote(JSON.stringify(args ?? {}))}`;
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export interface ToolOutcome {
  output: string;
  isError: boolean;
  durationMs: number | null;
  /** The client declined the command (it never ran). */
  declined?: boolean;
  /** For an agent tool: the sub-agents it dealt with, as they stand now. */
  agents?: readonly KnownAgent[];
}

/** The item when the tool starts (status inProgress), or undefined for a kind without items. */
export function startedToolItem(id: string, name: string, args: Record<string, unknown> | undefined, kind: ToolKind, cwd: string, threadId = ""): ThreadItem | undefined {
  switch (kind.kind) {
    case "collab":
      return startedCollabItem(id, kind.tool, threadId, args);
    case "question":
      return undefined;
    case "plan":
      return { type: "plan", id, text: kind.text };
    case "command":
      return { type: "commandExecution", id, command: kind.command, cwd, commandActions: [{ type: "unknown", command: kind.command }], status: "inProgress" };
    case "dynamic":
      return { type: "dynamicToolCall", id, tool: name, arguments: args ?? {}, status: "inProgress", contentItems: null, success: null };
    case "mcp":
      return { type: "mcpToolCall", id, server: TAU_TOOL_SERVER, tool: name, arguments: args ?? {}, status: "inProgress" };
  }
}

/** The final item from the started one and how the tool ended. */
export function completedToolItem(started: ThreadItem, outcome: ToolOutcome, contentItems?: ThreadItemContent): ThreadItem {
  const { output, isError, durationMs } = outcome;
  switch (started.type) {
    case "commandExecution":
      return {
        ...started,
        status: outcome.declined ? "declined" : isError ? "failed" : "completed",
        aggregatedOutput: output,
        exitCode: outcome.declined ? null : exitCode(output, isError),
        durationMs,
      };
    case "dynamicToolCall":
      return { ...started, status: isError ? "failed" : "completed", contentItems: contentItems ?? [{ type: "inputText", text: output }], success: !isError, durationMs };
    case "mcpToolCall":
      return {
        ...started,
        status: isError ? "failed" : "completed",
        result: isError ? null : { content: [{ type: "text", text: output }] },
        error: isError ? { message: output } : null,
        durationMs,
      };
    case "collabAgentToolCall":
      return completedCollabItem(started, isError, outcome.agents ?? []);
    default:
      return started;
  }
}

export type ThreadItemContent = Extract<ThreadItem, { type: "dynamicToolCall" }>["contentItems"];

/** 0 for a command that succeeded; for a failed one, the code Tau's or the gateway's report names, when it names one. */
function exitCode(output: string, isError: boolean): number | null {
  if (!isError) return 0;
  const named = /(?:exit code|exited with) (\d+)/.exec(output);
  return named ? Number(named[1]) : null;
}
