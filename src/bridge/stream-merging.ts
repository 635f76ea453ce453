import type { EventDraft } from "./event-draft.js";

/**
 * Consecutive streamed chunks of one kind and one message that arrive in one tick become one event. A Tau host
 * streams a reply in small deltas (a few characters each) and a busy gateway reads many of them at
 * once; as one event each, every subscriber gets a frame, an envelope and a write per few
 * characters, and a fan-out falls behind the host. Merged, the text is the same, in the same
 * order, in fewer events.
 *
 * Merging happens once, in the session hub, before the log numbers the events: every subscriber,
 * every replay and every `session/events` page sees the same events with the same `seq`. Only
 * chunks that follow each other directly merge — any other event first releases the chunk waiting
 * before it — and a waiting chunk is released at the end of the tick it arrived in, so no event
 * is held back longer than the work already queued in that tick.
 */

/** The event types whose payload is one streamed chunk `{ delta }`, merged by concatenation. */
const MERGED_TYPES = new Set<EventDraft["type"]>(["model.streaming", "model.thinking"]);

type StreamDraft = Extract<EventDraft, { type: "model.streaming" | "model.thinking" }>;

/** A merged chunk stops growing at this many characters (a longer delta is still one event). */
export const MAX_MERGED_CHARS = 64 * 1024;

export function isMergeable(draft: EventDraft): draft is StreamDraft {
  return MERGED_TYPES.has(draft.type);
}

export class StreamMerging {
  private waiting: { type: StreamDraft["type"]; messageId: string | undefined; offset: number | undefined; chunks: string[]; chars: number } | undefined;
  private scheduled = false;

  /** `release` appends a draft to the log (called with merged chunks, in order). */
  constructor(private readonly release: (draft: EventDraft) => void) {}

  /** A streamed chunk: merged with the one waiting when that is of the same type and message and it follows on, else waits on its own. */
  add(draft: StreamDraft): void {
    const { delta, messageId, offset } = draft.payload;
    const waiting = this.waiting;
    const followsOn = waiting?.offset === undefined || offset === undefined || waiting.offset + waiting.chars === offset;
    if (waiting && waiting.type === draft.type && waiting.messageId === messageId && followsOn && waiting.chars + delta.length <= MAX_MERGED_CHARS) {
      waiting.chunks.push(delta);
      waiting.chars += delta.length;
      return;
    }
    this.flush();
    this.waiting = { type: draft.type, messageId, offset, chunks: [delta], chars: delta.length };
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  /** Releases the waiting chunk now (before any other event, and at the end of its tick). */
  flush(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    const messageId = waiting.messageId === undefined ? {} : { messageId: waiting.messageId };
    const offset = waiting.offset === undefined ? {} : { offset: waiting.offset };
    this.release({ type: waiting.type, payload: { delta: waiting.chunks.join(""), ...messageId, ...offset } });
  }
}
