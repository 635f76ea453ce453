/**
 * Interaction ids of one session: `act_<n>` for approvals, `input_<n>` for user input and
 * `plan_<n>` for plans, each counting from 1 (the shape Ask hosts use for approvals). Ids are
 * never reused, so a late answer can never land on a newer interaction.
 */
export type InteractionIdKind = "approval" | "user_input" | "plan";

const PREFIX: Record<InteractionIdKind, string> = { approval: "act", user_input: "input", plan: "plan" };

export class InteractionIds {
  private readonly counters: Record<InteractionIdKind, number> = { approval: 0, user_input: 0, plan: 0 };

  next(kind: InteractionIdKind): string {
    this.counters[kind] += 1;
    return `${PREFIX[kind]}_${this.counters[kind]}`;
  }
}
