import type { SessionRecord } from "../bridge/session-registry.js";
import type { AcpClient } from "./client-state.js";
import { modeUpdate } from "./modes.js";
import { SessionChoices } from "./session-choices.js";
import { SessionLink, type SessionLinkServices } from "./session-link.js";

/**
 * Every ACP connection's links to sessions, by connection and by session: a session's
 * interactions go to each of its connections, and what its users chose for the rest of the
 * session is shared by them all.
 */
export class SessionLinks {
  /** The sessions each connection created, loaded or resumed, by id. */
  private readonly byClient = new Map<AcpClient, Map<string, SessionLink>>();
  private readonly bySession = new Map<string, Set<SessionLink>>();
  private readonly choices = new Map<string, SessionChoices>();
  /** Links let go of whose turn is still being cancelled (see close). */
  private readonly leaving = new Set<SessionLink>();
  /** Per session with links: stops telling them of the session's mode changes. */
  private readonly modeWatches = new Map<string, () => void>();

  constructor(private readonly services: Omit<SessionLinkServices, "choices" | "linksOfSession">) {}

  /** The client's link to the session, made (and streaming from now on) if it has none yet. */
  open(client: AcpClient, record: SessionRecord): { link: SessionLink; created: boolean } {
    let ofClient = this.byClient.get(client);
    if (!ofClient) this.byClient.set(client, (ofClient = new Map()));
    const existing = ofClient.get(record.sessionId);
    if (existing) return { link: existing, created: false };
    const { sessionId } = record;
    let choices = this.choices.get(sessionId);
    if (!choices) this.choices.set(sessionId, (choices = new SessionChoices()));
    const link = new SessionLink(client, record, { ...this.services, choices, linksOfSession: () => this.of(sessionId) });
    ofClient.set(sessionId, link);
    let links = this.bySession.get(sessionId);
    if (!links) this.bySession.set(sessionId, (links = new Set()));
    links.add(link);
    if (!this.modeWatches.has(sessionId)) {
      // A mode set by any client of the session (an editor's set_mode, a Codex client's approval
      // policy), on this replica or, with a shared store, another.
      this.modeWatches.set(
        sessionId,
        record.interactions.onModeChange((mode) => {
          const update = modeUpdate(mode);
          for (const other of this.of(sessionId)) other.send(update);
        }),
      );
    }
    return { link, created: true };
  }

  of(sessionId: string): SessionLink[] {
    return [...(this.bySession.get(sessionId) ?? [])];
  }

  /** Every link of a client. */
  ofClient(client: AcpClient): SessionLink[] {
    return [...(this.byClient.get(client)?.values() ?? [])];
  }

  /** The client's link to a session, for the methods that address a session by id. */
  get(client: AcpClient, sessionId: string): SessionLink | undefined {
    return this.byClient.get(client)?.get(sessionId);
  }

  /** Lets go of one link (see SessionLink.detach for `interruptAfterMs`). */
  async close(link: SessionLink, interruptAfterMs?: number): Promise<void> {
    const ofClient = this.byClient.get(link.client);
    if (ofClient?.get(link.sessionId) === link) ofClient.delete(link.sessionId);
    const links = this.bySession.get(link.sessionId);
    links?.delete(link);
    if (links?.size === 0) {
      this.bySession.delete(link.sessionId);
      this.modeWatches.get(link.sessionId)?.();
      this.modeWatches.delete(link.sessionId);
    }
    this.leaving.add(link);
    try {
      await link.detach(interruptAfterMs);
    } finally {
      this.leaving.delete(link);
    }
  }

  /** Shutting down: every link lets go now and its turn is interrupted, those still being cancelled included. */
  async closeAll(): Promise<void> {
    const links = [...this.bySession.values()].flatMap((set) => [...set]);
    await Promise.all([...links.map((link) => this.close(link, 0)), ...[...this.leaving].map((link) => link.detach(0))]);
  }

  /** Lets go of every link of a client (it disconnected); the turns it started run on. */
  async closeClient(client: AcpClient): Promise<void> {
    const links = [...(this.byClient.get(client)?.values() ?? [])];
    this.byClient.delete(client);
    await Promise.all(links.map((link) => this.close(link)));
  }
}
