import type { TurnPlanStep } from "../../generated/codex-v2.js";

/**
 * A plan the agent proposed (`submit_plan`, Markdown) as the checklist `turn/plan/updated`
 * carries: each list item a step (`- [x]` marks one done), or the whole plan as one step when it
 * has no list.
 */
export function planSteps(plan: string): TurnPlanStep[] {
  const steps: TurnPlanStep[] = [];
  for (const line of plan.split(/\r?\n/)) {
    const item = /^\s*(?:[-*+]|\d+[.)])\s+(?:\[( |x|X)\]\s+)?(.*\S)\s*$/.exec(line);
    if (item) steps.push({ step: item[2]!, status: item[1]?.toLowerCase() === "x" ? "completed" : "pending" });
  }
  if (steps.length > 0) return steps;
  const text = plan.trim();
  return text ? [{ step: text, status: "pending" }] : [];
}
