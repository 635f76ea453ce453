import type { SessionRecord } from "../bridge/session-registry.js";
import { TauResponseError } from "../tau/upstream.js";
import type { AcpMethodContext } from "./context.js";
import { sessionNotFound } from "./errors.js";
import type { SessionLink } from "./session-link.js";

/**
 * The session a client names, observed through the bridge core: an unknown session and another
 * tenant's get the same answer, word for word (-32002 with the session id), and so does a session
 * closed with Ask's session/close (gone for every client of this gateway).
 */
export async function accessSession({ services, client }: AcpMethodContext, sessionId: string): Promise<SessionRecord> {
  const { sessions } = services.core;
  if (sessions.isClosed(sessionId)) throw sessionNotFound(sessionId);
  let record: SessionRecord;
  try {
    record = await sessions.open(sessionId);
  } catch (err) {
    if (err instanceof TauResponseError && err.code === "not_found") throw sessionNotFound(sessionId);
    throw err;
  }
  // Closed while this call waited for the record.
  if (record.tenant !== client.peer.tenant || sessions.isClosed(sessionId)) throw sessionNotFound(sessionId);
  return record;
}

/**
 * The connection's link to a session it created, loaded or resumed; any other session is not found,
 * and so is one closed since by any client of this gateway (as Codex's thread/* find it gone) —
 * except to let go of the link (`closing`: the connection's own session/close).
 */
export function linkedSession({ services, client }: AcpMethodContext, sessionId: string, closing = false): SessionLink {
  const link = services.links.get(client, sessionId);
  if (!link || (!closing && services.core.sessions.isClosed(sessionId))) throw sessionNotFound(sessionId);
  return link;
}
