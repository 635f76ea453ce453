/**
 * The one mutation queue of a session (spec §9): serialized requests run one at a time in arrival
 * order, across all connections. `busy` is true while anything is queued or running, which is what
 * makes submit/queue/steer/retry answer `busy` ("a mutating session request is in progress").
 */
export class MutationQueue {
  private tail: Promise<void> = Promise.resolve();
  private count = 0;

  /** `onIdle` runs whenever the queue empties (the session then drains pending input). */
  constructor(private readonly onIdle: () => void) {}

  get busy(): boolean {
    return this.count > 0;
  }

  run<T>(mutation: () => T | Promise<T>): Promise<T> {
    this.count += 1;
    const result = this.tail.then(mutation);
    this.tail = result.then(
      () => this.finished(),
      () => this.finished(),
    );
    return result;
  }

  private finished(): void {
    this.count -= 1;
    if (this.count === 0) this.onIdle();
  }
}
