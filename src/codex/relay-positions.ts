import { isObject } from "../shared/unknown-values.js";

/**
 * What `app-server --remote` (the relay, src/relay/gateway-relay.ts) asks of the gateway's
 * Codex threads so that a client behind it loses no notification when the relay's connection is
 * cut and made again. Gateway extensions, for relays only:
 *
 * - `initialize.capabilities.tauGatewayRelay: true`: the connection is a relay's. Each thread
 *   notification that comes of an event of the session's log then carries `tauGatewayAt: [seq,
 *   index]` (the event's seq, and which of the notifications made of that event it is); the relay
 *   keeps the last one it passed on per thread, and removes the field.
 * - `thread/resume.tauGatewayResumeAfter: [seq, index]`: the thread's notifications after that
 *   place are sent again first (they follow the response), then the live ones: nothing missed,
 *   nothing twice. A thread's translator is shared by its connections, so what it sent is kept, per
 *   thread once a relay has loaded it, the latest `KEPT` notifications.
 */

export const RELAY_CAPABILITY = "tauGatewayRelay";
export const RESUME_AFTER = "tauGatewayResumeAfter";
export const AT_FIELD = "tauGatewayAt";

/** A place in a session's log: an event's seq, and the index of one of the notifications made of it. */
export type LogPosition = [seq: number, index: number];

const KEPT = 4_096;

const before = (a: LogPosition, b: LogPosition) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** The position a thread/resume asks to resume after, if a well-formed one. */
export function resumeAfter(params: unknown): LogPosition | undefined {
  const at = isObject(params) ? params[RESUME_AFTER] : undefined;
  if (!Array.isArray(at) || at.length !== 2 || !at.every((n) => Number.isSafeInteger(n) && n >= 0)) return undefined;
  return [at[0], at[1]];
}

/** The thread's notifications made of log events, as relays may need them again. */
export class RecentNotifications {
  private readonly kept: Array<{ at: LogPosition; method: string; params: object }> = [];
  /** Keeping since a relay loaded the thread. */
  private keeping = false;
  /** The newest place dropped for the bound: a resume from before it cannot be served whole. */
  private dropped: LogPosition | undefined;

  keep(): void {
    this.keeping = true;
  }

  record(at: LogPosition, method: string, params: object): void {
    if (!this.keeping) return;
    this.kept.push({ at, method, params });
    if (this.kept.length > KEPT) this.dropped = this.kept.splice(0, this.kept.length - KEPT).at(-1)!.at;
  }

  /** What followed `at`; undefined when some of it is no longer kept (or never was: the thread was not kept then). */
  after(at: LogPosition): Array<{ at: LogPosition; method: string; params: object }> | undefined {
    if (!this.keeping || (this.dropped && before(at, this.dropped))) return undefined;
    return this.kept.filter((entry) => before(at, entry.at));
  }
}
