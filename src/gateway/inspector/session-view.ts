import type { Event, InteractionRecord } from "../../../generated/ask-v1.0.js";
import { EventRetentionError } from "../../bridge/event-log.js";
import type { DeltaSource } from "../../bridge/delta-sources.js";
import type { PendingPlan } from "../../bridge/interactions/shared-answers.js";
import type { SessionRecord } from "../../bridge/session-registry.js";
import { subagentsOf, type SubagentView } from "./subagent-view.js";

/**
 * The sessions the bridge core serves, as the inspector shows them: each session's event log (the
 * one every dialect's subscribers translate, so an event's seq is the key its frames carry, see
 * shared/event-cause.ts), its pending approvals, questions and plans, and its sub-agents.
 */

/** Where the inspector finds the sessions (the bridge core's hosted sessions). */
export interface InspectedSessions {
  get(sessionId: string): SessionRecord | undefined;
  all(): SessionRecord[];
}

export interface SessionSummary {
  sessionId: string;
  tenant?: string;
  running: boolean;
  /** Seq of the newest event (0: none yet). */
  newestSeq: number;
}

/** An event as the timeline shows it: a large payload comes as the start of its JSON. */
export interface TimelineEvent {
  seq: number;
  type: string;
  payload?: unknown;
  /** The payload's JSON, cut at MAX_PAYLOAD_CHARS, when it is longer. */
  preview?: string;
  /** The Tau deltas (toRevision) it was translated from: a /tau client observing the session got these. */
  tau?: DeltaSource;
}

export interface SessionView extends SessionSummary {
  /** Events after the `after` asked for (at most MAX_EVENTS, the newest), oldest first. */
  events: TimelineEvent[];
  /** Seq of the oldest event the log still holds. */
  oldestSeq: number;
  /** Approvals and questions waiting for an answer, oldest first. */
  pending: InteractionRecord[];
  /** Plans waiting for approval, oldest first. */
  plans: PendingPlan[];
  /** The session's sub-agents (subagent-view.ts). */
  subagents: SubagentView[];
}

export const MAX_EVENTS = 500;
const MAX_PAYLOAD_CHARS = 4000;

export function summary(record: SessionRecord): SessionSummary {
  return { sessionId: record.sessionId, tenant: record.tenant, running: record.hub.running, newestSeq: record.hub.log.newestSeq };
}

export async function sessionView(record: SessionRecord, after = 0): Promise<SessionView> {
  // The sub-agents are read from the live snapshot, which a replica serving the log alone observes from now on.
  await record.hub.follow();
  const log = record.hub.log;
  const from = Math.max(after, log.newestSeq - MAX_EVENTS, log.oldestSeq - 1, 0);
  let events: Event[];
  try {
    events = log.read(from, MAX_EVENTS).events;
  } catch (error) {
    if (!(error instanceof EventRetentionError)) throw error;
    events = log.read(error.oldestSeq - 1, MAX_EVENTS).events;
  }
  return {
    ...summary(record),
    oldestSeq: log.oldestSeq,
    events: events.map((event) => withSource(timelineEvent(event), record.hub.deltaSource(event.seq))),
    pending: await record.interactions.shared.list(),
    plans: await record.interactions.shared.plans(),
    subagents: subagentsOf(record.hub.snapshot, record.hub.subagentActivities),
  };
}

function timelineEvent(event: Event): TimelineEvent {
  const json = JSON.stringify(event.payload ?? null);
  if (json.length <= MAX_PAYLOAD_CHARS) return { seq: event.seq, type: event.type, payload: event.payload };
  return { seq: event.seq, type: event.type, preview: `${json.slice(0, MAX_PAYLOAD_CHARS)}…` };
}

const withSource = (event: TimelineEvent, tau: DeltaSource | undefined): TimelineEvent => (tau ? { ...event, tau } : event);
