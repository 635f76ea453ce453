import type { MessageRecord, Snapshot, UserMessage } from "../../generated/tau-v18.js";
import { countWords } from "./scripted-agent.js";

/** Read-only helpers over a snapshot's message history. */

export function userText(message: UserMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
}

/** Words of all model-visible user text: the scripted agent's input token count. */
export function conversationInputWords(snapshot: Snapshot): number {
  let words = 0;
  for (const record of snapshot.messages) {
    if (record.modelVisible && record.message.role === "user") words += countWords(userText(record.message));
  }
  return words;
}

export function findMessage(snapshot: Snapshot, id: string): MessageRecord | undefined {
  for (let i = snapshot.messages.length - 1; i >= 0; i--) if (snapshot.messages[i].id === id) return snapshot.messages[i];
  return undefined;
}

export function userMessageRecord(id: string, text: string, timestamp = Date.now()): MessageRecord {
  return { id, state: "committed", modelVisible: true, message: { role: "user", content: text, timestamp } };
}
