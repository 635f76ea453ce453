import type { Activity } from "../../generated/tau-v18.js";
import { AbortedError, pause } from "./pause.js";
import type { SubagentPlan } from "./scripted-agent.js";

/**
 * The scripted run of one sub-agent: what a model-driven sub-agent would report as it works — a
 * tool it used, what it says — and how the run ends. Deterministic: a `/subagent` reads its task
 * and answers `Done: TASK`; a `/subagent-fail` reports its failure as an error notice and fails;
 * a `/subagent-slow` says it is working and works its milliseconds first (an interrupt ends it
 * there). Activities keep Tau's bounds (spec §5.11): short texts are one line of at most 512
 * bytes, a tool's subject at most 4 KiB, an assistant text at most 32 KiB, cut in the middle.
 */

export type SubagentEnding =
  | { status: "succeeded"; response: string }
  | { status: "failed"; message: string }
  | { status: "interrupted" };

export interface SubagentRunEnvironment {
  signal: AbortSignal;
  streamDelayMs: number;
  /** Adds an activity to the run's list (published on the session's activity channel). */
  record(activity: Activity): void;
}

const SHORT_BYTES = 512;
const SUBJECT_BYTES = 4 * 1024;
const ASSISTANT_BYTES = 32 * 1024;

export async function runScriptedSubagent(env: SubagentRunEnvironment, plan: SubagentPlan): Promise<SubagentEnding> {
  try {
    await pause(env.streamDelayMs, env.signal);
    env.record({
      type: "tool",
      toolName: "read",
      outcome: "succeeded",
      presentation: { action: "Read", subject: fitBytes(oneLine(plan.task), SUBJECT_BYTES), subjectWrap: "word", details: [], metadata: [] },
    });
    if (plan.failure !== undefined) {
      await pause(env.streamDelayMs, env.signal);
      env.record({ type: "notice", severity: "error", title: fitBytes(oneLine(plan.failure), SHORT_BYTES) });
      return { status: "failed", message: plan.failure };
    }
    if (plan.workMs > 0) {
      env.record({ type: "assistant", text: fitBytes(`Working on ${plan.title}…`, ASSISTANT_BYTES) });
      await pause(plan.workMs, env.signal);
    }
    await pause(env.streamDelayMs, env.signal);
    const response = `Done: ${plan.task}`;
    env.record({ type: "assistant", text: fitBytes(response, ASSISTANT_BYTES) });
    return { status: "succeeded", response };
  } catch (error) {
    if (error instanceof AbortedError) return { status: "interrupted" };
    throw error;
  }
}

/** One line: line breaks become spaces, and a blank text a placeholder (short texts may not be blank). */
export function oneLine(text: string): string {
  const line = text.replace(/[\r\n\u2028\u2029]+/g, " ").trim();
  return line === "" ? "(empty)" : line;
}

/** `text` cut in the middle with "…" to at most `maxBytes` of UTF-8, as Tau's host fits its activity texts. */
export function fitBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  const chars = Array.from(text);
  const budget = maxBytes - Buffer.byteLength("…", "utf8");
  let head = "";
  let tail = "";
  let used = 0;
  for (let i = 0, j = chars.length - 1; i <= j; ) {
    const front = chars[i]!;
    const cost = Buffer.byteLength(front, "utf8");
    if (used + cost > budget) break;
    head += front;
    used += cost;
    i++;
    if (i > j) break;
    const back = chars[j]!;
    const backCost = Buffer.byteLength(back, "utf8");
    if (used + backCost > budget) break;
    tail = back + tail;
    used += backCost;
    j--;
  }
  return `${head}…${tail}`;
}
