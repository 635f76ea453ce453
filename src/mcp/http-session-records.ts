import type { Log } from "../shared/log.js";
import type { SharedRecords } from "../store/shared-records.js";

/** What the record of a Streamable HTTP session says: whose it is (another tenant's reads as unknown). */
interface SessionRecord {
  tenant: string | null;
}

const keyOf = (sessionId: string) => `mcp-http:${sessionId}`;

/**
 * Which Streamable HTTP sessions the gateway's replicas serve, in the store they share. A session
 * is served by the replica that started it (the SDK's transport, its streams and its forms are in
 * that process); another replica reached with its id — a balancer that does not route `/mcp` by
 * `Mcp-Session-Id` — answers 404 like for any unknown session, so that the client starts a new one,
 * but says why. The record lives as long as the session is at work within its idle deadline, and
 * is removed when the session ends.
 */
export class McpHttpReplicas {
  /** When each local session's record was last written: it is written again once a quarter of its life has passed. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly records: SharedRecords,
    private readonly idleMs: number,
    private readonly log?: Log,
  ) {}

  /** The local session is at work: its record is written (again, if a quarter of its life passed). */
  active(sessionId: string, tenant: string | undefined): void {
    const now = Date.now();
    const last = this.written.get(sessionId);
    if (last !== undefined && now - last < this.idleMs / 4) return;
    this.written.set(sessionId, now);
    const record: SessionRecord = { tenant: tenant ?? null };
    this.records.set(keyOf(sessionId), JSON.stringify(record), this.idleMs).catch((error: unknown) => {
      this.written.delete(sessionId);
      this.log?.("warn", "recording an MCP session for the other replicas failed", { session: sessionId, error: String(error) });
    });
  }

  ended(sessionId: string): void {
    this.written.delete(sessionId);
    this.records.delete(keyOf(sessionId)).catch((error: unknown) => this.log?.("debug", "removing an MCP session's record failed", { session: sessionId, error: String(error) }));
  }

  /** Whether another replica serves the session for this tenant (a store it cannot reach: it does not know, so no). */
  async servedElsewhere(sessionId: string, tenant: string | undefined): Promise<boolean> {
    let text: string | undefined;
    try {
      text = await this.records.get(keyOf(sessionId));
    } catch {
      return false;
    }
    if (text === undefined) return false;
    try {
      return (JSON.parse(text) as SessionRecord).tenant === (tenant ?? null);
    } catch {
      return false;
    }
  }
}
