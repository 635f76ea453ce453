/**
 * Streamed chunks (`model.streaming`, `model.thinking`) say where in their message they begin
 * (`offset`). A reader that already holds a message up to some point — history read from the
 * snapshot, which may run ahead of the session's events while they are on their way to a shared
 * store — keeps only what lies beyond it, so no part of a message reaches a client twice.
 */

export interface StreamedChunk {
  readonly delta: string;
  readonly offset?: number;
}

/**
 * What of `chunk` lies beyond the first `held` characters of its message: all of it when it says
 * not where it begins or begins at or after that point (text the events never carried, as after a
 * resync, is not waited for), nothing when it lies wholly within.
 */
export function beyondHeld(held: number, chunk: StreamedChunk): string {
  if (chunk.offset === undefined || chunk.offset >= held) return chunk.delta;
  return chunk.delta.slice(held - chunk.offset);
}

/** Where a reader that took `chunk` (or the part of it beyond what it held) holds its message up to. */
export function heldAfter(held: number, chunk: StreamedChunk): number {
  return chunk.offset === undefined ? held + chunk.delta.length : Math.max(held, chunk.offset + chunk.delta.length);
}
