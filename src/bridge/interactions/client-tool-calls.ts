import type {
  SessionClientToolAckResult,
  SessionClientToolCallMessage,
  SessionClientToolCancelMessage,
  SessionClientToolResultResult,
} from "../../../generated/tau-v18.js";
import type { Log } from "../../shared/log.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { argumentProblems } from "./argument-schemas.js";
import { errorText } from "./error-text.js";
import type { GatewayTool } from "./gateway-tool.js";
import type { ToolCall } from "./tool-call.js";
import { errorReply, type ToolReply } from "./tool-reply.js";

/**
 * Tau's side of one session's client-tool channel (spec §7): every `session.clientTool.call` is
 * acked at once, its arguments are checked against the tool's parameters (Tau passes the schema to
 * the model but checks nothing), and the call goes to the tool that serves it. Each call gets
 * exactly one `session.clientTool.result`, except a call Tau cancelled, which gets none.
 */

interface OpenCall extends ToolCall {
  readonly abort: AbortController;
}

export interface ClientToolCallsOptions {
  sessionId: string;
  /** The bridge connection that advertised the tools (the one Tau sends the calls to). */
  upstream: Pick<TauUpstream, "request">;
  /** The tool serving `toolName`, if the gateway provides one by that name. */
  toolNamed(toolName: string): GatewayTool | undefined;
  /** Tau gave up on a call (`reason` is Tau's): whatever waits for it must end without answering. */
  cancelled(call: ToolCall, reason: string): void;
  log?: Log;
}

export class ClientToolCalls {
  /** Calls Tau made that have not been answered or cancelled yet, by callId. */
  private readonly calls = new Map<string, OpenCall>();

  constructor(private readonly options: ClientToolCallsOptions) {}

  onCall(message: SessionClientToolCallMessage): void {
    const { sessionId, log } = this.options;
    if (message.sessionId !== sessionId || this.calls.has(message.callId)) {
      log?.("warn", "client-tool call ignored: wrong session or repeated call id", {
        sessionId,
        callSessionId: message.sessionId,
        callId: message.callId,
      });
      return;
    }
    const abort = new AbortController();
    const call: OpenCall = { message, abort, signal: abort.signal, running: false };
    this.calls.set(message.callId, call);
    this.start(call).catch((error: unknown) => {
      log?.("error", "client-tool call failed", { sessionId, callId: message.callId, error: errorText(error) });
      this.answer(call, errorReply(`the gateway failed to handle the call: ${errorText(error)}`));
    });
  }

  onCancel(message: SessionClientToolCancelMessage): void {
    const call = this.calls.get(message.callId);
    if (!call || message.sessionId !== this.options.sessionId) return;
    // Tau has given up on the call: stop everything and send nothing further (spec §7).
    this.calls.delete(message.callId);
    call.abort.abort();
    this.options.cancelled(call, message.reason);
  }

  /** The call's one result. Later attempts (and calls Tau cancelled) send nothing. */
  answer(call: ToolCall, reply: ToolReply): void {
    if (!this.isOpen(call)) return;
    this.calls.delete(call.message.callId);
    const { sessionId, callId } = call.message;
    const { upstream, log } = this.options;
    upstream.request("session.clientTool.result", { sessionId, callId, ...reply }).then(
      (result) => {
        if (!result.accepted) log?.("info", "Tau did not accept the tool result (the call had ended)", { sessionId, callId });
      },
      (error: unknown) => log?.("warn", "session.clientTool.result failed", { sessionId, callId, error: errorText(error) }),
    );
  }

  /**
   * Forgets the calls no command is running for, so calls still waiting for their ack never turn
   * into interactions. (Running commands finish on their own: their result, or its failure, is
   * still the answer.)
   */
  forgetIdle(): void {
    for (const call of [...this.calls.values()]) {
      if (!call.running) this.calls.delete(call.message.callId);
    }
  }

  private isOpen(call: ToolCall): boolean {
    return this.calls.get(call.message.callId) === call;
  }

  private async start(call: OpenCall): Promise<void> {
    const { sessionId, callId } = call.message;
    const { upstream, log } = this.options;
    let ack: SessionClientToolAckResult;
    try {
      ack = await upstream.request("session.clientTool.ack", { sessionId, callId });
    } catch (error) {
      // Without an accepted ack the call cannot be answered (Tau rejects ok results before it).
      log?.("warn", "session.clientTool.ack failed", { sessionId, callId, error: errorText(error) });
      this.forget(call);
      return;
    }
    if (!ack.accepted) {
      log?.("info", "Tau did not accept the ack; the call is over", { sessionId, callId, toolName: call.message.toolName });
      this.forget(call);
      return;
    }
    if (!this.isOpen(call)) return; // cancelled, or the session ended, while the ack was on its way
    this.dispatch(call);
  }

  private dispatch(call: ToolCall): void {
    const { toolName, arguments: args } = call.message;
    const tool = this.options.toolNamed(toolName);
    if (!tool) return this.answer(call, errorReply(`unknown tool ${JSON.stringify(toolName)}: the gateway does not provide it`));
    const problems = argumentProblems(tool.parameters, args);
    if (problems !== undefined) return this.answer(call, errorReply(`invalid arguments: ${problems}`));
    tool.start(call, args);
  }

  private forget(call: ToolCall): void {
    if (this.isOpen(call)) this.calls.delete(call.message.callId);
  }
}
