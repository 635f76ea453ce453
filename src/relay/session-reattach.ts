import { isObject } from "../shared/unknown-values.js";
import type { StreamResume } from "./stream-resume.js";

/**
 * What a relay repeats on a new link for a dialect whose session updates go to the connections
 * that opened the session, with no cursor to resume them from (Codex threads, ACP sessions): the
 * gateway behind a new link knows nothing of what the old one had opened, so without this the
 * client's sessions would fall silent. Each session the client opened is opened again on the new
 * link, its answer kept from the client; what was sent while the link was down is not repeated.
 */
export interface ReattachRules {
  /** The session a successful request opened on the connection, and what reopening it needs. */
  opened(method: string, params: Record<string, unknown>, result: Record<string, unknown>): { id: string; reopen: Record<string, unknown> } | undefined;
  /** The session a successful request let go of on the connection. */
  closed(method: string, params: Record<string, unknown>): string | undefined;
  /** The request that opens a session again without replaying its history to the client. */
  reopenMethod: string;
}

export class SessionReattach implements StreamResume {
  /** The params that reopen each session the client has open, by session id. */
  private readonly open = new Map<string, Record<string, unknown>>();

  constructor(private readonly rules: ReattachRules) {}

  answered(method: string, params: unknown, result: unknown): void {
    const p = isObject(params) ? params : {};
    const closed = this.rules.closed(method, p);
    if (closed !== undefined) this.open.delete(closed);
    const opened = isObject(result) ? this.rules.opened(method, p, result) : undefined;
    if (opened) this.open.set(opened.id, opened.reopen);
  }

  forwarded(): void {}

  replays(): Array<{ method: string; params: Record<string, unknown> }> {
    return [...this.open.values()].map((params) => ({ method: this.rules.reopenMethod, params }));
  }

  /** A session the gateway no longer has (it went with an embedded host): nothing to reopen on later links. */
  refused(params: Record<string, unknown>): void {
    for (const [id, reopen] of this.open) if (reopen === params) this.open.delete(id);
  }

  /** The same, by the session's id. */
  refusedSession(id: string): void {
    this.open.delete(id);
  }
}
