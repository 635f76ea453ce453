import { isObject } from "../shared/unknown-values.js";

/**
 * What a relay resumes on a new link to the gateway besides the client's handshake: the streams
 * the client had opened, continued from where the relay left off. It watches the client's requests
 * as they are answered and the notifications it forwards, and says which requests to repeat.
 */
export interface StreamResume {
  /** A client request was answered with a result. */
  answered(method: string, params: unknown, result: unknown): void;
  /** The gateway sent this notification and the relay forwarded it to the client. */
  forwarded(method: string, params: unknown): void;
  /** The requests that reopen the streams on a new link, sent (and their answers kept from the client) after the handshake. */
  replays(): Array<{ method: string; params: Record<string, unknown> }>;
}

/**
 * Ask's event streams: each `session/subscribe` the client made is repeated with `afterSeq` set to
 * the last seq the relay forwarded for that session, so the gateway replays exactly what the client
 * has not seen and the stream goes on without a gap or a repeat (the gateway keeps the cursor
 * semantics: events after `afterSeq`, then live). A subscription that saw no event yet is repeated
 * as the client made it. The snapshot a subscription asked for arrives as `session/event`
 * notifications on the new link, as any replay does.
 */
export class AskSubscriptionResume implements StreamResume {
  /** The params of each session/subscribe the client made (the latest per session). */
  private readonly subscriptions = new Map<string, Record<string, unknown>>();
  /** The newest seq the client was given per session (forwarded, or in a subscribe snapshot). */
  private readonly lastSeq = new Map<string, number>();

  answered(method: string, params: unknown, result: unknown): void {
    if (method !== "session/subscribe" || !isObject(params) || typeof params.sessionId !== "string") return;
    this.subscriptions.set(params.sessionId, params);
    const snapshot = isObject(result) && Array.isArray(result.snapshot) ? result.snapshot : [];
    for (const event of snapshot) if (isObject(event) && typeof event.seq === "number") this.lastSeq.set(params.sessionId, event.seq);
  }

  forwarded(method: string, params: unknown): void {
    if (method !== "session/event" || !isObject(params) || typeof params.sessionId !== "string" || !isObject(params.event)) return;
    if (typeof params.event.seq === "number") this.lastSeq.set(params.sessionId, params.event.seq);
    // A closed session's stream is over: nothing to resume (the gateway would refuse it, -32004).
    if (params.event.type === "session.ended") this.subscriptions.delete(params.sessionId);
  }

  replays(): Array<{ method: string; params: Record<string, unknown> }> {
    return [...this.subscriptions].map(([sessionId, params]) => {
      const afterSeq = this.lastSeq.get(sessionId);
      if (afterSeq === undefined) return { method: "session/subscribe", params };
      // Replayed from the cursor whatever kind the client chose (a live subscription would skip
      // what happened while the link was down), pushed as events rather than returned in a result
      // the client never sees.
      const { includeSnapshot: _inResult, ...rest } = params;
      const deliveryKind = params.deliveryKind === undefined || params.deliveryKind === "live" ? "replay" : params.deliveryKind;
      return { method: "session/subscribe", params: { ...rest, deliveryKind, afterSeq } };
    });
  }
}
