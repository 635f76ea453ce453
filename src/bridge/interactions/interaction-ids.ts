import type { InteractionCounters } from "../../store/interactions.js";

/**
 * Interaction ids of one session: `act_<n>` for approvals, `input_<n>` for user input and
 * `plan_<n>` for plans, each counting from 1 (the shape Ask hosts use for approvals). Ids are
 * never reused, so a late answer can never land on a newer interaction: a replica that takes over
 * a session carries on from the numbers the store says were used.
 */
export type InteractionIdKind = "approval" | "user_input" | "plan";

const PREFIX: Record<InteractionIdKind, string> = { approval: "act", user_input: "input", plan: "plan" };

/** Whether `interactionId` has the shape of an id of `kind` (`plan_3` is a plan's). */
export function isInteractionIdOf(kind: InteractionIdKind, interactionId: string): boolean {
  return new RegExp(`^${PREFIX[kind]}_\\d+$`).test(interactionId);
}

export class InteractionIds {
  private readonly counters: Record<InteractionIdKind, number>;

  constructor(used: InteractionCounters = {}) {
    this.counters = { approval: used.approval ?? 0, user_input: used.user_input ?? 0, plan: used.plan ?? 0 };
  }

  next(kind: InteractionIdKind): string {
    this.counters[kind] += 1;
    return `${PREFIX[kind]}_${this.counters[kind]}`;
  }

  /** Carries on after the numbers another replica used (a session taken over). */
  raise(used: InteractionCounters): void {
    for (const kind of Object.keys(this.counters) as InteractionIdKind[]) this.counters[kind] = Math.max(this.counters[kind], used[kind] ?? 0);
  }

  /** The number in the last id of `kind` handed out. */
  last(kind: InteractionIdKind): number {
    return this.counters[kind];
  }
}
