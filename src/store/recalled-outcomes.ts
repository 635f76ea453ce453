/**
 * Prompts remembered by their idempotency key across replicas (the bridge's request-recall.ts
 * keeps them in each process; this is what lets a repeat that reached another replica answer as
 * the first did). A key is claimed by the first replica that sees it, and holds that request's
 * params' fingerprint, then its outcome once it settled.
 *
 * A claim whose replica went away before the outcome was written is let go after `pendingMs`, so
 * the request is taken up again rather than waited for forever; a settled outcome is kept `keepMs`.
 */
export interface RecalledOutcomes {
  /** Claims `id` for this replica; or, when another request holds it, what it holds. */
  claim(id: string, fingerprint: string, pendingMs: number): Promise<RecallClaim>;
  /** Writes the outcome of the request that claimed `id`, for `keepMs`, and wakes whoever waits for it. */
  settle(id: string, fingerprint: string, outcome: SharedOutcome, keepMs: number): Promise<void>;
  /**
   * What `id` holds once it settled, or once it is no longer claimed (its claim let go: `undefined`),
   * waiting at most `timeoutMs` (then what it holds now, still pending or not).
   */
  settled(id: string, timeoutMs: number): Promise<RecallClaim>;
}

export type RecallClaim =
  /** This replica holds the key now: the request is its to run. */
  | { state: "claimed" }
  /** Another request holds it, still running (outcome undefined) or settled. */
  | { state: "held"; fingerprint: string; outcome?: SharedOutcome }
  /** Nobody holds it (a claim let go). */
  | { state: "free" };

/** A request's outcome in a form every replica can read: its result, or its JSON-RPC error. */
export type SharedOutcome = { result: unknown } | { error: { code: number; message: string; data?: unknown } };
