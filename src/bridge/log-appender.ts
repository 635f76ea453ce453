import { randomUUID } from "node:crypto";
import type { Log } from "../shared/log.js";
import type { EventToAppend, LiveBatch, SessionLogStore } from "../store/index.js";
import type { EventDraft } from "./event-draft.js";
import { isMergeable, joinsRun, runDraft, type ChunkRun } from "./stream-merging.js";

const MAX_ATTEMPTS = 5;

export interface LogAppenderOptions {
  store: SessionLogStore;
  hostKey: string;
  /** The epoch this replica last saw (the store begins a new one with a reset if the log is gone). */
  knownEpoch: () => string | undefined;
  /** Appended events, to the local copy at once. */
  appended: (batch: LiveBatch) => void;
  log: Log;
}

/**
 * Appends a session hub's events to the shared log in the order they were produced: what queues
 * up while a batch is on its way goes as the next batch. A batch that fails in transit is sent
 * again under the same key, which the store recognises, so a retry after a timeout adds nothing.
 *
 * Each event carries the fence it was produced under: the lease holder's events are refused once
 * another replica holds the host, even if they were queued before; events of a replica that does
 * not own the host (gateway notices, errors, session.ended) go unfenced — the store still gives
 * them their seqs in the one sequence. A batch never mixes fences.
 *
 * An event pushed with a key of its own (an interaction's resolution, which a new owner may carry
 * out again after the old one died) goes alone, as a batch with that key, so that whichever
 * replica appends it second adds nothing.
 *
 * Every append is a round trip to the store and, on every replica, an event per subscriber, so
 * the first batch leaves at the end of the loop turn it was pushed in (not at once, with only the
 * first event of the turn), and streamed chunks that queue up behind a batch in flight join into
 * one event by the rule of stream-merging.ts: a replica whose store is slower sends fewer,
 * larger batches of fewer events, instead of falling behind one event at a time.
 */
export class LogAppender {
  private queue: QueuedEvent[] = [];
  private sending = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(private readonly options: LogAppenderOptions) {}

  /** Queues an event with the fence it was produced under (undefined: unfenced), and its own append key if it has one. */
  push(event: EventDraft, fence: number | undefined, key?: string): void {
    const last = this.queue[this.queue.length - 1];
    const chunk = key === undefined && isMergeable(event) ? event : undefined;
    if (chunk && last?.run && last.fence === fence && joinsRun(last.run, chunk)) {
      last.run.chunks.push(chunk.payload.delta);
      last.run.chars += chunk.payload.delta.length;
      return;
    }
    const run = chunk && { type: chunk.type, messageId: chunk.payload.messageId, offset: chunk.payload.offset, chars: chunk.payload.delta.length, chunks: [chunk.payload.delta] };
    this.queue.push({ event, fence, ...(key === undefined ? {} : { key }), ...(run ? { run } : {}) });
    if (this.sending || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.send();
    });
  }

  /** Resolves once everything pushed so far was appended (or given up). */
  flushed(): Promise<void> {
    if (!this.sending && !this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private async send(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    const { store, hostKey, log } = this.options;
    while (this.queue.length > 0) {
      // One batch = the queued events produced under the same fence, up to one with a key of its own; that one goes alone.
      const { fence, key: ownKey } = this.queue[0]!;
      const end = ownKey !== undefined ? 1 : this.queue.findIndex((entry) => entry.fence !== fence || entry.key !== undefined);
      const batch = this.queue.splice(0, end < 0 ? this.queue.length : end).map(toAppend);
      const key = ownKey ?? randomUUID();
      for (let attempt = 1; ; attempt++) {
        try {
          const outcome = await store.append(batch, { hostKey, fence, key, knownEpoch: this.options.knownEpoch() });
          if (outcome.status === "appended") this.options.appended({ epoch: outcome.epoch, events: outcome.events });
          else if (outcome.status === "fenced") log("warn", "events not appended: this replica no longer holds the host's lease", { sessionId: store.sessionId, events: batch.length });
          else if (outcome.status === "missing") log("warn", "events not appended: the session's shared log does not exist (yet)", { sessionId: store.sessionId, events: batch.length });
          break;
        } catch (error) {
          if (attempt >= MAX_ATTEMPTS) {
            log("error", "events could not be appended to the shared log", { sessionId: store.sessionId, events: batch.length, error: String(error) });
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 100 * attempt).unref());
        }
      }
    }
    this.sending = false;
    for (const wake of this.idle.splice(0)) wake();
  }
}

interface QueuedEvent {
  event: EventDraft;
  fence: number | undefined;
  key?: string;
  /** A streamed chunk, and the ones that joined it while it waited. */
  run?: ChunkRun & { chunks: string[] };
}

function toAppend(entry: QueuedEvent): EventToAppend {
  const event = entry.run && entry.run.chunks.length > 1 ? runDraft(entry.run, entry.run.chunks.join("")) : entry.event;
  return { type: event.type, payload: event.payload };
}
