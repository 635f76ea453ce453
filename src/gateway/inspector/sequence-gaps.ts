import type { Sender } from "../../registry/model.js";
import { isObject } from "../../shared/unknown-values.js";
import type { RecordedDialect } from "../../transports/recording/transcript-lines.js";
import type { ValidationIssue } from "../../validation/issues.js";

/**
 * Gaps in what the gateway sent one connection, where a dialect numbers what it sends:
 * - Ask: each session's `session/event`s carry the log's `seq` (the event stream's SSE ids are
 *   the same numbers). A subscription is never skipped (the gateway's log grows by one per event
 *   and delivery moves the cursor one event at a time), so a seq more than one past the last one
 *   of that session on the connection is events lost on the way. A lower seq is a replay or a log
 *   that began again (new epoch), not a gap. The client's `session/subscribe` starts the session
 *   over (a live subscription starts at the newest seq).
 * - Tau: a `session.delta` patch must continue from the revision the last delta of its session
 *   went to (`fromRevision`); a reset starts the session over, a stale delta (not past the last
 *   revision) is no gap, and the client's `session.observe` or `session.unobserve` starts it over.
 * Codex and ACP number nothing. Not part of `tau-gateway validate`: the Ask protocol lets other
 * hosts skip seqs, and a transcript need not start where its subscription did.
 */
export class SequenceGaps {
  /** Per session: the last seq (Ask) or revision (Tau) sent on the connection. */
  private readonly last = new Map<string, number>();

  constructor(private readonly dialect: RecordedDialect) {}

  /** Follows one message (`direction` undefined: a bare line of a transcript) and names the gap it reveals, if any. */
  observe(direction: Sender | undefined, message: unknown): ValidationIssue | undefined {
    if (!isObject(message)) return undefined;
    if (this.dialect === "ask") return this.ask(direction, message);
    if (this.dialect === "tau") return this.tau(direction, message);
    return undefined;
  }

  private ask(direction: Sender | undefined, message: Record<string, unknown>): ValidationIssue | undefined {
    const params = isObject(message.params) ? message.params : undefined;
    if (!params) return undefined;
    const session = typeof params.sessionId === "string" ? params.sessionId : "";
    if (direction !== "server" && message.method === "session/subscribe" && "id" in message) {
      this.last.delete(session);
      return undefined;
    }
    if (direction === "client" || message.method !== "session/event" || "id" in message || !isObject(params.event)) return undefined;
    const seq = params.event.seq;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq)) return undefined;
    const previous = this.last.get(session);
    this.last.set(session, seq);
    if (previous === undefined || seq <= previous + 1) return undefined;
    const range = seq - previous === 2 ? `seq ${previous + 1}` : `seqs ${previous + 1}–${seq - 1}`;
    return {
      pointer: "/params/event/seq",
      message: `sequence gap: seq ${seq} follows seq ${previous} of session ${JSON.stringify(session)} on this connection; ${range} never sent`,
      keyword: "sequence",
    };
  }

  private tau(direction: Sender | undefined, message: Record<string, unknown>): ValidationIssue | undefined {
    // Deltas name their session at the top, requests in their params.
    const session = text(message.sessionId) ?? (isObject(message.params) ? text(message.params.sessionId) : undefined);
    if (session === undefined) return undefined;
    if (direction !== "server" && message.type === "request" && (message.method === "session.observe" || message.method === "session.unobserve")) {
      this.last.delete(session);
      return undefined;
    }
    if (direction === "client" || message.type !== "session.delta") return undefined;
    const to = message.toRevision;
    if (typeof to !== "number" || !Number.isSafeInteger(to)) return undefined;
    const previous = this.last.get(session);
    const reset = isObject(message.delta) && message.delta.type === "snapshot.reset";
    if (reset || previous === undefined) {
      this.last.set(session, to);
      return undefined;
    }
    // Stale: the client ignores it, and nothing was skipped.
    if (to <= previous) return undefined;
    this.last.set(session, to);
    if (message.fromRevision === previous) return undefined;
    return {
      pointer: "/fromRevision",
      message: `sequence gap: fromRevision ${JSON.stringify(message.fromRevision)} does not continue from revision ${previous}, where the last delta of session ${JSON.stringify(session)} on this connection left it`,
      keyword: "sequence",
    };
  }
}

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
