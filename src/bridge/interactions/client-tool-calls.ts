import type {
  SessionClientToolAckResult,
  SessionClientToolCallMessage,
  SessionClientToolCancelMessage,
  SessionClientToolResultResult,
} from "../../../generated/tau-v18.js";
import type { Log } from "../../shared/log.js";
import type { TauUpstream } from "../../tau/upstream.js";
import { argumentProblems } from "./argument-schemas.js";
import type { GatewayTool } from "./gateway-tool.js";
import { errorReply, type ToolCall, type ToolReply } from "./tool-call.js";
import { errorText } from "../../shared/unknown-values.js";

/**
 * Tau's side of one session's client-tool channel (spec §7): every `session.clientTool.call` is
 * acked at once, its arguments are checked against the tool's parameters (Tau passes the schema to
 * the model but checks nothing), and the call goes to the tool that serves it. Each call gets
 * exactly one `session.clientTool.result`, except a call Tau cancelled, which gets none.
 */

interface OpenCall extends ToolCall {
  readonly abort: AbortController;
  /** Says, once the call is over here, whether Tau has its result (or needs none): see settled(). */
  readonly over: (taken: boolean) => void;
}

export interface ClientToolCallsOptions {
  sessionId: string;
  /** The bridge connection that advertised the tools (the one Tau sends the calls to). */
  upstream: Pick<TauUpstream, "request">;
  /** The tool serving `toolName`, if the gateway provides one by that name. */
  toolNamed(toolName: string): GatewayTool | undefined;
  /** Tau gave up on a call (`reason` is Tau's): whatever waits for it must end without answering. */
  cancelled(call: ToolCall, reason: string): void;
  /** Runs while each call's ack is on its way, and is waited for before the call goes to its tool; must not reject. */
  prepare?: () => Promise<void>;
  log?: Log;
}

export class ClientToolCalls {
  /** Calls Tau made that have not been answered or cancelled yet, by callId. */
  private readonly calls = new Map<string, OpenCall>();
  /** For every call seen: resolves once it is over here (see settled()). */
  private readonly outcomes = new WeakMap<ToolCall, Promise<boolean>>();

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
    const call = this.track(message, false);
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
    call.over(true);
    this.options.cancelled(call, message.reason);
  }

  /**
   * A call whose interaction another replica opened (and acked) and can no longer serve: its
   * answer is sent from here. Tau has most likely cancelled it with that replica's connection; it
   * then refuses the result, and that is the end of it.
   */
  adopt(message: SessionClientToolCallMessage): ToolCall {
    return this.calls.get(message.callId) ?? this.track(message, true);
  }

  /**
   * Resolves once the call is over here: true when Tau has answered its result (accepted or not:
   * `accepted: false` means the call had ended, and a result is never sent twice) or needs none
   * (cancelled, forgotten), false when the result could not be sent.
   */
  settled(call: ToolCall): Promise<boolean> {
    return this.outcomes.get(call) ?? Promise.resolve(true);
  }

  /** The call's one result. Later attempts (and calls Tau cancelled) send nothing. */
  answer(call: ToolCall, reply: ToolReply): void {
    const open = this.calls.get(call.message.callId);
    if (open !== call) return;
    this.calls.delete(call.message.callId);
    const { sessionId, callId } = call.message;
    const { upstream, log } = this.options;
    upstream.request("session.clientTool.result", { sessionId, callId, ...reply }).then(
      (result) => {
        // Not accepted: the call had ended (cancelled, timed out, answered). Never sent again.
        if (!result.accepted) log?.("info", "Tau did not accept the tool result (the call had ended)", { sessionId, callId });
        open.over(true);
      },
      (error: unknown) => {
        log?.("warn", "session.clientTool.result failed", { sessionId, callId, error: errorText(error) });
        open.over(false);
      },
    );
  }

  /**
   * Forgets the calls no command is running for, so calls still waiting for their ack never turn
   * into interactions. (Running commands finish on their own: their result, or its failure, is
   * still the answer.)
   */
  forgetIdle(): void {
    for (const call of [...this.calls.values()]) {
      if (call.running) continue;
      this.calls.delete(call.message.callId);
      call.over(true);
    }
  }

  private track(message: SessionClientToolCallMessage, adopted: boolean): OpenCall {
    const abort = new AbortController();
    let over!: (taken: boolean) => void;
    const outcome = new Promise<boolean>((resolve) => (over = resolve));
    const call: OpenCall = { message, abort, signal: abort.signal, running: false, over, ...(adopted ? { adopted } : {}) };
    this.calls.set(message.callId, call);
    this.outcomes.set(call, outcome);
    return call;
  }

  private isOpen(call: ToolCall): boolean {
    return this.calls.get(call.message.callId) === call;
  }

  private async start(call: OpenCall): Promise<void> {
    const { sessionId, callId } = call.message;
    const { upstream, log } = this.options;
    // E.g. the session's mode and grants as changed on other replicas: read in parallel with the ack.
    const prepared = this.options.prepare?.();
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
    await prepared;
    if (!this.isOpen(call)) return; // cancelled, or the session ended, while the ack was on its way
    this.dispatch(call);
  }

  private dispatch(call: ToolCall): void {
    const { toolName, arguments: args } = call.message;
    const tool = this.options.toolNamed(toolName);
    if (!tool) return this.answer(call, errorReply(`unknown tool ${JSON.stringify(toolName)}: the gateway does not provide it`));
    const problems = tool.parameters === undefined ? undefined : argumentProblems(tool.parameters, args);
    if (problems !== undefined) return this.answer(call, errorReply(`invalid arguments: ${problems}`));
    tool.start(call, args);
  }

  private forget(call: OpenCall): void {
    if (!this.isOpen(call)) return;
    this.calls.delete(call.message.callId);
    call.over(true);
  }
}
