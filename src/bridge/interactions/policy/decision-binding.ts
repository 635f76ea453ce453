/**
 * Decisions bound to the digest of the exact call they were made for (call-digest.ts): a decision
 * is taken once (single-use), only before it expires, and only for the same digest: a call whose
 * tool, arguments, session or policy version changed has another digest and finds nothing. Pure:
 * the time is the caller's.
 */

export interface BoundDecision<D> {
  readonly digest: string;
  readonly decision: D;
  /** Milliseconds since the epoch after which the decision no longer counts. */
  readonly expiresAt: number;
}

/** Why a decision was not taken. */
export type Unredeemable = "none" | "expired" | "used" | "changed";

export class DecisionBindings<D> {
  private readonly bound = new Map<string, BoundDecision<D> & { used: boolean }>();

  /** Binds `decision`, under `key` (an interaction id), to the call with `digest` until `expiresAt`. */
  bind(key: string, digest: string, decision: D, expiresAt: number): void {
    this.bound.set(key, { digest, decision, expiresAt, used: false });
  }

  /** The decision bound under `key` for a call with `digest` at time `now`, used up by this; or why there is none. */
  redeem(key: string, digest: string, now: number): { ok: true; decision: D } | { ok: false; why: Unredeemable } {
    const entry = this.bound.get(key);
    if (!entry) return { ok: false, why: "none" };
    if (entry.used) return { ok: false, why: "used" };
    if (entry.digest !== digest) {
      this.bound.delete(key);
      return { ok: false, why: "changed" };
    }
    if (now > entry.expiresAt) {
      this.bound.delete(key);
      return { ok: false, why: "expired" };
    }
    entry.used = true;
    return { ok: true, decision: entry.decision };
  }

  /** Forgets decisions expired at `now` and the ones used. */
  sweep(now: number): void {
    for (const [key, entry] of this.bound) if (entry.used || now > entry.expiresAt) this.bound.delete(key);
  }

  get size(): number {
    return this.bound.size;
  }
}
