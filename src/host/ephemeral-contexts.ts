import { randomUUID } from "node:crypto";
import type {
  AgentUsage,
  EphemeralAgentTool,
  Reasoning,
  SessionEphemeralCreateParams,
  SessionEphemeralSubmitParams,
  SessionEphemeralSubmitResult,
  ThreadUpdateEvent,
} from "../../generated/tau-v18.js";
import { SCRIPTED_MODEL } from "./catalog.js";
import { AbortedError, pause } from "./pause.js";
import { busy, cancelled, ProtocolError, requestFailed } from "./protocol-error.js";
import { composeReply, countWords, parseScript, scriptedUsage } from "./scripted-agent.js";

interface Thread {
  reasoning: Reasoning;
  /** User messages so far; the scripted agent's input is every word of them. */
  messages: string[];
  costTotal: number;
  running: AbortController | null;
}

interface Context {
  instructions: string;
  tools: EphemeralAgentTool[];
  reasoning: Reasoning;
  threads: Map<string, Thread>;
}

/**
 * Host-owned ephemeral agent contexts of one session (spec §4.6): not persisted, not in the
 * snapshot, outside the mutation queue. Threads of one context run in parallel; the same thread
 * twice is `busy`. The scripted agent answers "You said: …" and honours /sleep and /fail.
 */
export class EphemeralContexts {
  private readonly contexts = new Map<string, Context>();

  constructor(private readonly onThreadUpdate: (event: ThreadUpdateEvent) => void) {}

  create(params: SessionEphemeralCreateParams, sessionReasoning: Reasoning): string {
    const contextId = randomUUID();
    this.contexts.set(contextId, { instructions: params.instructions, tools: [...params.tools], reasoning: params.reasoning ?? sessionReasoning, threads: new Map() });
    return contextId;
  }

  async submit(params: SessionEphemeralSubmitParams): Promise<SessionEphemeralSubmitResult> {
    const context = this.contexts.get(params.contextId);
    // Tau answers an unknown (or closed) context with its own message and no data, not the generic failure.
    if (!context) throw new ProtocolError("internal_error", `unknown ephemeral context '${params.contextId}'`);
    const thread = this.threadFor(context, params);
    if (thread.running) throw busy(`ephemeral thread is already running: ${params.threadId}`);
    if (params.reasoning) thread.reasoning = params.reasoning;
    const controller = new AbortController();
    thread.running = controller;
    try {
      thread.messages.push(params.message);
      const script = parseScript(params.message);
      for (const step of script.steps) {
        if (step.kind === "sleep") await pause(step.ms, controller.signal);
        if (step.kind === "fail") throw new ProtocolError("internal_error", `ephemeral agent failed: ${step.message}`);
      }
      await pause(0, controller.signal);
      const response = composeReply(script.replyLines, []);
      const usage = scriptedUsage(thread.messages.reduce((n, m) => n + countWords(m), 0), countWords(response));
      thread.costTotal += usage.cost.total;
      this.onThreadUpdate({
        type: "ephemeral-agent.thread-update",
        contextId: params.contextId,
        threadId: params.threadId,
        update: { costTotal: thread.costTotal, usage: agentUsage(usage.input, usage.output), lastActivityText: response.split("\n")[0].slice(0, 200) },
      });
      return { threadId: params.threadId, response };
    } catch (err) {
      if (err instanceof AbortedError) throw cancelled("ephemeral thread was interrupted");
      throw err;
    } finally {
      thread.running = null;
    }
  }

  /** Closes a context, interrupting its live threads; false when it was not there. */
  close(contextId: string): boolean {
    const context = this.contexts.get(contextId);
    if (!context) return false;
    this.contexts.delete(contextId);
    for (const thread of context.threads.values()) thread.running?.abort();
    return true;
  }

  closeAll(): void {
    for (const id of [...this.contexts.keys()]) this.close(id);
  }

  /** The thread to run: existing, forked from an idle thread, or new with the context's effort. */
  private threadFor(context: Context, params: SessionEphemeralSubmitParams): Thread {
    const existing = context.threads.get(params.threadId);
    if (params.forkFromThreadId === undefined) {
      if (existing) return existing;
      const thread: Thread = { reasoning: context.reasoning, messages: [], costTotal: 0, running: null };
      context.threads.set(params.threadId, thread);
      return thread;
    }
    if (existing) throw requestFailed(`cannot fork into existing ephemeral thread: ${params.threadId}`);
    const source = context.threads.get(params.forkFromThreadId);
    if (!source) throw requestFailed(`ephemeral thread not found: ${params.forkFromThreadId}`);
    if (source.running) throw busy(`ephemeral thread is running and cannot be forked: ${params.forkFromThreadId}`);
    const fork: Thread = { reasoning: source.reasoning, messages: [...source.messages], costTotal: 0, running: null };
    context.threads.set(params.threadId, fork);
    return fork;
  }
}

function agentUsage(input: number, output: number): AgentUsage {
  return { input, output, cacheRead: 0, cacheWrite: 0, contextWindowUsageTokens: input + output, contextWindow: SCRIPTED_MODEL.contextWindow };
}
