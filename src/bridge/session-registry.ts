import type { Snapshot } from "../../generated/tau-v18.js";
import type { Log } from "../shared/log.js";
import { TauResponseError, type TauUpstream, type UpstreamServerMessage } from "../tau/upstream.js";
import { sessionNotFound } from "./ask-errors.js";
import { SessionInteractions, type CommandToolConfig, type ReverseRequester } from "./interactions/index.js";
import { sessionMode, sessionTenant } from "./session-attributes.js";
import { SessionHub } from "./session-hub.js";

/** A session the gateway serves: its hub (snapshot, translator, event log) and its interactions. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly hub: SessionHub;
  readonly interactions: SessionInteractions;
  readonly tenant: string | undefined;
  /** Closed with session/close: its log stays readable, nothing else works until it is resumed. */
  closed: boolean;
}

export interface SessionRegistryOptions {
  upstream: TauUpstream;
  retention?: number;
  interactionDeadlineMs: number;
  commandTools: CommandToolConfig[];
  reverse: ReverseRequester;
  log?: Log;
}

/**
 * Owns one record per session the gateway has touched. Opening is memoised, so concurrent
 * requests share one `session.observe`; upstream messages for a session wait for its record and
 * are then handled in arrival order.
 */
export class SessionRegistry {
  private readonly records = new Map<string, Promise<SessionRecord>>();
  private readonly settled = new Map<string, SessionRecord>();

  constructor(private readonly options: SessionRegistryOptions) {}

  /** The record of a session, observing it upstream the first time (Tau not_found → -32004). */
  open(sessionId: string): Promise<SessionRecord> {
    let record = this.records.get(sessionId);
    if (!record) {
      record = this.create(sessionId);
      this.records.set(sessionId, record);
      record.then(
        (r) => this.settled.set(sessionId, r),
        () => this.records.delete(sessionId),
      );
    }
    return record;
  }

  /** An open record the given tenant may see; -32004 otherwise, exactly like an unknown session. */
  async access(sessionId: string, tenant: string | undefined): Promise<SessionRecord> {
    let record: SessionRecord;
    try {
      record = await this.open(sessionId);
    } catch (err) {
      // The same error, word for word, as for another tenant's session: an answer must not tell them apart.
      if (err instanceof TauResponseError && err.code === "not_found") throw sessionNotFound(sessionId);
      throw err;
    }
    if (record.tenant !== tenant) throw sessionNotFound(sessionId);
    return record;
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.settled.get(sessionId);
  }

  all(): SessionRecord[] {
    return [...this.settled.values()];
  }

  /** Routes a message from the bridge connection to the session it names. */
  route(message: UpstreamServerMessage): void {
    const record = this.records.get(message.sessionId);
    // The bridge connection only receives messages for sessions it named; a client-tool call for
    // one it has not opened yet (e.g. only listed) still deserves an answer, so open it.
    const target = record ?? (message.type === "session.clientTool.call" ? this.open(message.sessionId) : undefined);
    if (!target) return;
    void target.then(
      (r) => {
        if (message.type === "session.clientTool.call") r.interactions.onCall(message);
        else if (message.type === "session.clientTool.cancel") r.interactions.onCancel(message);
        else r.hub.handle(message);
      },
      () => undefined,
    );
  }

  /** After the bridge connection came back: every hub observes again and catches up. */
  async resyncAll(): Promise<void> {
    await Promise.all(this.all().map((r) => r.hub.resync().catch((err: unknown) => this.options.log?.("warn", "resync failed", { sessionId: r.sessionId, error: String(err) }))));
  }

  /** The bridge connection dropped: Tau forgets our client-tool calls, so their interactions end. */
  cancelAllInteractions(reason: string): void {
    for (const r of this.all()) r.interactions.cancelAll(reason);
  }

  private async create(sessionId: string): Promise<SessionRecord> {
    const { upstream, retention, log } = this.options;
    const hub = new SessionHub({ sessionId, upstream, retention, log });
    await hub.attach();
    const snapshot = hub.snapshot as Snapshot;
    const interactions = new SessionInteractions({
      sessionId,
      upstream,
      hub,
      mode: sessionMode(snapshot),
      commandTools: this.options.commandTools,
      deadlineMs: this.options.interactionDeadlineMs,
      reverse: this.options.reverse,
      log,
    });
    return { sessionId, hub, interactions, tenant: sessionTenant(snapshot), closed: false };
  }
}
