/**
 * Which Tau deltas each event of a session's local log was translated from (by `toRevision`: one,
 * or the first and last of a merged stream of chunks), for the newest events. A Tau client
 * observing the session on its own connection received those very deltas: the inspector shows
 * them under the event (its cross-dialect timeline).
 */

export interface DeltaSource {
  from: number;
  to: number;
}

export class DeltaSources {
  private readonly sources = new Map<number, DeltaSource>();
  /** The delta being translated now, while it is. */
  private translating: number | undefined;
  /** The deltas whose streamed chunks wait to be merged into one event. */
  private streamed: number[] = [];

  /** `max`: events remembered (the log's retention). */
  constructor(private readonly max: number) {}

  /** Runs the translation of the delta `toRevision`: what it appends comes from it. */
  translate(toRevision: number, translation: () => void): void {
    this.translating = toRevision;
    try {
      translation();
    } finally {
      this.translating = undefined;
    }
  }

  /** The delta an event appended right now comes from (undefined outside a translation). */
  current(): DeltaSource | undefined {
    const revision = this.translating;
    return revision === undefined ? undefined : { from: revision, to: revision };
  }

  /** A streamed chunk of the delta being translated was put aside to be merged. */
  chunkWaits(): void {
    if (this.translating !== undefined) this.streamed.push(this.translating);
  }

  /** The deltas of the chunks merged into the event appended now; they no longer wait. */
  takeStreamed(): DeltaSource | undefined {
    const revisions = this.streamed;
    this.streamed = [];
    return revisions.length === 0 ? undefined : { from: revisions[0]!, to: revisions[revisions.length - 1]! };
  }

  record(seq: number, source: DeltaSource | undefined): void {
    if (!source) return;
    this.sources.set(seq, source);
    if (this.sources.size > this.max) this.sources.delete(this.sources.keys().next().value!);
  }

  of(seq: number): DeltaSource | undefined {
    return this.sources.get(seq);
  }
}
