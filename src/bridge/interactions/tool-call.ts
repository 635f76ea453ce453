import type { SessionClientToolCallMessage, SessionClientToolResultParams } from "../../../generated/tau-v18.js";

/** One `session.clientTool.call` from Tau, from its arrival until it is answered or cancelled. */
export interface ToolCall {
  readonly message: SessionClientToolCallMessage;
  /** Aborted when Tau cancels the call: stops a running command. */
  readonly signal: AbortSignal;
  /** An approved command is running for it: the command's result will answer it. */
  running: boolean;
  /** Taken over from another replica that opened its interaction and stopped (its ack was that replica's). */
  readonly adopted?: boolean;
}

/** What a client-tool call ends with: the `session.clientTool.result` params minus the call's ids. */
export type ToolReply = SessionClientToolResultParams extends infer P
  ? P extends SessionClientToolResultParams
    ? Omit<P, "sessionId" | "callId" | "presentation">
    : never
  : never;

export const textReply = (text: string): ToolReply => ({ ok: true, content: [{ type: "text", text }] });
export const errorReply = (error: string): ToolReply => ({ ok: false, error });
