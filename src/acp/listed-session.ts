import type { Snapshot } from "../../generated/tau-v18.js";
import { sessionTenant } from "../bridge/session-attributes.js";

/** What ACP's session/list shows of a session. */
export interface ListedSession {
  tenant: string | undefined;
  cwd: string;
  /** When the session last changed: its newest message, or its creation (epoch ms). */
  at: number;
}

export function listedSessionOf(snapshot: Snapshot): ListedSession {
  let at = snapshot.createdAt;
  for (const { message } of snapshot.messages) if (message.timestamp > at) at = message.timestamp;
  return { tenant: sessionTenant(snapshot), cwd: snapshot.executionEnvironment.cwd, at };
}
