import type { SessionClientToolResultParams } from "../../../generated/tau-v18.js";

/** What a client-tool call ends with: the `session.clientTool.result` params minus the call's ids. */
export type ToolReply = SessionClientToolResultParams extends infer P
  ? P extends SessionClientToolResultParams
    ? Omit<P, "sessionId" | "callId" | "presentation">
    : never
  : never;

export const textReply = (text: string): ToolReply => ({ ok: true, content: [{ type: "text", text }] });
export const errorReply = (error: string): ToolReply => ({ ok: false, error });
