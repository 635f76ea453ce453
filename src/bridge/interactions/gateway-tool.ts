import type { Log } from "../../shared/log.js";
import type { ToolCall, ToolReply } from "./tool-call.js";
import type { PendingInteractions } from "./pending-interactions.js";
import type { ReverseRequester } from "./reverse-requester.js";

/**
 * A client tool the gateway serves: the parameters its arguments must fit (none: whoever runs the
 * tool checks its arguments, as a Codex client does its dynamic tools'), and what a call does.
 */
export interface GatewayTool {
  readonly parameters?: object;
  /** Takes over an acked call whose arguments fit `parameters`; it must end in exactly one answer. */
  start(call: ToolCall, args: unknown): void;
}

/** What a tool's module works with: the session's pending interactions and the ways to answer. */
export interface ToolContext {
  readonly sessionId: string;
  readonly pending: PendingInteractions;
  /** Sends the call's one result to Tau (nothing when it was answered or cancelled already). */
  answer(call: ToolCall, reply: ToolReply): void;
  /** Asks the session's clients directly, where they opted in. */
  readonly reverse: ReverseRequester;
  readonly log?: Log;
}
