import type { Snapshot } from "../../generated/tau-v18.js";
import type { BridgeCore } from "../bridge/bridge-core.js";

/**
 * Tau has no session-free way to read the host's catalog (its personas): every snapshot carries
 * it. This reads it from a session the gateway holds, else from the first the host lists; before
 * any session exists there is none.
 */
export async function hostCatalogSnapshot(core: BridgeCore): Promise<Snapshot | undefined> {
  const held = core.sessions.all().find((r) => r.hub.snapshot)?.hub.snapshot;
  if (held) return held;
  const { sessions } = await core.hosts.request("session.list", {});
  return sessions.length > 0 ? core.knownSnapshot(sessions[0]!.sessionId) : undefined;
}
