/**
 * Requests that start or steer a turn, remembered by an idempotency key the client chose, so that
 * the same request sent again returns what the first one returned instead of prompting Tau twice.
 *
 * A `--remote` relay whose connection was cut after it passed on a prompt (Codex `turn/start`, Ask
 * `session/send`) cannot tell whether the gateway received it. It sends each such request with a
 * key of its own (a random UUID, never shown to its client), and sends it again with the same key
 * on its new connection: a key this gateway has seen answers with the first request's outcome
 * (waiting for it while it is still running), so the client gets one answer and Tau one prompt; a
 * key it has not seen means the first never arrived, and the request runs now.
 *
 * Keys are scoped by tenant (a tenant cannot reach another's outcomes, even with its key) and by
 * method, bound to the request's params (the same key with other params is refused: it is a
 * client's mistake, not a repeat), and kept `keepMs` after the request was made, at most `max` of
 * them (the oldest are forgotten first). The memory is this process's: a repeat that reaches
 * another replica, or this gateway after a restart, runs again, and then the turn id (the key, see
 * the dialects' turn methods) makes Tau refuse a second user message with the same id.
 */

/** The params field (Codex turn/start, Ask session/send) that carries a relay's idempotency key. */
export const REQUEST_KEY = "tauGatewayRequestKey";

export const RECALL_KEEP_MS = 10 * 60_000;
export const RECALL_MAX = 10_000;

interface Recalled {
  fingerprint: string;
  outcome: Promise<unknown>;
  expiresAt: number;
}

/** The same key came with different params. */
export class RecallMismatchError extends Error {}

export class RequestRecall {
  private readonly entries = new Map<string, Recalled>();

  constructor(
    private readonly keepMs = RECALL_KEEP_MS,
    private readonly max = RECALL_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /**
   * Runs `run` the first time `key` is seen for this tenant and method; afterwards (within
   * `keepMs`) returns the first run's outcome, result or error alike. `params` are the request's
   * (the key left out): a repeat with other params throws RecallMismatchError.
   */
  once<T>(scope: { tenant?: string; method: string }, key: string, params: unknown, run: () => Promise<T>): Promise<T> {
    this.forgetExpired();
    const id = JSON.stringify([scope.tenant ?? null, scope.method, key]);
    const fingerprint = JSON.stringify(params ?? null);
    const known = this.entries.get(id);
    if (known) {
      if (known.fingerprint !== fingerprint) {
        return Promise.reject(new RecallMismatchError(`the request key was already used for a different ${scope.method} request`));
      }
      return known.outcome as Promise<T>;
    }
    const outcome = run();
    // Kept whatever it settles to; a rejection nobody awaits yet is not unhandled.
    outcome.catch(() => undefined);
    this.entries.set(id, { fingerprint, outcome, expiresAt: this.now() + this.keepMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return outcome;
  }

  /** Entries are kept in the order they were made, so the expired ones are at the front. */
  private forgetExpired(): void {
    const now = this.now();
    for (const [id, entry] of this.entries) {
      if (entry.expiresAt > now) return;
      this.entries.delete(id);
    }
  }
}
