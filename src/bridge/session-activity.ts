import type { Snapshot } from "../../generated/tau-v18.js";

/** When a session last changed: its newest message's time, or its creation (epoch ms). What every dialect's list sorts by. */
export function lastActivityMs(snapshot: Snapshot): number {
  let latest = snapshot.createdAt;
  for (const { message } of snapshot.messages) if ("timestamp" in message && message.timestamp > latest) latest = message.timestamp;
  return latest;
}
