/**
 * The votes on one `require`d call that needs `count` distinct approvers (consensus): each approver
 * is an identity string given by whoever calls this (a principal, or for now one per answering
 * connection), counted once however often it votes. Approvals are acknowledged as votes until the
 * count is reached, which decides; one rejection from an allowed approver decides at once (a
 * veto: consent is never inferred). Pure.
 */

export type VoteOutcome =
  /** Counted; `have` of `need` so far. */
  | { readonly kind: "vote"; readonly have: number; readonly need: number }
  /** This vote reached the count, or was a rejection: the call is decided. */
  | { readonly kind: "decided"; readonly approved: boolean; readonly approvers: readonly string[] }
  /** This approver had already voted: nothing changes. */
  | { readonly kind: "repeat"; readonly have: number; readonly need: number }
  /** Decided before this vote came. */
  | { readonly kind: "closed" };

export interface Vote {
  readonly approver: string;
  readonly approve: boolean;
}

export class VoteTally {
  private readonly approvers = new Set<string>();
  private decided: boolean | undefined;

  constructor(readonly need: number) {
    if (!Number.isInteger(need) || need < 1) throw new RangeError(`a tally needs a positive whole count, not ${need}`);
  }

  get have(): number {
    return this.approvers.size;
  }

  get outcome(): boolean | undefined {
    return this.decided;
  }

  cast(vote: Vote): VoteOutcome {
    if (this.decided !== undefined) return { kind: "closed" };
    if (!vote.approve) {
      this.decided = false;
      return { kind: "decided", approved: false, approvers: [vote.approver] };
    }
    if (this.approvers.has(vote.approver)) return { kind: "repeat", have: this.have, need: this.need };
    this.approvers.add(vote.approver);
    if (this.have < this.need) return { kind: "vote", have: this.have, need: this.need };
    this.decided = true;
    return { kind: "decided", approved: true, approvers: [...this.approvers] };
  }
}
