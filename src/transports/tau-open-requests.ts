import { TAU_SETTLING_METHODS } from "../registry/tau/index.js";

/**
 * The requests one `/tau` client has forwarded upstream and not yet had answered, by client id
 * (FIFO per id: Tau does not enforce unique ids), with the per-connection in-flight limit.
 *
 * Requests that only settle or cancel work already running are never refused and do not count:
 * a turn's `session.submit` stays open until the turn settles, and refusing the client-tool result
 * or the interrupt that lets it settle would deadlock the connection.
 */

export interface OpenTauRequest {
  method: string;
  /** `performance.now()` when it was forwarded. */
  startedAt: number;
}

/** Marked in the registry (`MethodEntry.settles`). */
const SETTLING_METHODS: ReadonlySet<string> = TAU_SETTLING_METHODS;

export class OpenTauRequests {
  private readonly byId = new Map<string, Array<OpenTauRequest & { limited: boolean }>>();
  private limitedCount = 0;

  /** `maxInflight` undefined = no limit. */
  constructor(readonly maxInflight?: number) {}

  /** Requests counted against the limit that are still open (settling requests excluded). */
  get inflight(): number {
    return this.limitedCount;
  }

  /** Every request still open, settling ones included. */
  get size(): number {
    let open = 0;
    for (const entries of this.byId.values()) open += entries.length;
    return open;
  }

  /** Records a request about to be forwarded; false when the connection is at its limit (refuse it instead). */
  open(id: string, method: string): boolean {
    const limited = !SETTLING_METHODS.has(method);
    if (limited && this.maxInflight !== undefined && this.limitedCount >= this.maxInflight) return false;
    if (limited) this.limitedCount++;
    const entry = { method, startedAt: performance.now(), limited };
    const open = this.byId.get(id);
    if (open) open.push(entry);
    else this.byId.set(id, [entry]);
    return true;
  }

  /** The open request a response with this id answers (now closed), or undefined. */
  settle(id: string): OpenTauRequest | undefined {
    const open = this.byId.get(id);
    const entry = open?.shift();
    if (!entry) return undefined;
    if (open!.length === 0) this.byId.delete(id);
    if (entry.limited) this.limitedCount--;
    return { method: entry.method, startedAt: entry.startedAt };
  }
}
