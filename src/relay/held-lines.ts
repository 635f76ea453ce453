import type { OpenRequest } from "./requests.js";

/**
 * The client's lines a relay holds while the gateway is away, in order, for the next link: each
 * at most `holdMs` (then it is dropped and its requests answered by the relay), and together at
 * most about `maxBytes`. Past that the relay takes no more of its input (`room`), so a client that
 * writes on while the gateway is away waits in its pipe instead of filling the relay's memory.
 */

export interface HeldLine {
  text: string;
  requests: OpenRequest[];
  /** Settles the promise `hold` gave: the line was sent or dropped. */
  done(): void;
  timer: NodeJS.Timeout;
}

export class HeldLines {
  private readonly lines: HeldLine[] = [];
  private bytes = 0;
  private roomWaiters: Array<() => void> = [];

  constructor(
    private readonly holdMs: number,
    private readonly maxBytes: number,
    /** A line waited `holdMs`: it has been taken out; its requests are to be answered. */
    private readonly expired: (line: HeldLine) => void,
  ) {}

  get size(): number {
    return this.lines.length;
  }

  /** Bytes held (UTF-16 code units, as the lines are kept). */
  get heldBytes(): number {
    return this.bytes;
  }

  /** Holds a line; settles once it is sent (`take`) or dropped. */
  hold(text: string, requests: OpenRequest[]): Promise<void> {
    return new Promise((resolve) => {
      const line: HeldLine = {
        text,
        requests,
        done: resolve,
        timer: setTimeout(() => {
          this.remove(line);
          this.expired(line);
          resolve();
        }, this.holdMs),
      };
      this.lines.push(line);
      this.bytes += text.length;
    });
  }

  /** Undefined while more may be held; otherwise settles once there is room again (the lines were sent or dropped). */
  room(): Promise<void> | undefined {
    if (this.bytes < this.maxBytes) return undefined;
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Takes every line out (to be sent, or answered by the relay as it stops); the caller settles each with `done`. */
  take(): HeldLine[] {
    const lines = this.lines.splice(0);
    for (const line of lines) clearTimeout(line.timer);
    this.bytes = 0;
    this.wakeRoom();
    return lines;
  }

  private remove(line: HeldLine): void {
    const at = this.lines.indexOf(line);
    if (at < 0) return;
    this.lines.splice(at, 1);
    this.bytes -= line.text.length;
    this.wakeRoom();
  }

  private wakeRoom(): void {
    if (this.bytes >= this.maxBytes) return;
    for (const wake of this.roomWaiters.splice(0)) wake();
  }
}
