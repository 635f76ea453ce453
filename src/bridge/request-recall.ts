import { RpcError } from "../shared/rpc-error.js";
import type { RecallClaim, RecalledOutcomes, SharedOutcome } from "../store/index.js";

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
 * them (the oldest are forgotten first). With a store shared by replicas (Redis), the keys are
 * the store's too (store/recalled-outcomes.ts): a repeat that reaches another replica waits for the
 * first request's outcome there and answers with it; a key claimed by a replica that went away
 * before it answered is taken up again after `RECALL_PENDING_MS`. Without one, the memory is this
 * process's: a repeat on a restarted gateway runs again, and then the turn id (the key, see the
 * dialects' turn methods) makes Tau refuse a second user message with the same id. Outcomes are
 * shared as the dialect's JSON-RPC answer: `run` throws RpcError (the callers map their errors).
 */

/** The params field (Codex turn/start, Ask session/send) that carries a relay's idempotency key. */
export const REQUEST_KEY = "tauGatewayRequestKey";

export const RECALL_KEEP_MS = 10 * 60_000;
export const RECALL_MAX = 10_000;
/** How long another replica's claim on a key holds without an outcome (longer than a prompt takes to be accepted). */
export const RECALL_PENDING_MS = 2 * 60_000;

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
    private readonly shared?: RecalledOutcomes,
    private readonly pendingMs = RECALL_PENDING_MS,
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
    const outcome = this.shared ? this.onceShared(this.shared, id, fingerprint, scope.method, run) : run();
    // Kept whatever it settles to; a rejection nobody awaits yet is not unhandled.
    outcome.catch(() => undefined);
    this.entries.set(id, { fingerprint, outcome, expiresAt: this.now() + this.keepMs });
    while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return outcome;
  }

  /** The first run among every replica sharing the store, or its outcome. */
  private async onceShared<T>(shared: RecalledOutcomes, id: string, fingerprint: string, method: string, run: () => Promise<T>): Promise<T> {
    for (;;) {
      let claim: RecallClaim;
      try {
        claim = await shared.claim(id, fingerprint, this.pendingMs);
      } catch {
        // The store is unreachable: run here (Tau refuses a second user message under the key's turn id).
        return run();
      }
      if (claim.state === "claimed") return this.runAndShare(shared, id, fingerprint, run);
      if (claim.state === "free") continue;
      if (claim.fingerprint !== fingerprint) throw new RecallMismatchError(`the request key was already used for a different ${method} request`);
      const settled = claim.outcome ? claim : await shared.settled(id, this.pendingMs);
      if (settled.state === "held" && settled.outcome) return revived(settled.outcome) as T;
      // Still pending, or let go by a replica that went away: claim it again.
    }
  }

  private async runAndShare<T>(shared: RecalledOutcomes, id: string, fingerprint: string, run: () => Promise<T>): Promise<T> {
    let outcome: SharedOutcome;
    try {
      const result = await run();
      outcome = { result };
      return result;
    } catch (error) {
      outcome = error instanceof RpcError ? { error: { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) } } : { error: { code: -32603, message: `Internal error: ${String(error)}` } };
      throw error;
    } finally {
      shared.settle(id, fingerprint, outcome!, this.keepMs).catch(() => undefined);
    }
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

/** A shared outcome as the first request gave it: its result, or its JSON-RPC error thrown. */
function revived(outcome: SharedOutcome): unknown {
  if ("result" in outcome) return outcome.result;
  throw new RpcError(outcome.error.code, outcome.error.message, outcome.error.data);
}
