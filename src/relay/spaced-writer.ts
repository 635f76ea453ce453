/**
 * The lines a relay writes to its client, with a pause between a response and what the gateway
 * sends after it, where the dialect wants the messages a request causes read apart from its
 * response (Codex's `own-read`): over a pipe, a reader slower than the writer gets everything
 * written meanwhile in one read, and the AI SDK's Codex provider, which subscribes to a turn once
 * it has read the `turn/start` response, would miss the turn's first notifications. The gateway's
 * WebSocket keeps them apart by framing; on the relay's stdout the pause does it, as `app-server`
 * without --remote does (PIPE_TRANSPORT).
 *
 * As there, responses themselves never wait: a client that sends its requests one after the other
 * gets each answer at once (a pause after every response made 2,000 requests take 52 s), and a
 * response may pass notifications still waiting out an earlier response's pause (app-server's
 * answers go out on completion, its caused messages later). Notifications and requests keep their
 * order among themselves, each written no sooner than `pauseMs` after the last response before it.
 * Without a pause every line is written at once.
 */
export class SpacedWriter {
  /** Lines that are not responses, waiting, each with the time it may be written. */
  private readonly queue: Array<{ line: string; at: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  /** When the latest response's pause ends. */
  private pauseEnds = 0;

  constructor(
    private readonly write: (line: string) => void,
    private readonly pauseMs: number | undefined,
  ) {}

  /** Writes `line`: a response (`isResponse`) at once, anything else after the pause of the last response before it. */
  push(line: string, isResponse = false): void {
    if (this.pauseMs === undefined) return this.write(line);
    const now = Date.now();
    if (isResponse) {
      this.write(line);
      this.pauseEnds = now + this.pauseMs;
      return;
    }
    if (this.queue.length === 0 && now >= this.pauseEnds) return this.write(line);
    this.queue.push({ line, at: this.pauseEnds });
    this.schedule(now);
  }

  /** Writes whatever waits, now (the relay is stopping). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const { line } of this.queue.splice(0)) this.write(line);
  }

  private schedule(now: number): void {
    if (this.timer !== undefined || this.queue.length === 0) return;
    this.timer = setTimeout(() => this.writeDue(), Math.max(0, this.queue[0]!.at - now));
  }

  private writeDue(): void {
    this.timer = undefined;
    const now = Date.now();
    while (this.queue.length > 0 && this.queue[0]!.at <= now) this.write(this.queue.shift()!.line);
    this.schedule(now);
  }
}
