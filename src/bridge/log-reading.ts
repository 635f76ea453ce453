import type { Event } from "../../generated/ask-v1.0.js";
import type { Snapshot } from "../../generated/tau-v18.js";
import type { EventLog } from "./event-log.js";

const TERMINAL = new Set<Event["type"]>(["turn.completed", "turn.failed", "turn.aborted"]);

/**
 * What a session hub that reads its session's log alone knows of the session (session-hub.ts),
 * without the snapshot it does not keep: the snapshot read when it began (what never changes of a
 * session), and which turns run, from the log (the owner's account of the same deltas): started
 * and not yet ended, oldest first.
 */
export class LogReading {
  private readonly running = new Set<string>();
  private readonly stop: () => void;

  constructor(
    log: Pick<EventLog, "subscribe">,
    readonly snapshot: Snapshot,
  ) {
    this.stop = log.subscribe((event) => this.take(event));
  }

  /** The running turns, oldest first (a new array each time). */
  get runningTurnIds(): string[] {
    return [...this.running];
  }

  /** The hub observes the session now: the log is no longer read for this. */
  close(): void {
    this.stop();
  }

  private take(event: Event): void {
    const turnId = (event.payload as { turnId?: unknown } | undefined)?.turnId;
    if (event.type === "session.ended") this.running.clear();
    else if (typeof turnId !== "string") return;
    else if (event.type === "turn.started") this.running.add(turnId);
    else if (TERMINAL.has(event.type)) this.running.delete(turnId);
  }
}
