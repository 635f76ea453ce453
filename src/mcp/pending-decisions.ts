import type { Event } from "../../generated/ask-v1.0.js";

/**
 * The decisions one session waits for (approvals, questions, plans), as a watching connection
 * follows them from the session's events: what makes tau-answer one of its tools. Those pending
 * before the watch began are added from the session's shared interactions (`known`); one that
 * settled meanwhile is not added back.
 */
export class PendingDecisions {
  private readonly pending = new Set<string>();
  /** Settled before the pending ones were listed (then no longer kept: nothing is added back after). */
  private settled: Set<string> | undefined = new Set<string>();

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** The ids of the decisions it waits for now. */
  ids(): string[] {
    return [...this.pending];
  }

  /** Takes one event of the session; true when whether it waits changed. */
  onEvent(event: Event): boolean {
    const before = this.waiting;
    switch (event.type) {
      case "approval.required":
      case "input.requested":
      case "plan.proposed":
        if (!this.settled?.has(event.payload.id)) this.pending.add(event.payload.id);
        break;
      case "approval.updated":
      case "input.resolved":
        this.settle(event.payload.id);
        break;
      case "plan.approved":
      case "plan.rejected":
        if (event.payload.id) this.settle(event.payload.id);
        break;
      default:
        return false;
    }
    return before !== this.waiting;
  }

  /** Interactions found pending when the watch began; true when whether it waits changed. */
  known(ids: readonly string[]): boolean {
    const before = this.waiting;
    for (const id of ids) if (!this.settled?.has(id)) this.pending.add(id);
    this.settled = undefined;
    return before !== this.waiting;
  }

  private settle(id: string): void {
    this.pending.delete(id);
    this.settled?.add(id);
  }
}
