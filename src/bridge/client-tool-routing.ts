import type { SessionClientToolCallMessage, SessionClientToolCancelMessage } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import type { InteractionAnswer } from "../store/interactions.js";
import { TauResponseError, type TauUpstream } from "../tau/upstream.js";
import type { EventLog } from "./event-log.js";
import { RemoteAsking, type ReverseRequester, type SessionInteractions } from "./interactions/index.js";

export type ClientToolMessage = SessionClientToolCallMessage | SessionClientToolCancelMessage;

/** What the routing needs of a session's record. */
export interface ToolSession {
  readonly sessionId: string;
  readonly hub: { readonly log: Pick<EventLog, "subscribe"> };
  readonly interactions: Pick<SessionInteractions, "onCall" | "onCancel" | "deliver" | "catchUpNumbers" | "cancelAll" | "shared">;
}

/** What the routing needs of the session registry. */
export interface ToolSessions {
  isClosed(sessionId: string): boolean;
  /** The open record. */
  get(sessionId: string): ToolSession | undefined;
  /** The record, open or being opened; undefined when the registry has not started opening it. */
  opening(sessionId: string): Promise<ToolSession> | undefined;
  open(sessionId: string): Promise<ToolSession>;
  all(): ToolSession[];
}

export interface ClientToolRoutingOptions {
  /** The bridge connection (the one advertising the gateway's client tools). */
  upstream: TauUpstream;
  reverse: ReverseRequester;
  log?: Log;
}

/**
 * Tau's client-tool channel of one bridge connection, routed to the sessions' interactions: calls
 * and cancels to the session they name, answers that won in the store to the session they belong
 * to, and with replicas sharing a store the other replicas' interactions to this replica's clients.
 */
export class ClientToolRouting {
  constructor(
    private readonly sessions: ToolSessions,
    private readonly options: ClientToolRoutingOptions,
  ) {}

  /** A call or cancel from the bridge connection, for the session it names. */
  route(message: ClientToolMessage): void {
    const { sessionId } = message;
    if (this.sessions.isClosed(sessionId)) {
      // No new interaction opens in a session being closed or closed (a /tau client's turn may
      // still call our tools there); a cancel still reaches what the closing session has open.
      if (message.type === "session.clientTool.call") this.refuseCall(message);
      else this.sessions.get(sessionId)?.interactions.onCancel(message);
      return;
    }
    // The bridge connection only receives messages for sessions it named; a call for one it has
    // not opened yet (e.g. only listed) still deserves an answer, so open it.
    const target = this.sessions.opening(sessionId) ?? (message.type === "session.clientTool.call" ? this.sessions.open(sessionId) : undefined);
    void target?.then(
      (r) => (message.type === "session.clientTool.call" ? r.interactions.onCall(message) : r.interactions.onCancel(message)),
      () => undefined,
    );
  }

  /**
   * An answer that won in the store, for the session it belongs to (opened here if this replica
   * has not served it yet: it takes the call over). True once Tau has the result or needs none,
   * false when it must be delivered again later.
   */
  deliver(answer: InteractionAnswer): Promise<boolean> {
    const { sessionId } = answer.interaction;
    // An open record first, without waiting: in one process the answer is carried out within the call that decided it.
    const record = this.sessions.get(sessionId);
    if (record) return record.interactions.deliver(answer);
    // Closed here: Tau has been told the session's calls are over.
    if (this.sessions.isClosed(sessionId)) return Promise.resolve(true);
    return this.sessions.open(sessionId).then(
      (r) => r.interactions.deliver(answer),
      // Gone upstream: nobody can take the result any more. Unreachable: try again later.
      (err: unknown) => err instanceof TauResponseError && err.code === "not_found",
    );
  }

  /** This replica now owns the host: the sessions it serves number new interactions after the ones used elsewhere. */
  async catchUpNumbers(): Promise<void> {
    await Promise.all(
      this.sessions.all().map((r) => r.interactions.catchUpNumbers().catch((err: unknown) => this.options.log?.("warn", "reading interaction numbers failed", { sessionId: r.sessionId, error: String(err) }))),
    );
  }

  /** The bridge connection dropped: Tau forgets our client-tool calls, so their interactions end. */
  cancelAll(reason: string): void {
    for (const r of this.sessions.all()) r.interactions.cancelAll(reason);
  }

  /**
   * Replicas sharing a store: interactions the host's owner opens reach this replica as events;
   * its clients are asked about them too (remote-asking.ts). Returns what stops it.
   */
  askRemotely(record: ToolSession, ownsHost: () => boolean): () => void {
    const remote = new RemoteAsking(record.sessionId, this.options.reverse, record.interactions.shared, ownsHost, this.options.log);
    const unsubscribe = record.hub.log.subscribe((event) => remote.onEvent(event));
    return () => {
      unsubscribe();
      remote.close();
    };
  }

  /** A call into a session closed on this gateway: acked and failed, so the turn does not wait for it. */
  private refuseCall(message: SessionClientToolCallMessage): void {
    const { sessionId, callId } = message;
    const { upstream, log } = this.options;
    void upstream
      .request("session.clientTool.ack", { sessionId, callId })
      .then((ack) => {
        if (!ack.accepted) return;
        return upstream.request("session.clientTool.result", { sessionId, callId, ok: false, error: "the session was closed on tau-gateway; its tools no longer answer" });
      })
      .catch((error: unknown) => log?.("debug", "refusing a client-tool call of a closed session failed", { sessionId, callId, error: String(error) }));
  }
}
