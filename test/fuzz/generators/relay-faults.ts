import fc from "fast-check";

/**
 * Cases for the relay fuzz target: a few prompts sent at once on one session through
 * `stdio --remote`, and network faults between the relay and the gateway, each when the gateway
 * has streamed so many deltas of the session (as an observer on its own port sees them).
 */

export type RelayFault =
  /** Every connection through the proxy reset, both ways. */
  | { kind: "drop" }
  /** The proxy goes down (connections reset, the port refusing) and comes back on the same port. */
  | { kind: "restart" }
  /**
   * Bytes stop (one direction or both) while connections stay open, until the gateway has made
   * `forEvents` events more (or went idle, or the relay's bytes went nowhere); then either
   * delivered late (`hold`) or lost, in which case the connections are reset as a middlebox that
   * lost the flow would leave them.
   */
  | { kind: "blackhole"; only: "fromClient" | "fromTarget" | undefined; hold: boolean; forEvents: number };

export interface FaultStep {
  /** Streamed deltas of the session the gateway has made when the fault strikes (blackholes: at least 1). */
  atDelta: number;
  fault: RelayFault;
}

export interface RelayCase {
  /** The prompts, sent one after the other without waiting (the client marks each with a unique tag). */
  prompts: string[];
  steps: FaultStep[];
}

const word = fc.stringMatching(/^[a-z]{3,8}$/);
const prompt = fc.array(word, { minLength: 8, maxLength: 30 }).map((words) => words.join(" "));

const fault: fc.Arbitrary<RelayFault> = fc.oneof(
  fc.constant({ kind: "drop" as const }),
  fc.constant({ kind: "restart" as const }),
  fc.record({
    kind: fc.constant("blackhole" as const),
    only: fc.constantFrom("fromClient" as const, "fromTarget" as const, undefined),
    hold: fc.boolean(),
    forEvents: fc.integer({ min: 1, max: 6 }),
  }),
);

export const relayCases = (): fc.Arbitrary<RelayCase> =>
  fc.record({
    prompts: fc.array(prompt, { minLength: 1, maxLength: 3 }),
    steps: fc
      .array(fc.record({ atDelta: fc.integer({ min: 0, max: 12 }), fault }), { minLength: 1, maxLength: 4 })
      .map((steps) => steps.map((s) => (s.fault.kind === "blackhole" ? { ...s, atDelta: Math.max(1, s.atDelta) } : s)).sort((a, b) => a.atDelta - b.atDelta)),
  });

export function describeRelayCase(value: RelayCase): string {
  const faults = value.steps.map(({ atDelta, fault }) => {
    const what = fault.kind === "blackhole" ? `blackhole ${fault.only ?? "both ways"} ${fault.hold ? "held" : "lost, then reset"} for ${fault.forEvents} events` : fault.kind;
    return `    at delta ${atDelta}: ${what}`;
  });
  return `  prompts (${value.prompts.length}): ${value.prompts.map((p) => JSON.stringify(p.slice(0, 40))).join(", ")}\n  faults:\n${faults.join("\n")}`;
}
