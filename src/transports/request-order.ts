/**
 * One connection's requests applied one after another, in the order they arrived, whatever the
 * dialect (as an Ask host handles a connection's requests): a `session/resume` sent right after a
 * `session/send` sees the turn that send started. A request takes its place when it arrives
 * (`enter`, in arrival order) and runs once every request before it has finished.
 *
 * A place that is given up without running (its request refused by a gate, say) must still be
 * released, or every request after it would wait forever: `release` does that and is safe to call
 * again after `run`.
 */

export interface RequestTurn {
  /** Runs `call` once every earlier request has finished; this turn ends when `call` settles. */
  run<T>(call: () => Promise<T>): Promise<T>;
  /** Ends this turn without running (or after running; a second call does nothing). */
  release(): void;
}

export class RequestOrder {
  /** Settles once every request that has entered so far has finished. */
  private tail: Promise<void> = Promise.resolve();

  enter(): RequestTurn {
    const previous = this.tail;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The next request waits for this one and, through it, for every one before.
    this.tail = previous.then(() => released);
    return {
      async run<T>(call: () => Promise<T>): Promise<T> {
        await previous;
        try {
          return await call();
        } finally {
          release();
        }
      },
      release,
    };
  }
}
