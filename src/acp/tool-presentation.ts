import { isAbsolute, join } from "node:path";
import type { ToolCallLocation, ToolKind } from "../../generated/acp-v1.js";
import { ASK_USER_TOOL, SUBMIT_PLAN_TOOL } from "../bridge/interactions/index.js";

/**
 * How a Tau tool call shows in an editor: the ACP tool kind closest to what the tool does, a title
 * a person can read at a glance, and the files it touches (which drive "follow the agent").
 */

/** Tau's host tools and the gateway's own, by the kind of thing they do; command tools run programs. */
const KINDS: Record<string, ToolKind> = {
  bash: "execute",
  write: "edit",
  edit: "edit",
  view_image: "read",
  web: "fetch",
  tau_docs: "fetch",
  spawn_agent: "other",
  send_input_to_agent: "other",
  wait_for_agents: "other",
  list_agents: "other",
  interrupt_agent: "other",
  nook: "other",
  [ASK_USER_TOOL]: "other",
  [SUBMIT_PLAN_TOOL]: "think",
};

export interface ToolPresentation {
  kind: ToolKind;
  title: string;
  locations?: ToolCallLocation[];
}

/** `commandTools`: names of the operator's command tools, which run programs. */
export function presentTool(name: string, args: Record<string, unknown> | undefined, cwd: string | undefined, commandTools: ReadonlySet<string>): ToolPresentation {
  const kind = KINDS[name] ?? (commandTools.has(name) ? "execute" : "other");
  const text = (key: string) => (typeof args?.[key] === "string" ? (args[key] as string) : undefined);
  const path = text("path") ?? text("file_path") ?? text("filePath");
  const absolute = path === undefined ? undefined : isAbsolute(path) || cwd === undefined ? path : join(cwd, path);
  const locations = absolute && isAbsolute(absolute) ? [{ path: absolute }] : undefined;
  switch (name) {
    case "bash":
      return { kind, title: firstLine(text("command")) ?? "Run a command" };
    case "write":
      return { kind, title: path ? `Write ${path}` : "Write a file", ...(locations ? { locations } : {}) };
    case "edit":
      return { kind, title: path ? `Edit ${path}` : "Edit a file", ...(locations ? { locations } : {}) };
    case "view_image":
      return { kind, title: path ? `View ${path}` : "View an image", ...(locations ? { locations } : {}) };
    case "web":
      return { kind, title: text("url") ?? text("query") ?? "Web request" };
    case ASK_USER_TOOL:
      return { kind, title: text("question") ?? "Ask the user" };
    case SUBMIT_PLAN_TOOL:
      return { kind, title: "Plan for approval" };
    default:
      return { kind, title: commandTools.has(name) ? `Run ${name}` : name };
  }
}

/** The first line of a text, shortened to something a tool card can show. */
function firstLine(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const line = text.split("\n", 1)[0]!.trim();
  return line.length > 120 ? `${line.slice(0, 119)}…` : line || undefined;
}
