/**
 * The session/send calls of one session that have passed their checks and may still reach Tau
 * (submit, steer or queue on its way upstream, not yet seen accepted or refused). session/close
 * waits for them before it looks at what runs: a turn one of them starts is then interrupted and
 * reported with the rest, instead of running on in Tau after the session was closed, watched by
 * nobody. A send arriving once the close has begun is refused (-32004) before it gets here.
 */
export class SendsInFlight {
  private readonly open = new Set<Promise<void>>();

  /** Registers a send (the promise of its answer) until it settles; returns it unchanged. */
  track<T>(send: Promise<T>): Promise<T> {
    const settled = send.then(
      () => undefined,
      () => undefined,
    );
    this.open.add(settled);
    void settled.then(() => this.open.delete(settled));
    return send;
  }

  /** Resolves once every send registered so far has settled (true), or after `timeoutMs` (false). */
  settled(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref?.();
    });
    return Promise.race([Promise.all([...this.open]).then(() => true), late]).finally(() => clearTimeout(timer));
  }

  get size(): number {
    return this.open.size;
  }
}
