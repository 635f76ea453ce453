import { randomUUID } from "node:crypto";
import type { AssistantMessage, SampleMessage, SessionSampleParams, StopReason, TextContent, ThinkingContent, ToolCall } from "../../generated/tau-v18.js";
import { SCRIPTED_MODEL } from "./catalog.js";
import { userText } from "./conversation.js";
import { pause } from "./pause.js";
import { composeReply, countWords, parseScript, scriptedUsage } from "./scripted-agent.js";

/**
 * `session.sample` with the scripted model: the last user message of the supplied context is read
 * as a script. Thinking becomes a thinking block, /bash and /tool become tool calls returned as
 * data (stopReason "toolUse"), /sleep pauses (interruptible), /fail and /length set the stop
 * reason; `options.maxTokens` cuts the reply at that many words. Nothing touches the session.
 */
export async function runScriptedSample(params: SessionSampleParams, signal: AbortSignal): Promise<AssistantMessage> {
  const users = params.context.messages.filter((m): m is Extract<SampleMessage, { role: "user" }> => m.role === "user");
  const last = users[users.length - 1];
  const script = parseScript(last ? userText(last) : "");
  const thinking: ThinkingContent[] = [];
  const toolCalls: ToolCall[] = [];
  let stopReason: StopReason = "stop";
  let errorMessage: string | undefined;
  for (const step of script.steps) {
    if (step.kind === "think" && step.text) thinking.push({ type: "thinking", thinking: step.text });
    else if (step.kind === "bash") toolCalls.push({ type: "toolCall", id: `call_${randomUUID()}`, name: "bash", arguments: { command: step.command } });
    else if (step.kind === "tool") toolCalls.push({ type: "toolCall", id: `call_${randomUUID()}`, name: step.name, arguments: step.args });
    else if (step.kind === "sleep") await pause(step.ms, signal);
    else if (step.kind === "length") stopReason = "length";
    else if (step.kind === "fail") {
      stopReason = "error";
      errorMessage = step.message;
      break;
    }
  }
  await pause(0, signal);
  let reply = errorMessage === undefined && (script.replyLines.length || !toolCalls.length) ? composeReply(script.replyLines, []) : "";
  const maxTokens = params.options.maxTokens;
  if (maxTokens !== undefined && countWords(reply) > maxTokens) {
    reply = reply.split(/\s+/).filter(Boolean).slice(0, maxTokens).join(" ");
    stopReason = "length";
  } else if (stopReason === "stop" && toolCalls.length) {
    stopReason = "toolUse";
  }
  const text: TextContent[] = reply ? [{ type: "text", text: reply }] : [];
  const inputWords = users.reduce((n, m) => n + countWords(userText(m)), 0);
  return {
    role: "assistant",
    content: [...thinking, ...text, ...(stopReason === "error" ? [] : toolCalls)],
    api: SCRIPTED_MODEL.api,
    provider: SCRIPTED_MODEL.provider,
    model: SCRIPTED_MODEL.id,
    usage: scriptedUsage(inputWords, countWords(reply)),
    stopReason,
    ...(errorMessage === undefined ? {} : { errorMessage }),
    timestamp: Date.now(),
  };
}
