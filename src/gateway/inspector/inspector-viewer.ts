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
 * operator's answer or a receipt's step in a session of its tenant. Kinds it does not know of: operators only.
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
    case "receipt":
      return sees(viewer, sessionTenant?.(event.receipt.sessionId));
    default:
      return false;
  }
}

/**
 * The hub's snapshot as the viewer may see it (the newest frames of its own connections, the
 * answers in its own sessions), numbered in the viewer's tenant's own sequence for a tenant.
 */
export function snapshotFor(viewer: InspectorViewer, hub: InspectorHub, sessionTenant?: SessionTenant): InspectorSnapshot {
  if (viewer.operator) return hub.snapshot();
  const snapshot = hub.snapshot((tenant) => sees(viewer, tenant));
  return {
    seq: hub.tenantSeq(viewer.tenant!),
    connections: snapshot.connections,
    frames: snapshot.frames.map((frame) => ({ ...frame, seq: hub.scopeOf(frame)!.seq })),
    decisions: snapshot.decisions.filter((decision) => sees(viewer, sessionTenant?.(decision.sessionId))),
  };
}

/**
 * A feed event as the viewer is shown it: as it is to an operator; to a tenant, numbered in its
 * tenant's own sequence (the event's number and its frame's), so that no number counts the
 * traffic of another tenant. Only for events the viewer sees (seesEvent).
 */
export function eventFor(viewer: InspectorViewer, hub: InspectorHub, event: InspectorEvent): InspectorEvent {
  if (viewer.operator) return event;
  const seq = hub.scopeOf(event)?.seq ?? 0;
  return event.type === "frame" ? { ...event, seq, frame: { ...event.frame, seq } } : { ...event, seq };
}

/** The events a resuming viewer missed after its `lastEventId` (in its own numbering), or undefined when they are not all kept. */
export function missedBy(viewer: InspectorViewer, hub: InspectorHub, lastEventId: number): InspectorEvent[] | undefined {
  return viewer.operator ? hub.since(lastEventId) : hub.sinceForTenant(viewer.tenant!, lastEventId);
}
