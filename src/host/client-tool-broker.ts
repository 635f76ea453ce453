import { randomUUID } from "node:crypto";
import type {
  ClientToolDefinition,
  ContentBlock,
  Presentation,
  SessionClientToolAckParams,
  SessionClientToolAckResult,
  SessionClientToolCallMessage,
  SessionClientToolCancelMessage,
  SessionClientToolResultParams,
  SessionClientToolResultResult,
} from "../../generated/tau-v18.js";

/**
 * Tau's client-tool channel on the host side (spec §7): which connection advertises which tools,
 * which of them are attached to which session, and the lifecycle of every call (dispatch → ack →
 * result, or cancel). Every call settles exactly once; whatever ends it first wins and clears the
 * rest. The broker knows nothing about sockets: messages leave through `options.send`.
 */

export type ClientToolOutcome =
  | { status: "succeeded"; content: ContentBlock[]; presentation?: Presentation }
  | { status: "failed"; error: string; prepared: boolean /* false = error before ack (preparation failure) */; presentation?: Presentation }
  | { status: "blocked"; reason: "timeout" }
  | { status: "cancelled"; reason: "aborted" | "timeout" | "client-detached" | "host-failed" };

type CancelReason = SessionClientToolCancelMessage["reason"];

/** What an accepted ack tells the host, so it can update the running tool card. */
export interface ClientToolAcknowledgement {
  sessionId: string;
  agentId: string;
  callId: string;
  toolName: string;
  presentation?: Presentation;
}

export interface ClientToolBrokerOptions {
  ackDeadlineMs: number;
  defaultExecutionDeadlineMs: number;
  hostToolNames: readonly string[];
  send(connectionId: string, message: SessionClientToolCallMessage | SessionClientToolCancelMessage): void;
  /** Optional: told about every accepted ack (with its running-card presentation, if any). */
  onAcknowledged?(ack: ClientToolAcknowledgement): void;
}

export const DEFAULT_ACK_DEADLINE_MS = 5000;
export const DEFAULT_EXECUTION_DEADLINE_MS = 60000;

interface PendingCall {
  callId: string;
  sessionId: string;
  agentId: string;
  toolName: string;
  connectionId: string;
  acknowledged: boolean;
  timers: NodeJS.Timeout[];
  settle(outcome: ClientToolOutcome): void;
}

export class ClientToolBroker {
  /** connectionId → its advertised tools by name (from its first initialize). */
  private readonly registrations = new Map<string, Map<string, ClientToolDefinition>>();
  /** sessionId → attached connections, in attach order. */
  private readonly attachments = new Map<string, Set<string>>();
  private readonly calls = new Map<string, PendingCall>();

  constructor(private readonly options: ClientToolBrokerOptions) {}

  /**
   * Records a connection's advertised tools. Tau only honours the first initialize of a
   * connection, so a later registration for the same connection is ignored.
   */
  register(connectionId: string, tools: ClientToolDefinition[]): void {
    if (this.registrations.has(connectionId)) return;
    const byName = new Map<string, ClientToolDefinition>();
    const reserved = new Set(this.options.hostToolNames);
    for (const tool of tools) {
      if (reserved.has(tool.name)) throw new Error(`client tool "${tool.name}" conflicts with a host tool of the same name`);
      if (byName.has(tool.name)) throw new Error(`client tool "${tool.name}" is advertised more than once`);
      byName.set(tool.name, tool);
    }
    this.registrations.set(connectionId, byName);
  }

  /**
   * Attaches a connection's advertised tools to a session. A connection that advertised nothing
   * yet attaches nothing: tools it advertises later reach the sessions it names afterwards only,
   * as in Tau, where attaching happens when a connection registers a session.
   */
  attach(connectionId: string, sessionId: string): void {
    const own = this.registrations.get(connectionId);
    if (!own) return;
    const attached = this.attachments.get(sessionId) ?? new Set<string>();
    if (attached.has(connectionId)) return;
    for (const other of attached) {
      for (const name of own.keys()) {
        if (this.registrations.get(other)?.has(name)) {
          throw new Error(`client tool "${name}" is already provided by another client attached to session ${sessionId}`);
        }
      }
    }
    attached.add(connectionId);
    this.attachments.set(sessionId, attached);
  }

  detach(connectionId: string, sessionId: string): void {
    this.detachQuietly(connectionId, sessionId);
    for (const call of [...this.calls.values()]) {
      if (call.connectionId === connectionId && call.sessionId === sessionId) this.cancel(call, "client-detached", true);
    }
  }

  /** The connection is gone: its calls are cancelled without telling it, and its tools forgotten. */
  disconnect(connectionId: string): void {
    for (const sessionId of [...this.attachments.keys()]) this.detachQuietly(connectionId, sessionId);
    this.registrations.delete(connectionId);
    for (const call of [...this.calls.values()]) {
      if (call.connectionId === connectionId) this.cancel(call, "client-detached", false);
    }
  }

