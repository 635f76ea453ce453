import type { SessionSource, ThreadSourceKind } from "../../generated/codex-v2.js";

/**
 * Where a thread came from, as thread/list's filters see it: the kind `sourceKinds` names, and the
 * thread that spawned it. Both are read from the thread's `source` alone, so a thread whose source
 * is a sub-agent's (`{subAgent: {thread_spawn: {parent_thread_id, depth, …}}}`, `{subAgent:
 * "review"}`, …) is classified as Codex classifies it, with nothing else to change here.
 */

/**
 * The source of every thread the gateway serves but a sub-agent's: `vscode`, as the real app-server
 * (0.169.0, 0.171.0) labels the threads its clients start. Codex's `appServer` kind is its MCP
 * server's threads, which the Codex terminal UI's resume picker and `codex resume --last` leave
 * out (they ask for `sourceKinds: ["cli", "vscode"]`).
 */
export const GATEWAY_THREAD_SOURCE = "vscode" satisfies SessionSource;

/** The kinds listed when `sourceKinds` is absent or empty: Codex's interactive sources, cli and vscode. */
export const DEFAULT_SOURCE_KINDS: ReadonlySet<ThreadSourceKind> = new Set(["cli", "vscode"]);

/** The kind of one source: a plain source is its own kind; a custom one is unknown; a sub-agent's by what spawned it. */
export function sourceKindOf(source: SessionSource): ThreadSourceKind {
  if (typeof source === "string") return source;
  if ("custom" in source) return "unknown";
  const agent = source.subAgent;
  if (agent === "review") return "subAgentReview";
  if (agent === "compact") return "subAgentCompact";
  if (typeof agent === "object" && "thread_spawn" in agent) return "subAgentThreadSpawn";
  return "subAgentOther";
}

/** Whether `source` is one of `kinds` (absent or empty: DEFAULT_SOURCE_KINDS); `subAgent` names every sub-agent kind. */
export function sourceMatches(source: SessionSource, kinds: readonly ThreadSourceKind[] | null | undefined): boolean {
  const kind = sourceKindOf(source);
  if (!kinds || kinds.length === 0) return DEFAULT_SOURCE_KINDS.has(kind);
  return kinds.includes(kind) || (kinds.includes("subAgent") && kind.startsWith("subAgent"));
}

/** The thread that spawned this one (a thread_spawn sub-agent's parent_thread_id); undefined for any other source. */
export function parentThreadOf(source: SessionSource): string | undefined {
  if (typeof source === "string" || !("subAgent" in source)) return undefined;
  const agent = source.subAgent;
  return typeof agent === "object" && "thread_spawn" in agent ? agent.thread_spawn.parent_thread_id : undefined;
}
