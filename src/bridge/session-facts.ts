import type { Snapshot } from "../../generated/tau-v18.js";
import { sessionTenant } from "./session-attributes.js";

/**
 * What `session/list` shows of a session the gateway has not opened: facts fixed when the session
 * was created (its tenant attribute, creation time and bootstrap model), read once with
 * `session.snapshot` and kept. Without this every list read the whole snapshot of every such
 * session again — sessions created over `/tau` or by another gateway made each list cost one
 * snapshot per session, and a client listing in a loop kept the host busy serialising snapshots.
 *
 * At most one read per session is in flight (concurrent lists share it); a session whose read
 * fails is left out of lists and read again only after a backoff that doubles while it keeps
 * failing (a host may list a session it cannot restore and answer not_found for it every time).
 */

export interface SessionFacts {
  tenant: string | undefined;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Model id as Ask hosts report it (no provider prefix). */
  model: string;
}

export interface SessionFactsOptions {
  readSnapshot(sessionId: string): Promise<Snapshot>;
  /** Sessions whose facts are kept at most (oldest forgotten first); default 100,000. */
  maxKnown?: number;
  /** First wait after a failed read; default 1 s. */
  retryAfterMs?: number;
  /** Longest wait between reads of a session that keeps failing; default 5 min. */
  maxRetryAfterMs?: number;
  now?: () => number;
}

interface Failure {
  count: number;
  retryAt: number;
}

export class SessionFactsReader {
  private readonly known = new Map<string, SessionFacts>();
  private readonly reads = new Map<string, Promise<SessionFacts | undefined>>();
  private readonly failures = new Map<string, Failure>();
  private readonly maxKnown: number;
  private readonly retryAfterMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly now: () => number;
  /** `session.snapshot` requests sent (for the metrics). */
  snapshotReads = 0;

  constructor(private readonly options: SessionFactsOptions) {
    this.maxKnown = options.maxKnown ?? 100_000;
    this.retryAfterMs = options.retryAfterMs ?? 1000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  /** The facts of a session; undefined when they cannot be read now (gone, or failing and backed off). */
  read(sessionId: string): Promise<SessionFacts | undefined> {
    const known = this.known.get(sessionId);
    if (known) return Promise.resolve(known);
    const open = this.reads.get(sessionId);
    if (open) return open;
    const failure = this.failures.get(sessionId);
    if (failure && this.now() < failure.retryAt) return Promise.resolve(undefined);

    this.snapshotReads += 1;
    const read = this.options.readSnapshot(sessionId).then(
      (snapshot) => {
        this.failures.delete(sessionId);
        return this.remember(sessionId, factsOf(snapshot));
      },
      () => {
        this.failed(sessionId);
        return undefined;
      },
    );
    this.reads.set(sessionId, read);
    void read.finally(() => this.reads.delete(sessionId));
    return read;
  }

  private remember(sessionId: string, facts: SessionFacts): SessionFacts {
    if (this.known.size >= this.maxKnown) this.known.delete(this.known.keys().next().value!);
    this.known.set(sessionId, facts);
    return facts;
  }

  private failed(sessionId: string): void {
    const count = (this.failures.get(sessionId)?.count ?? 0) + 1;
    const wait = Math.min(this.retryAfterMs * 2 ** (count - 1), this.maxRetryAfterMs);
    // Bounded like the facts: a failure forgotten early only means one read sooner.
    if (!this.failures.has(sessionId) && this.failures.size >= this.maxKnown) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(sessionId, { count, retryAt: this.now() + wait });
  }
}

/** The list facts of a snapshot (also used for sessions the gateway has open). */
export function factsOf(snapshot: Snapshot): SessionFacts {
  return { tenant: sessionTenant(snapshot), createdAt: snapshot.createdAt, model: modelName(snapshot) };
}

/** Ask hosts report the model without a provider prefix. */
export const modelName = (snapshot: Snapshot) => snapshot.bootstrap.model.id.replace(/^[^/]+\//, "");
