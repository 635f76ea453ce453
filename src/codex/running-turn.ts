import type { Turn } from "../../generated/codex-v2.js";

/**
 * A turn as Codex announces one that runs (turn/start's answer, turn/started): none of its items
 * loaded yet (`itemsView: "notLoaded"`), the first of its own chain of work (a Tau turn is never
 * started on behalf of another), and, once it has started, when it did, in seconds.
 */
export function runningTurn(id: string, startedAtMs?: number): Turn {
  return {
    id,
    rootTurnId: id,
    items: [],
    itemsView: "notLoaded",
    status: "inProgress",
    error: null,
    ...(startedAtMs === undefined ? {} : { startedAt: Math.floor(startedAtMs / 1000) }),
  };
}