  toolsFor(sessionId: string): ClientToolDefinition[] {
    const tools: ClientToolDefinition[] = [];
    for (const connectionId of this.attachments.get(sessionId) ?? []) {
      tools.push(...(this.registrations.get(connectionId)?.values() ?? []));
    }
    return tools;
  }

  /**
   * Dispatches one call to the attached connection that advertises `toolName`. A tool no attached
   * client advertises fails at once as a preparation failure (nothing was sent, nothing ran).
   */
  call(sessionId: string, agentId: string, toolName: string, args: unknown, signal?: AbortSignal): Promise<ClientToolOutcome> {
    const owner = this.ownerOf(sessionId, toolName);
    if (!owner) {
      return Promise.resolve({
        status: "failed",
        error: `client tool "${toolName}" is not available in session ${sessionId}: no attached client advertises it`,
        prepared: false,
      });
    }
    if (signal?.aborted) return Promise.resolve({ status: "cancelled", reason: "aborted" });

    return new Promise<ClientToolOutcome>((resolve) => {
      const executionDeadlineMs = owner.tool.executionTimeoutMs ?? this.options.defaultExecutionDeadlineMs;
      const onAbort = () => this.cancel(call, "aborted", true);
      const call: PendingCall = {
        callId: randomUUID(),
        sessionId,
        agentId,
        toolName,
        connectionId: owner.connectionId,
        acknowledged: false,
        timers: [],
        settle: (outcome) => {
          if (this.calls.get(call.callId) !== call) return;
          this.calls.delete(call.callId);
          for (const timer of call.timers) clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(outcome);
        },
      };
      this.calls.set(call.callId, call);

      try {
        this.options.send(owner.connectionId, {
          version: 18,
          type: "session.clientTool.call",
          sessionId,
          agentId,
          callId: call.callId,
          toolName,
          arguments: args,
          ackDeadlineMs: this.options.ackDeadlineMs,
          executionDeadlineMs,
        });
      } catch {
        // The call never reached the client, so there is nothing to cancel on its side.
        call.settle({ status: "cancelled", reason: "host-failed" });
        return;
      }

      // Both deadlines run from dispatch (spec §7.3); the ack timer is moot once acknowledged.
      call.timers.push(
        setTimeout(() => {
          if (!call.acknowledged) this.cancel(call, "timeout", true, { status: "blocked", reason: "timeout" });
        }, this.options.ackDeadlineMs),
        setTimeout(() => this.cancel(call, "timeout", true), executionDeadlineMs),
      );
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  ack(connectionId: string, params: SessionClientToolAckParams): SessionClientToolAckResult {
    const call = this.waitingCall(connectionId, params.sessionId, params.callId);
    if (!call || call.acknowledged) return { accepted: false };
    call.acknowledged = true;
    this.options.onAcknowledged?.({
      sessionId: call.sessionId,
      agentId: call.agentId,
      callId: call.callId,
      toolName: call.toolName,
      ...(params.presentation ? { presentation: params.presentation } : {}),
    });
    return { accepted: true };
  }

  result(connectionId: string, params: SessionClientToolResultParams): SessionClientToolResultResult {
    const call = this.waitingCall(connectionId, params.sessionId, params.callId);
    if (!call) return { accepted: false };
    const presentation = params.presentation ? { presentation: params.presentation } : {};
    if (params.ok) {
      // Content for work that was never acknowledged is refused; the call keeps waiting.
      if (!call.acknowledged) return { accepted: false };
      call.settle({ status: "succeeded", content: params.content, ...presentation });
    } else {
      call.settle({ status: "failed", error: params.error, prepared: call.acknowledged, ...presentation });
    }
    return { accepted: true };
  }

  private ownerOf(sessionId: string, toolName: string): { connectionId: string; tool: ClientToolDefinition } | undefined {
    for (const connectionId of this.attachments.get(sessionId) ?? []) {
      const tool = this.registrations.get(connectionId)?.get(toolName);
      if (tool) return { connectionId, tool };
    }
    return undefined;
  }

  /** The still-open call `callId`, if it belongs to this connection and session. */
  private waitingCall(connectionId: string, sessionId: string, callId: string): PendingCall | undefined {
    const call = this.calls.get(callId);
    return call && call.connectionId === connectionId && call.sessionId === sessionId ? call : undefined;
  }

  private detachQuietly(connectionId: string, sessionId: string): void {
    const attached = this.attachments.get(sessionId);
    if (!attached?.delete(connectionId)) return;
    if (attached.size === 0) this.attachments.delete(sessionId);
  }

  /** Ends a still-open call: tells its client (when it can still hear) and settles the promise. */
  private cancel(
    call: PendingCall,
    reason: CancelReason,
    notify: boolean,
    outcome: ClientToolOutcome = { status: "cancelled", reason },
  ): void {
    if (this.calls.get(call.callId) !== call) return;
    call.settle(outcome);
    if (!notify) return;
    try {
      this.options.send(call.connectionId, { version: 18, type: "session.clientTool.cancel", sessionId: call.sessionId, callId: call.callId, reason });
    } catch {
      // The connection went away meanwhile; the call is settled either way.
    }
  }
}
