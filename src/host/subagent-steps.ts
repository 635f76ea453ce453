import type { AgentRun } from "../../generated/tau-v18.js";
import { AbortedError } from "./pause.js";
import type { SubagentPlan } from "./scripted-agent.js";
import type { SubagentLauncher } from "./subagents.js";
import { textContent, ToolRunRecorder } from "./tool-run.js";
import type { ToolStepEnvironment } from "./tool-steps.js";

/**
 * The sub-agent directives as the host tools a model would call (spec §7.1's reserved names):
 * `spawn_agent` starts one and returns at once, naming it in its result's `details`
 * (`{agentId}`); before a turn that started sub-agents replies, `wait_for_agents` waits for all
 * of them (`details`: `{agentIds}`) and reports each outcome. An interrupt of the turn cancels
 * the wait, not the sub-agents.
 */

export interface SpawnedAgent {
  readonly agentId: string;
  readonly title: string;
  readonly settled: Promise<AgentRun>;
}

export const SPAWN_AGENT_TOOL = "spawn_agent";
export const WAIT_FOR_AGENTS_TOOL = "wait_for_agents";

export function runSpawnStep(env: ToolStepEnvironment, launcher: SubagentLauncher, plan: SubagentPlan): { summary: string; spawned: SpawnedAgent } {
  const tool = ToolRunRecorder.start(env.state, env.assistant, SPAWN_AGENT_TOOL, { title: plan.title, task: plan.task });
  tool.running();
  const { agentId, settled } = launcher.start(plan);
  const text = `started sub-agent ${plan.title} (${agentId})`;
  tool.finish({ status: "succeeded", content: textContent(text), isError: false, summary: "started", details: { agentId } });
  // A run that rejects (its agent left the snapshot) is reported by the wait, not as an unhandled rejection.
  settled.catch(() => undefined);
  return { summary: `Tool ${SPAWN_AGENT_TOOL} ${text}`, spawned: { agentId, title: plan.title, settled } };
}

export async function runWaitStep(env: ToolStepEnvironment, agents: SpawnedAgent[]): Promise<string> {
  const agentIds = agents.map((a) => a.agentId);
  const tool = ToolRunRecorder.start(env.state, env.assistant, WAIT_FOR_AGENTS_TOOL, { agentIds });
  tool.running();
  const aborted = new Promise<"aborted">((resolve) => {
    if (env.signal.aborted) resolve("aborted");
    env.signal.addEventListener("abort", () => resolve("aborted"), { once: true });
  });
  const outcomes = Promise.all(agents.map((a) => a.settled.then(describe, (error: Error) => `${a.title} failed: ${error.message}`)));
  const result = await Promise.race([outcomes, aborted]);
  if (result === "aborted") {
    tool.finish({ status: "cancelled", content: textContent("the wait was cancelled"), isError: true, error: "cancelled", details: { agentIds } });
    throw new AbortedError();
  }
  const text = result.join("\n");
  tool.finish({ status: "succeeded", content: textContent(text), isError: false, summary: "settled", details: { agentIds } });
  return `Tool ${WAIT_FOR_AGENTS_TOOL} returned: ${result.join("; ")}`;
}

function describe(agent: AgentRun): string {
  switch (agent.run.status) {
    case "succeeded":
      return `${agent.title} succeeded: ${agent.run.response}`;
    case "failed":
      return `${agent.title} failed: ${agent.run.failure.message}`;
    case "interrupted":
      return `${agent.title} was interrupted`;
    case "running":
      return `${agent.title} is still running`;
  }
}
