import type { Snapshot } from "../../generated/tau-v18.js";
import { historyEntries } from "../bridge/translation/session-history.js";

/** One message of a session's conversation as tau-history shows it. */
export interface TranscriptMessage {
  id: string;
  role: "user" | "assistant";
  text: string;
}

/**
 * A session's conversation read from its snapshot (bridge/translation/session-history.ts, which
 * every dialect's history comes from): each user prompt and each assistant message's text, in
 * order. Thinking and tool calls are left out of the messages; the transcript shows the tool calls.
 */
export function transcriptMessages(snapshot: Snapshot): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  for (const entry of historyEntries(snapshot)) {
    if (entry.kind === "user") messages.push({ id: entry.messageId, role: "user", text: entry.text });
    else if (entry.kind === "text") {
      const last = messages.at(-1);
      if (last?.role === "assistant" && last.id === entry.messageId) last.text += entry.text;
      else messages.push({ id: entry.messageId, role: "assistant", text: entry.text });
    }
  }
  return messages;
}

/** The transcript resource's text (Markdown): the conversation with its tool calls and how each ended. */
export function transcriptText(sessionId: string, snapshot: Snapshot): string {
  const lines = [`# Tau session ${sessionId}`, "", `Working directory: ${snapshot.executionEnvironment.cwd}`, ""];
  for (const entry of historyEntries(snapshot)) {
    switch (entry.kind) {
      case "user":
        lines.push("## User", "", entry.text, "");
        break;
      case "text":
        lines.push("## Assistant", "", entry.text, "");
        break;
      case "tool": {
        const ending = entry.ending ? (entry.ending.isError ? `failed: ${entry.ending.output}` : entry.ending.output) : entry.status;
        lines.push(`### Tool ${entry.name}`, "", "```json", JSON.stringify(entry.args), "```", "", ending, "");
        break;
      }
      case "thinking":
        break;
    }
  }
  return lines.join("\n");
}
