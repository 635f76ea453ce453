import type { ClientToolDefinition, TurnOutcome } from "../../generated/tau-v18.js";
import { AssistantStream } from "./assistant-stream.js";
import type { ClientToolOutcome } from "./client-tool-broker.js";
import { PatchBuilder } from "./patch-builder.js";
import { AbortedError, pause, throwIfAborted } from "./pause.js";
import { composeReply, parseScript } from "./scripted-agent.js";
import type { SessionState } from "./session-state.js";
import { runSpawnStep, runWaitStep, type SpawnedAgent } from "./subagent-steps.js";
import type { SubagentLauncher } from "./subagents.js";
import { runBashStep, runClientToolStep, type ToolStepEnvironment } from "./tool-steps.js";

export interface TurnEnvironment {
  state: SessionState;
  signal: AbortSignal;
  streamDelayMs: number;
  cwd: string;
  env?: Record<string, string>;
  /** Client tools captured when the turn started (spec §7.2). */
  clientTools: ClientToolDefinition[];
  callClientTool(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ClientToolOutcome>;
  /** True when steering is waiting; checked at every safe boundary. */
  steeringWaiting(): boolean;
  /** Starts the session's sub-agents (/subagent directives). */
  subagents: SubagentLauncher;
}

/**
 * Runs one turn of the scripted agent on `text`, producing the deltas a model-driven turn would.
 * Safe boundaries — after a tool call, and after a pause or notice while no message is streaming —
 * are where waiting steering takes over: the turn then ends `completed` (stopReason "toolUse" when
 * it stopped after a tool call) and the steering continuation runs next. Resolves with the turn
 * outcome; an interrupt gives `aborted`; throws only on a host failure.
 */
export async function runScriptedTurn(env: TurnEnvironment, text: string): Promise<TurnOutcome> {
  const script = parseScript(text);
  const assistant = new AssistantStream(env);
  const tools: ToolStepEnvironment = { ...env, assistant };
  const toolSummaries: string[] = [];
  const spawned: SpawnedAgent[] = [];
  let finalStop: "stop" | "length" = "stop";
  try {
    for (const step of script.steps) {
      throwIfAborted(env.signal);
      switch (step.kind) {
        case "think":
          await assistant.stream("thinking", step.text);
          continue;
        case "length":
          finalStop = "length";
          continue;
        case "fail":
          assistant.commit("error", [], step.message);
          return { status: "failed", stopReason: "error", errorMessage: step.message };
        case "bash":
          toolSummaries.push(await runBashStep(tools, step.command));
          break;
        case "tool":
          toolSummaries.push(await runClientToolStep(tools, step.name, step.args));
          break;
        case "sleep":
          await pause(step.ms, env.signal);
          break;
        case "subagent": {
          const { summary, spawned: agent } = runSpawnStep(tools, env.subagents, step.plan);
          toolSummaries.push(summary);
          spawned.push(agent);
          break;
        }
        case "notice":
          env.state.commit(
            { type: "notice" },
            new PatchBuilder(env.state.snapshot).noticeItem({
              kind: "agent.notice",
              version: 1,
              severity: step.severity,
              subject: { type: "session" },
              presentation: { title: step.text },
              data: {},
            }).changes,
          );
          break;
      }
      if (!assistant.open && env.steeringWaiting()) {
        return { status: "completed", stopReason: assistant.lastStopReason === "toolUse" ? "toolUse" : "stop" };
      }
    }
    // Before it answers, the turn waits for the sub-agents it started (as a model calls wait_for_agents).
    if (spawned.length > 0) toolSummaries.push(await runWaitStep(tools, spawned));
    await assistant.stream("text", composeReply(script.replyLines, toolSummaries));
    throwIfAborted(env.signal);
    assistant.commit(finalStop);
    return { status: "completed", stopReason: finalStop };
  } catch (err) {
    if (err instanceof AbortedError) {
      assistant.interrupt("aborted");
      return { status: "aborted", stopReason: "aborted" };
    }
    try {
      assistant.interrupt("error", (err as Error).message);
    } catch {
      // The original failure is the one worth reporting.
    }
    throw err;
  }
}
