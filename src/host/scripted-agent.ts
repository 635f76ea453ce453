import type { ModelUsage, Severity } from "../../generated/tau-v18.js";
import { COST_PER_TOKEN } from "./catalog.js";

/**
 * The scripted agent that stands in for a model. A user text is read line by line: a line that
 * starts with one of the directives below is an instruction, every other line is reply text.
 *
 *   /think TEXT            thinking content, streamed before the reply
 *   /bash COMMAND          a `bash` tool call run through the session.exec path, then its result
 *   /tool NAME [JSON]      a call of the client tool NAME with the JSON object as arguments
 *   /fail MESSAGE          the model fails here: outcome failed, nothing after it runs
 *   /length                the reply stops with stopReason "length"
 *   /sleep MS              a pause of MS milliseconds (interruptible)
 *   /notice SEVERITY TEXT  a timeline notice (severity info, warn or error)
 *   /subagent TITLE TASK   a sub-agent (spawn_agent) that works on TASK and succeeds
 *   /subagent-fail TITLE MESSAGE        a sub-agent whose run fails with MESSAGE
 *   /subagent-slow MS TITLE TASK        a sub-agent that works MS milliseconds (interruptible), then succeeds
 *
 * A turn that started sub-agents waits for them (wait_for_agents) before it replies.
 *
 * The reply is "You said: T" for the reply text T, followed by one line per tool call result; a
 * malformed directive fails the turn with a message saying why. Everything is deterministic.
 */

export type ScriptStep =
  | { kind: "think"; text: string }
  | { kind: "bash"; command: string }
  | { kind: "tool"; name: string; args: Record<string, unknown> }
  | { kind: "fail"; message: string }
  | { kind: "length" }
  | { kind: "sleep"; ms: number }
  | { kind: "notice"; severity: Severity; text: string }
  | { kind: "subagent"; plan: SubagentPlan };

/** What a scripted sub-agent does (subagent-run.ts runs it). */
export interface SubagentPlan {
  title: string;
  task: string;
  /** Set: the run fails with this message after its first activity. */
  failure?: string;
  /** How long the run works before it answers (interruptible). */
  workMs: number;
}

export interface Script {
  steps: ScriptStep[];
  /** Non-directive lines, leading and trailing blank lines removed. */
  replyLines: string[];
}

// One separator only: the argument is trimmed anyway, and "[ \t]+(.*)" would try every split of a
// long run of blanks (quadratic on a prompt line that ends in a lone CR).
export const DIRECTIVE = /^\/(think|bash|tool|fail|length|sleep|notice|subagent|subagent-fail|subagent-slow)(?:[ \t](.*))?$/;
const SEVERITIES: readonly Severity[] = ["info", "warn", "error"];
/** Longest accepted /sleep, so a typo cannot park a turn for days. */
export const MAX_SLEEP_MS = 10 * 60 * 1000;
const NOTICE_TITLE_MAX = 512;

export function parseScript(text: string): Script {
  const steps: ScriptStep[] = [];
  const replyLines: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const match = DIRECTIVE.exec(line);
    if (!match) {
      replyLines.push(line);
      continue;
    }
    steps.push(parseDirective(match[1], (match[2] ?? "").trim(), line));
  }
  while (replyLines.length && replyLines[0].trim() === "") replyLines.shift();
  while (replyLines.length && replyLines[replyLines.length - 1].trim() === "") replyLines.pop();
  return { steps, replyLines };
}

function parseDirective(name: string, rest: string, line: string): ScriptStep {
  const invalid = (why: string): ScriptStep => ({ kind: "fail", message: `invalid directive ${JSON.stringify(line)}: ${why}` });
  switch (name) {
    case "think":
      return { kind: "think", text: rest };
    case "bash":
      return rest ? { kind: "bash", command: rest } : invalid("a command is required");
    case "tool": {
      const [toolName, ...json] = rest.split(/\s+/);
      if (!toolName) return invalid("a tool name is required");
      const source = rest.slice(toolName.length).trim();
      if (json.length === 0 || source === "") return { kind: "tool", name: toolName, args: {} };
      try {
        const args: unknown = JSON.parse(source);
        if (typeof args !== "object" || args === null || Array.isArray(args)) return invalid("the arguments must be a JSON object");
        return { kind: "tool", name: toolName, args: args as Record<string, unknown> };
      } catch (err) {
        return invalid(`the arguments are not valid JSON (${(err as Error).message})`);
      }
    }
    case "fail":
      return { kind: "fail", message: rest || "scripted failure" };
    case "length":
      return { kind: "length" };
    case "sleep": {
      if (!/^\d+$/.test(rest)) return invalid("a whole number of milliseconds is required");
      const ms = Number(rest);
      return ms > MAX_SLEEP_MS ? invalid(`at most ${MAX_SLEEP_MS} milliseconds`) : { kind: "sleep", ms };
    }
    case "notice": {
      const [severity, ...words] = rest.split(/\s+/);
      if (!SEVERITIES.includes(severity as Severity)) return invalid("the severity must be info, warn or error");
      const title = rest.slice(severity.length).trim();
      if (!title || words.length === 0) return invalid("a notice text is required");
      return { kind: "notice", severity: severity as Severity, text: title.slice(0, NOTICE_TITLE_MAX) };
    }
    case "subagent":
    case "subagent-fail":
    case "subagent-slow":
      return parseSubagent(name, rest, invalid);
    default:
      return invalid("unknown directive");
  }
}

/** `/subagent TITLE TASK`, `/subagent-fail TITLE MESSAGE`, `/subagent-slow MS TITLE TASK`: the title is one word. */
function parseSubagent(name: string, rest: string, invalid: (why: string) => ScriptStep): ScriptStep {
  let workMs = 0;
  let words = rest;
  if (name === "subagent-slow") {
    const [ms] = rest.split(/\s+/);
    if (!/^\d+$/.test(ms ?? "")) return invalid("a whole number of milliseconds is required first");
    workMs = Number(ms);
    if (workMs > MAX_SLEEP_MS) return invalid(`at most ${MAX_SLEEP_MS} milliseconds`);
    words = rest.slice(ms!.length).trim();
  }
  const [title] = words.split(/\s+/);
  const text = words.slice(title?.length ?? 0).trim();
  if (!title) return invalid("a title is required");
  if (!text) return invalid(name === "subagent-fail" ? "a failure message is required" : "a task is required");
  const plan: SubagentPlan = name === "subagent-fail" ? { title, task: text, failure: text, workMs } : { title, task: text, workMs };
  return { kind: "subagent", plan };
}

/** The final reply: "You said: …" plus one line per tool result, or "Done." when there is neither. */
export function composeReply(replyLines: string[], toolSummaries: string[]): string {
  const parts: string[] = [];
  if (replyLines.length) parts.push(`You said: ${replyLines.join("\n")}`);
  parts.push(...toolSummaries);
  return parts.length ? parts.join("\n") : "Done.";
}

export function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Scripted usage: one token per word, 0.000001 per token. */
export function scriptedUsage(inputTokens: number, outputTokens: number): ModelUsage {
  const input = inputTokens * COST_PER_TOKEN;
  const output = outputTokens * COST_PER_TOKEN;
  return {
    input: inputTokens,
    output: outputTokens,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: inputTokens + outputTokens,
    cost: { input, output, cacheRead: 0, cacheWrite: 0, total: input + output },
  };
}

/** Splits text into pieces of at most `size` characters (code points, so no surrogate is cut). */
export function chunks(text: string, size = 8): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}
