import { TauResponseError } from "../../tau/upstream.js";
import { sessionNotFound } from "../session-error.js";
import type { SessionRecord, SessionsChange, SessionUse } from "../session-registry.js";
import { namesNoSession, noSuchSession, type HostRouter } from "./host-router.js";
import type { TauHostLink } from "./tau-host-link.js";

/**
 * The session records of every Tau host as the dialects see them: one registry (session-registry.ts)
 * per host, each record kept by the registry of the host its session lives on. A session is found
 * on its host through the router; everything else is the registries' own behaviour, unchanged.
 */
export class HostedSessions {
  /** Subscriptions resuming after a cursor: continued exactly, or told that history was lost (for the metrics). */
  readonly resumes = { recovered: 0, reset: 0 };

  constructor(private readonly router: HostRouter) {}

  private get links(): readonly TauHostLink[] {
    return this.router.links;
  }

  /** The record of a session, observing it on its host the first time (no host has it: Tau's not_found). */
  open(sessionId: string, use: SessionUse = {}): Promise<SessionRecord> {
    if (namesNoSession(sessionId)) return Promise.reject(noSuchSession("session.observe", sessionId));
    const known = this.router.knownHost(sessionId);
    if (known) return known.sessions.open(sessionId, use);
    if (this.isClosed(sessionId)) return Promise.reject(sessionNotFound(sessionId));
    return this.router.hostFor(sessionId).then((link) => link.sessions.open(sessionId, use));
  }

  /** An open record the given tenant may see; -32004 otherwise, exactly like an unknown session. */
  async access(sessionId: string, tenant: string | undefined, use: SessionUse = {}): Promise<SessionRecord> {
    if (namesNoSession(sessionId)) throw sessionNotFound(sessionId);
    const known = this.router.knownHost(sessionId);
    if (known) return known.sessions.access(sessionId, tenant, use);
    if (this.isClosed(sessionId)) throw sessionNotFound(sessionId);
    let link: TauHostLink;
    try {
      link = await this.router.hostFor(sessionId);
    } catch (err) {
      if (err instanceof TauResponseError && err.code === "not_found") throw sessionNotFound(sessionId);
      throw err;
    }
    return link.sessions.access(sessionId, tenant, use);
  }

  /** Whether session/close has started (or finished) for this session on any host (read where the closes are kept, as the close steps below are). */
  isClosed(sessionId: string): boolean {
    return this.links.some((link) => link.sessions.closes.has(sessionId));
  }

  beginClose(sessionId: string): boolean {
    return this.holder(sessionId).sessions.closes.begin(sessionId);
  }

  claimClose(sessionId: string): Promise<boolean> {
    return this.holder(sessionId).sessions.closes.claim(sessionId);
  }

  abandonClose(sessionId: string): Promise<void> {
    return this.holder(sessionId).sessions.closes.abandon(sessionId);
  }

  /** Which of `sessionIds` are closed, here or through another replica (every host's sessions share one store): lists leave them out. */
  async closedAmong(sessionIds: readonly string[]): Promise<Set<string>> {
    const [first] = this.links;
    const closed = first ? await first.sessions.closes.closedElsewhere(sessionIds) : new Set<string>();
    for (const sessionId of sessionIds) if (this.isClosed(sessionId)) closed.add(sessionId);
    return closed;
  }

  forget(sessionId: string): void {
    this.holder(sessionId).sessions.forget(sessionId);
    this.router.released(sessionId);
  }

  get(sessionId: string): SessionRecord | undefined {
    for (const link of this.links) {
      const record = link.sessions.get(sessionId);
      if (record) return record;
    }
    return undefined;
  }

  all(): SessionRecord[] {
    return this.links.flatMap((link) => link.sessions.all());
  }

  /** The open records `tenant` may use, over every host (see SessionRegistry.visibleTo). */
  visibleTo(tenant: string | undefined): SessionRecord[] {
    return this.links.flatMap((link) => link.sessions.visibleTo(tenant));
  }

  /** Calls `listener` for every record made or dropped on any host from now on (SessionRegistry.onChange). */
  onChange(listener: (change: SessionsChange) => void): () => void {
    const stops = this.links.map((link) => link.sessions.onChange(listener));
    return () => stops.forEach((stop) => stop());
  }

  /** What records dropped after a close had counted, over every host. */
  get retired(): { eventsEmitted: number; snapshotFetches: number } {
    const total = { eventsEmitted: 0, snapshotFetches: 0 };
    for (const link of this.links) {
      total.eventsEmitted += link.sessions.retired.eventsEmitted;
      total.snapshotFetches += link.sessions.retired.snapshotFetches;
    }
    return total;
  }

  /** The registry that holds (or held) the session: closing steps run where the record is. */
  private holder(sessionId: string): TauHostLink {
    return this.router.knownHost(sessionId) ?? this.links[0]!;
  }
}
