import type { ScenarioRun } from "./codex-run.js";
import type { WireMessage } from "./wire-diff.js";

/**
 * A server may send a notification about a thread or session after the scenario that made it has
 * ended (Codex warns about a thread's model, codex-acp announces a session's commands, a moment
 * later). Such a notification belongs to the scenario that made its subject, not to the one that
 * happened to be running, unless that one wrote about the subject too; otherwise it would count
 * as a difference of a scenario that has nothing to do with it, or shift its id placeholders.
 *
 * `subject` names what a server notification is about (undefined: nothing), `made` what a
 * response created.
 */
export function withLateNotificationsMoved(runs: ScenarioRun[], subject: (m: WireMessage) => string | undefined, made: (m: WireMessage) => string | undefined): ScenarioRun[] {
  const madeIn = new Map<string, number>();
  runs.forEach((run, i) => {
    for (const { direction, message } of run.entries) {
      const id = direction === "in" && !("method" in message) ? made(message) : undefined;
      if (typeof id === "string" && !madeIn.has(id)) madeIn.set(id, i);
    }
  });
  const written = runs.map((run) => JSON.stringify(run.entries.filter((e) => e.direction === "out").map((e) => e.message)));
  /** The scenario a notification of scenario `j` belongs to. */
  const home = (entry: ScenarioRun["entries"][number], j: number): number => {
    if (entry.direction !== "in" || typeof entry.message.method !== "string" || "id" in entry.message) return j;
    const id = subject(entry.message);
    const origin = typeof id === "string" ? madeIn.get(id) : undefined;
    return origin !== undefined && origin < j && !written[j]!.includes(JSON.stringify(id)) ? origin : j;
  };
  const moved = runs.map((run) => ({ ...run, entries: [] as ScenarioRun["entries"] }));
  runs.forEach((run, j) => {
    for (const entry of run.entries) moved[home(entry, j)]!.entries.push(entry);
  });
  return moved;
}
