/**
 * Every Redis key and channel of the store, under one prefix. Keys of one session share the hash
 * tag `{sessionId}` and keys of one host `{hostKey}`, so a Redis Cluster could hold them later.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** The session's events: a stream whose entry ids are `<seq>-0`. */
  log(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:log`;
  }
  /** The session log's epoch and newest seq. */
  meta(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:meta`;
  }
  /** Batch keys already appended (idempotency). */
  idem(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:idem`;
  }
  /** Where each appended batch is published. */
  events(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:events`;
  }
  /** What replicas share about the session besides its log: mode, grants, close (redis-session-settings.ts). */
  settings(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:settings`;
  }
  /** Who may do what in the session: its owner and granted roles (redis-session-roles.ts). */
  roles(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:roles`;
  }
  /** Where a role granted or revoked in the session is announced. */
  rolesChanged(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:roles-changed`;
  }
  /** Where a mode set for the session is announced. */
  settingsChanged(sessionId: string): string {
    return `${this.prefix}{${sessionId}}:settings-changed`;
  }
  /** A prompt's outcome by its idempotency key, shared by the replicas (redis-recalled-outcomes.ts). */
  recall(id: string): string {
    return `${this.prefix}{recall:${id}}`;
  }
  /** Where a recalled prompt's outcome is announced once written. */
  recallSettled(id: string): string {
    return `${this.prefix}{recall:${id}}:settled`;
  }
  /** The host's lease: `<fence>:<replicaId>` with a TTL. */
  lease(hostKey: string): string {
    return `${this.prefix}{${hostKey}}:lease`;
  }
  /** The host's fencing counter. */
  fence(hostKey: string): string {
    return `${this.prefix}{${hostKey}}:fence`;
  }
  /** The host's sessions (a set). */
  sessions(hostKey: string): string {
    return `${this.prefix}{${hostKey}}:sessions`;
  }
  /** Where a session newly touched on the host is announced. */
  announce(hostKey: string): string {
    return `${this.prefix}{${hostKey}}:announce`;
  }
}
