import type { CompactionKind } from "../../../generated/ask-v1.0.js";
import type { MessageRecord, Operation, ToolRun } from "../../../generated/tau-v18.js";

/**
 * What the states of Tau's records mean to the delta translator (translator.ts): which tool runs
 * have ended, which operations are compactions, which assistant messages are shown. Tables over
 * each state, so a state Tau adds fails the typecheck until it is placed.
 */

/** Whether a tool run has ended (its result is due). */
const TOOL_ENDED = {
  queued: false,
  running: false,
  streaming: false,
  succeeded: true,
  failed: true,
  blocked: true,
  cancelled: true,
} as const satisfies Record<ToolRun["status"], boolean>;
export const isTerminal = (tool: ToolRun) => TOOL_ENDED[tool.status];

/** Operations reported as compactions, and their Ask kind; reload and rewind have their own signals. */
export const COMPACTION_KIND = {
  "auto-compaction": "auto",
  "manual-compaction": "manual",
  reload: null,
  rewind: null,
} as const satisfies Record<Operation["kind"], CompactionKind | null>;

/** Assistant message states whose text the user gets to see (a discarded draft is withdrawn). */
export const SHOWN_STATES = {
  draft: true,
  committed: true,
  interrupted: true,
  discarded: false,
} as const satisfies Record<MessageRecord["state"], boolean>;
