import type { Snapshot } from "../../generated/tau-v18.js";
import { messageText, messageThinking } from "../bridge/message-content.js";

/**
 * The ids of the items a Tau message's text becomes: its text the agentMessage item with the
 * message's own id, its thinking the reasoning item beside it. The live stream and the history
 * read from the snapshot name them alike, so a client that resumed a thread mid-message gets the
 * rest of the message as deltas of the item it was given.
 */

export type TextItemType = "agentMessage" | "reasoning";

export function textItemId(messageId: string, type: TextItemType): string {
  return type === "agentMessage" ? messageId : `${messageId}-reasoning`;
}

/** The text item a turn is streaming when a thread is loaded mid-message: its message, its type, and what it holds so far. */
export interface OpenTextItem {
  readonly messageId: string;
  readonly type: TextItemType;
  readonly text: string;
}

/**
 * The item the running turn `turnId` is streaming, as the snapshot has it: its last message, if
 * that is an assistant message still being written (its text, or only its thinking so far) and no
 * tool call has come after its text.
 */
export function openTextItem(snapshot: Snapshot, turnId: string): OpenTextItem | undefined {
  const start = snapshot.messages.findIndex((m) => m.id === turnId);
  const last = snapshot.messages.at(-1);
  if (start < 0 || !last || snapshot.messages.indexOf(last) <= start) return undefined;
  if (last.state !== "draft" || last.message.role !== "assistant") return undefined;
  if (last.message.content.at(-1)?.type === "toolCall") return undefined;
  const text = messageText(last.message);
  if (text) return { messageId: last.id, type: "agentMessage", text };
  const thinking = messageThinking(last.message);
  return thinking ? { messageId: last.id, type: "reasoning", text: thinking } : undefined;
}
