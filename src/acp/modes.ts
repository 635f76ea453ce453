import type { SessionModeState, SessionUpdate } from "../../generated/acp-v1.js";
import type { ApprovalModeName } from "../bridge/interactions/index.js";

/**
 * A session's modes are the gateway's approval modes for its command tools (Tau's own tools are
 * never gated): ask before running each call, run them without asking, or hold them until a plan
 * is approved. Mode ids are the approval mode names.
 */
const MODES = [
  { id: "on_request", name: "Ask before running", description: "Command tools run once you allow each call." },
  { id: "auto", name: "Auto", description: "Command tools run without asking." },
  { id: "plan", name: "Plan", description: "Command tools wait until you approve a plan, then ask as usual." },
] as const satisfies ReadonlyArray<{ id: ApprovalModeName; name: string; description: string }>;

export type AcpModeId = (typeof MODES)[number]["id"];

export const ACP_MODE_IDS: readonly string[] = MODES.map((m) => m.id);

/** The mode an editor shows for an approval mode (`never`, from the Ask surface, runs without asking like `auto`). */
export function modeIdOf(mode: ApprovalModeName): AcpModeId {
  return mode === "never" ? "auto" : mode;
}

export function isModeId(id: string): id is AcpModeId {
  return ACP_MODE_IDS.includes(id);
}

export function modeState(mode: ApprovalModeName): SessionModeState {
  return { currentModeId: modeIdOf(mode), availableModes: MODES.map((m) => ({ ...m })) };
}

/** The update telling an editor the session's mode changed. */
export function modeUpdate(mode: ApprovalModeName): SessionUpdate {
  return { sessionUpdate: "current_mode_update", currentModeId: modeIdOf(mode) };
}
