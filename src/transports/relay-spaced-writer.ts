/**
 * The lines a relay writes to its client, in order, with a pause after a response where the
 * dialect wants the messages a request causes read apart from its response (Codex's `own-read`):
 * over a pipe, a reader slower than the writer gets everything written meanwhile in one read, and
 * the AI SDK's Codex provider, which subscribes to a turn once it has read the `turn/start`
 * response, would miss the turn's first notifications. The gateway's WebSocket keeps them apart by
 * framing; on the relay's stdout the pause does it, as `app-server` without --remote does
 * (PIPE_TRANSPORT). Without a pause every line is written at once.
 */
export class SpacedWriter {
  private readonly queue: Array<{ line: string; pauseAfter: boolean }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly write: (line: string) => void,
    private readonly pauseMs: number | undefined,
  ) {}

  /** Writes `line` after the lines before it; with `pauseAfter`, what comes next waits `pauseMs`. */
  push(line: string, pauseAfter = false): void {
    if (this.pauseMs === undefined) return this.write(line);
    this.queue.push({ line, pauseAfter });
    if (this.timer === undefined) this.writeQueued();
  }

  /** Writes whatever waits, now (the relay is stopping). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const { line } of this.queue.splice(0)) this.write(line);
  }

  private writeQueued(): void {
    this.timer = undefined;
    while (this.queue.length > 0) {
      const { line, pauseAfter } = this.queue.shift()!;
      this.write(line);
      if (pauseAfter) {
        this.timer = setTimeout(() => this.writeQueued(), this.pauseMs);
        return;
      }
    }
  }
}
