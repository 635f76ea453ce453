import type { FastifyRequest } from "fastify";
import type { InspectorEvent, InspectorHub, InspectorSnapshot } from "./inspector-hub.js";

/**
 * Who is looking at the inspector, and so what it shows them. Without tokens (loopback only, see
 * access-guard.ts) and with an operator's token (`"operator": true`): everything, of every
 * tenant. With any other token: the connections of that token's tenant alone, their frames, and
 * the sessions of that tenant — read-only (answering for a session, as operators may, is no
 * tenant's to do from here).
 * A connection of no known tenant is an operator's to see.
 */

export interface InspectorViewer {
  operator: boolean;
  /** The viewer's tenant (none without tokens). */
  tenant?: string;
}

/** The viewer of a request the inspector's access checks let in. */
export function viewerOf(request: FastifyRequest, authenticated: boolean): InspectorViewer {
  if (!authenticated) return { operator: true };
  return { operator: request.principal?.operator === true, tenant: request.principal?.tenant };
}

/** Whether the viewer may see what belongs to `tenant`. */
export function sees(viewer: InspectorViewer, tenant: string | undefined): boolean {
  return viewer.operator || (tenant !== undefined && tenant === viewer.tenant);
}

/** The tenant of a session, when the inspector knows the session (its session routes are on). */
export type SessionTenant = (sessionId: string) => string | undefined;

/**
 * Whether the viewer may see a feed event: a connection's, a frame of a connection it sees, an
 * operator's answer in a session of its tenant. Kinds it does not know of: operators only.
 */
export function seesEvent(viewer: InspectorViewer, hub: InspectorHub, event: InspectorEvent, sessionTenant?: SessionTenant): boolean {
  if (viewer.operator) return true;
  switch (event.type) {
    case "connection":
      return sees(viewer, event.connection.tenant);
    case "frame":
      return sees(viewer, hub.trace(event.frame.connection)?.tenant);
    case "decision":
      return sees(viewer, sessionTenant?.(event.decision.sessionId));
    default:
      return false;
  }
}

/** The hub's snapshot as the viewer may see it (the newest frames of its own connections, the answers in its own sessions). */
export function snapshotFor(viewer: InspectorViewer, hub: InspectorHub, sessionTenant?: SessionTenant): InspectorSnapshot {
  if (viewer.operator) return hub.snapshot();
  const snapshot = hub.snapshot((tenant) => sees(viewer, tenant));
  return { ...snapshot, decisions: snapshot.decisions.filter((decision) => sees(viewer, sessionTenant?.(decision.sessionId))) };
}
