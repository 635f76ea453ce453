import type { Snapshot } from "../../generated/tau-v18.js";
import { lastActivityMs } from "../bridge/session-activity.js";
import { sessionTenant } from "../bridge/session-attributes.js";

/** What tau-sessions and resources/list show of a session. */
export interface ListedSession {
  tenant: string | undefined;
  cwd: string;
  /** When the session last changed: its newest message, or its creation (epoch ms). */
  at: number;
}

export function listedSessionOf(snapshot: Snapshot): ListedSession {
  return { tenant: sessionTenant(snapshot), cwd: snapshot.executionEnvironment.cwd, at: lastActivityMs(snapshot) };
}
