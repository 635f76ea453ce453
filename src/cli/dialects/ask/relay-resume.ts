import { randomUUID } from "node:crypto";
import { REQUEST_KEY } from "../../../bridge/request-recall.js";
import { isRequestId } from "../../../relay/requests.js";
import type { StreamResume } from "../../../relay/stream-resume.js";
import { isObject } from "../../../shared/unknown-values.js";

type Message = Record<string, unknown>;

/**
 * Ask's event streams: each `session/subscribe` the client made is repeated with `afterSeq` set to
 * the last seq the relay forwarded for that session, so the gateway replays exactly what the client
 * has not seen and the stream goes on without a gap or a repeat (the gateway keeps the cursor
 * semantics: events after `afterSeq`, then live). A subscription that saw no event yet is repeated
 * as the client made it. The snapshot a subscription asked for arrives as `session/event`
 * notifications on the new link, as any replay does.
 *
 * A cursor only means something in the log it came from. Before repeating one, the relay reads the
 * event at it from the new link's gateway: when that is not the event it forwarded there, the log
 * began again (a gateway on the memory store restarted, and numbers each session's log from 1
 * again). Resuming at the old cursor would silently skip the new log's first events, and replaying
 * it as it is would issue seqs the client already had. So the client is told as a shared log that
 * lost its history tells it: `session.reset {cause:"resync"}` numbered after the last seq it had,
 * then the whole new log, its seqs shifted to follow (and the client's own `afterSeq`s, and the
 * events of its session/events and snapshot answers, translated between the two numberings).
 */
export class AskSubscriptionResume implements StreamResume {
  /** The params of each session/subscribe the client made (the latest per session). */
  private readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** The newest seq (the gateway's numbering) the client was given per session (forwarded, or in a subscribe snapshot). */
  private readonly lastSeq = new Map<string, number>();
  /** That event as the gateway sent it, seq left out: what the event at the cursor must be on a new link. */
  private readonly lastEvent = new Map<string, string>();
  /** Per session whose log began again: what is added to the gateway's seqs for the client. */
  private readonly shift = new Map<string, number>();

  answered(method: string, params: unknown, result: unknown): void {
    if (method !== "session/subscribe" || !isObject(params) || typeof params.sessionId !== "string") return;
    this.subscriptions.set(params.sessionId, params);
    const snapshot = isObject(result) && Array.isArray(result.snapshot) ? result.snapshot : [];
    for (const event of snapshot) this.given(params.sessionId, event);
  }

  forwarded(method: string, params: unknown): void {
    if (method !== "session/event" || !isObject(params) || typeof params.sessionId !== "string" || !isObject(params.event)) return;
    this.given(params.sessionId, params.event);
    // A closed session's stream is over: nothing to resume (the gateway would refuse it, -32004).
    if (params.event.type === "session.ended") this.subscriptions.delete(params.sessionId);
  }

  async prepare(request: (method: string, params: Record<string, unknown>) => Promise<Message>, tell: (message: Message) => void): Promise<Message[]> {
    const answers: Message[] = [];
    for (const sessionId of this.subscriptions.keys()) {
      const seq = this.lastSeq.get(sessionId);
      const seen = this.lastEvent.get(sessionId);
      if (seq === undefined || seq === 0 || seen === undefined) continue;
      const answer = await request("session/events", { sessionId, afterSeq: seq - 1, limit: 1 });
      answers.push(answer);
      // Refused (the session is gone, or a shared log lost the history): the subscribe meets the gateway's own rules.
      if (!isObject(answer.result) || !Array.isArray(answer.result.events)) continue;
      const atCursor = answer.result.events[0];
      if (isObject(atCursor) && atCursor.seq === seq && withoutSeq(atCursor) === seen) continue;
      const resetSeq = seq + (this.shift.get(sessionId) ?? 0) + 1;
      tell({ method: "session/event", params: { sessionId, event: { type: "session.reset", seq: resetSeq, payload: { cause: "resync" } } } });
      this.shift.set(sessionId, resetSeq);
      this.lastSeq.set(sessionId, 0);
      this.lastEvent.delete(sessionId);
    }
    return answers;
  }

  replays(): Array<{ method: string; params: Record<string, unknown> }> {
    return [...this.subscriptions].map(([sessionId, params]) => {
      const afterSeq = this.lastSeq.get(sessionId);
      if (afterSeq === undefined) return { method: "session/subscribe", params: this.toGatewayParams(params) };
      // Replayed from the cursor whatever kind the client chose (a live subscription would skip
      // what happened while the link was down), pushed as events rather than returned in a result
      // the client never sees.
      const { includeSnapshot: _inResult, ...rest } = params;
      const deliveryKind = params.deliveryKind === undefined || params.deliveryKind === "live" ? "replay" : params.deliveryKind;
      return { method: "session/subscribe", params: { ...rest, deliveryKind, afterSeq } };
    });
  }

  refused(params: Record<string, unknown>): void {
    if (typeof params.sessionId === "string") this.subscriptions.delete(params.sessionId);
  }

  toGateway(message: Message): Message | undefined {
    // A session/send may be sent again on a new link: with a key, so that the repeat does not deliver it twice.
    if (message.method === "session/send" && isRequestId(message.id) && isObject(message.params)) {
      return { ...message, params: { ...message.params, [REQUEST_KEY]: randomUUID() } };
    }
    if ((message.method !== "session/subscribe" && message.method !== "session/events") || !isObject(message.params)) return undefined;
    const params = this.toGatewayParams(message.params);
    return params === message.params ? undefined : { ...message, params };
  }

  toClient(message: Message, answering?: string): Message | undefined {
    if (message.method === "session/event" && isObject(message.params) && isObject(message.params.event)) {
      const by = this.shiftOf(message.params.sessionId);
      return by ? { ...message, params: { ...message.params, event: shifted(message.params.event, by) } } : undefined;
    }
    if ((answering !== "session/events" && answering !== "session/subscribe") || !isObject(message.result)) return undefined;
    const result = message.result;
    const sessionId = result.sessionId ?? (isObject(result.subscription) ? result.subscription.sessionId : undefined);
    const by = this.shiftOf(sessionId);
    const key = answering === "session/events" ? "events" : "snapshot";
    const events = result[key];
    if (!by || !Array.isArray(events)) return undefined;
    return { ...message, result: { ...result, [key]: events.map((event) => (isObject(event) ? shifted(event, by) : event)) } };
  }

  /** The client's afterSeq in the gateway's numbering (events from before the log began again are gone: from its start). */
  private toGatewayParams(params: Record<string, unknown>): Record<string, unknown> {
    const by = this.shiftOf(params.sessionId);
    if (!by || typeof params.afterSeq !== "number" || params.afterSeq <= 0) return params;
    return { ...params, afterSeq: Math.max(0, params.afterSeq - by) };
  }

  private shiftOf(sessionId: unknown): number | undefined {
    return typeof sessionId === "string" ? this.shift.get(sessionId) : undefined;
  }

  private given(sessionId: string, event: unknown): void {
    if (!isObject(event) || typeof event.seq !== "number") return;
    this.lastSeq.set(sessionId, event.seq);
    this.lastEvent.set(sessionId, withoutSeq(event));
  }
}

/** An event's identity apart from its number. */
const withoutSeq = ({ seq: _seq, ...rest }: Record<string, unknown>): string => JSON.stringify(rest);

const shifted = (event: Record<string, unknown>, by: number) => (typeof event.seq === "number" ? { ...event, seq: event.seq + by } : event);
