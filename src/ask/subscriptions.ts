import type { DeliveryKind, Event } from "../../generated/ask-v1.0.js";
import type { EventLog } from "../bridge/event-log.js";
import type { AskPeer } from "./peer.js";

interface Cursor {
  seq: number;
  deliveryKind: DeliveryKind;
}

/**
 * Connections hold cursors into session logs (the host owns the logs). Delivery is driven by the
 * log: every appended event goes to each subscribed connection whose cursor is behind it, and the
 * cursor moves past it, so an event is delivered once per subscription, in seq order, never skipped.
 */
export class Subscriptions {
  private readonly cursors = new Map<string, Map<AskPeer, Cursor>>();
  private readonly detachers = new Map<string, () => void>();
  /** Events handed to connections so far (for metrics). */
  delivered = 0;

  /**
   * Starts delivering a session's events to `peer` after `afterSeq`; `backlog` (the retained events
   * after it, already read by the caller) is sent now. Subscribing again replaces the cursor.
   */
  subscribe(peer: AskPeer, sessionId: string, log: EventLog, afterSeq: number, deliveryKind: DeliveryKind, backlog: readonly Event[]): void {
    if (!this.detachers.has(sessionId)) {
      const stopEvents = log.subscribe((event) => this.deliver(sessionId, event));
      // A shared log that began again (new epoch) numbers from 1: every cursor follows it, from its first event (session.reset).
      const stopRestarts = log.onRestart(() => {
        for (const cursor of this.cursors.get(sessionId)?.values() ?? []) cursor.seq = 0;
      });
      this.detachers.set(sessionId, () => {
        stopEvents();
        stopRestarts();
      });
    }
    let peers = this.cursors.get(sessionId);
    if (!peers) this.cursors.set(sessionId, (peers = new Map()));
    const cursor: Cursor = { seq: afterSeq, deliveryKind };
    peers.set(peer, cursor);
    for (const event of backlog) this.send(peer, sessionId, cursor, event);
  }

  isSubscribed(peer: AskPeer, sessionId: string): boolean {
    return this.cursors.get(sessionId)?.has(peer) ?? false;
  }

  /** Connections subscribed to a session, in subscription order. */
  subscribers(sessionId: string): AskPeer[] {
    return [...(this.cursors.get(sessionId)?.keys() ?? [])].filter((p) => !p.closed);
  }

  dropPeer(peer: AskPeer): void {
    for (const peers of this.cursors.values()) peers.delete(peer);
  }

  dropSession(sessionId: string): void {
    this.detachers.get(sessionId)?.();
    this.detachers.delete(sessionId);
    this.cursors.delete(sessionId);
  }

  private deliver(sessionId: string, event: Event): void {
    for (const [peer, cursor] of this.cursors.get(sessionId) ?? []) this.send(peer, sessionId, cursor, event);
    // A session's last event (closed here or through another replica): its subscriptions end with it.
    if (event.type === "session.ended") this.dropSession(sessionId);
  }

  private send(peer: AskPeer, sessionId: string, cursor: Cursor, event: Event): void {
    if (event.seq <= cursor.seq || peer.closed) return;
    cursor.seq = event.seq;
    this.delivered++;
    peer.notify("session/event", { event, sessionId });
  }
}
