import type { ServerNotifications, UserInput } from "../../generated/codex-v2.js";
import type { SubagentRoster } from "./subagent-roster.js";
import type { ToolCatalog } from "./tool-items.js";

/**
 * What a thread gives its turn translator (turn-translator.ts): the thread's facts the items need
 * (working directory, tool catalog, user input, context window, gating) and where its
 * notifications go. Kept apart so the translator's file holds only the translation.
 */
export interface TranslatorHost {
  readonly threadId: string;
  /** The thread's working directory (for command items). */
  cwd(): string;
  catalog(): ToolCatalog;
  /** The user's input of a turn, read from the session (the turn id is its user message's id). */
  userInput(turnId: string): UserInput[];
  /** The model's context window, when known. */
  contextWindow(): number | undefined;
  /** Whether a call of tool `toolName` may ask for approval, under the session's gating as known now. */
  mayAsk(toolName: string): boolean;
  emit<M extends keyof ServerNotifications>(method: M, params: ServerNotifications[M]): void;
  /** A turn ended (after its turn/completed): its server requests still open are settled. */
  turnEnded(turnId: string): void;
  /** The thread's sub-agents: who an agent-tool item deals with, and the activity items after it. */
  subagents?: Pick<SubagentRoster, "agentsOf" | "itemsAfter">;
}
