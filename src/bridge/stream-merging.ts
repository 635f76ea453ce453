import type { Events } from "../../generated/ask-v1.0.js";

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
const MERGED_TYPES = new Set<string>(["model.streaming", "model.thinking"]);

/**
 * A streamed chunk's draft (an EventDraft of one of MERGED_TYPES), written from the generated
 * events rather than event-draft.ts so that the log appender, which joins runs too, stays one
 * floor above the generated types.
 */
type StreamDraft = { [T in "model.streaming" | "model.thinking"]: { type: T; payload: Events[T] } }["model.streaming" | "model.thinking"];

/** A merged chunk stops growing at this many characters (a longer delta is still one event). */
export const MAX_MERGED_CHARS = 64 * 1024;

export function isMergeable(draft: { type: string }): draft is StreamDraft {
  return MERGED_TYPES.has(draft.type);
}

/** A run of merged chunks: what the next chunk must match to join it. */
export interface ChunkRun {
  type: StreamDraft["type"];
  messageId: string | undefined;
  offset: number | undefined;
  chars: number;
}

/** Whether `next` may join `run` in one event: same kind, same message, following on, within the bound. */
export function joinsRun(run: ChunkRun, next: StreamDraft): boolean {
  const { delta, messageId, offset } = next.payload;
  const followsOn = run.offset === undefined || offset === undefined || run.offset + run.chars === offset;
  return run.type === next.type && run.messageId === messageId && followsOn && run.chars + delta.length <= MAX_MERGED_CHARS;
}

/** The draft of a run's text, its message and offset as the run's first chunk had them. */
export function runDraft(run: ChunkRun, delta: string): StreamDraft {
  const messageId = run.messageId === undefined ? {} : { messageId: run.messageId };
  const offset = run.offset === undefined ? {} : { offset: run.offset };
  return { type: run.type, payload: { delta, ...messageId, ...offset } };
}

export class StreamMerging {
  private waiting: (ChunkRun & { chunks: string[] }) | undefined;
  private scheduled = false;

  /** `release` appends a draft to the log (called with merged chunks, in order). */
  constructor(private readonly release: (draft: StreamDraft) => void) {}

  /** A streamed chunk: merged with the one waiting when that is of the same type and message and it follows on, else waits on its own. */
  add(draft: StreamDraft): void {
    const { delta, messageId, offset } = draft.payload;
    const waiting = this.waiting;
    if (waiting && joinsRun(waiting, draft)) {
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
    this.release(runDraft(waiting, waiting.chunks.join("")));
  }
}
