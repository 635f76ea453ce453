/**
 * Who may do what in a session, as replicas share it: the principal that created the session (its
 * owner) and the roles granted to other principals since. A principal is a token of the tokens
 * file, named by its id; what a role allows is the bridge's (src/bridge/session-roles.ts).
 */
export type SessionRole = "owner" | "controller" | "observer";

/** Who may decide one interaction: any principal whose role answers, or those named (by token id or role). */
export type Deciders = "any" | { readonly principals: readonly string[]; readonly roles: readonly string[] };

/** A session's roles as stored: its owner (none: created without a principal) and each granted role. */
export interface SessionRoleRecord {
  readonly owner?: string;
  /** Principal → granted role, in no particular order. */
  readonly granted: Readonly<Record<string, SessionRole>>;
}

export interface SessionRoleStore {
  read(sessionId: string): Promise<SessionRoleRecord>;
  /** Records the creator of a new session as its owner (a session has one creator: the first write stands). */
  setOwner(sessionId: string, principal: string): Promise<void>;
  /** Grants `role` to `principal`, or takes its granted role away (`null`). */
  setRole(sessionId: string, principal: string, role: SessionRole | null): Promise<void>;
  /**
   * Calls `listener` after each role granted or revoked in the session through any replica (this
   * one too), and after the store connection came back (changes meanwhile went unheard): what
   * follows the roles reads them again. Resolves with the unsubscribe once listening.
   */
  onChange(sessionId: string, listener: () => void): Promise<() => void>;
}

/** Roles kept in this process: the memory store's, and the bridge's when no store is given. */
export class MemorySessionRoles implements SessionRoleStore {
  private readonly records = new Map<string, { owner?: string; granted: Record<string, SessionRole> }>();
  private readonly listeners = new Map<string, Set<() => void>>();

  async read(sessionId: string): Promise<SessionRoleRecord> {
    const record = this.records.get(sessionId);
    return record ? { ...(record.owner !== undefined ? { owner: record.owner } : {}), granted: { ...record.granted } } : { granted: {} };
  }

  async setOwner(sessionId: string, principal: string): Promise<void> {
    const record = this.recordOf(sessionId);
    record.owner ??= principal;
  }

  async setRole(sessionId: string, principal: string, role: SessionRole | null): Promise<void> {
    const record = this.recordOf(sessionId);
    if (role === null) delete record.granted[principal];
    else record.granted[principal] = role;
    for (const listener of [...(this.listeners.get(sessionId) ?? [])]) listener();
  }

  async onChange(sessionId: string, listener: () => void): Promise<() => void> {
    let set = this.listeners.get(sessionId);
    if (!set) this.listeners.set(sessionId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(sessionId) === set) this.listeners.delete(sessionId);
    };
  }

  private recordOf(sessionId: string) {
    let record = this.records.get(sessionId);
    if (!record) this.records.set(sessionId, (record = { granted: Object.create(null) as Record<string, SessionRole> }));
    return record;
  }
}
