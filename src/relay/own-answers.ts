import type { RelayDialect } from "./relay-dialect.js";
import type { OpenRequest, RequestId } from "./requests.js";

type Message = Record<string, unknown>;

/**
 * What a relay says itself, in its dialect's framing: `"jsonrpc":"2.0"` always (ACP), never
 * (Codex), or as the gateway's latest answer did (Ask, whose gateway may be set to omit it); and
 * the -32012 "gateway unavailable, retry" answers to requests the gateway did not answer.
 */
export class RelayOwnAnswers {
  /** Whether the gateway's answers carry "jsonrpc" (for a dialect that mirrors it). */
  gatewayWritesJsonrpc = true;

  constructor(
    private readonly dialect: RelayDialect,
    /** Writes a line to the client. */
    private readonly write: (line: string) => void,
  ) {}

  framedObject(message: { id?: RequestId | null } & Message): Message {
    const include = this.dialect.jsonrpcMember === "include" || (this.dialect.jsonrpcMember === "mirror" && this.gatewayWritesJsonrpc);
    return include ? { jsonrpc: "2.0", ...message } : message;
  }

  framed(message: { id?: RequestId | null } & Message): string {
    return JSON.stringify(this.framedObject(message));
  }

  /** Answers each group (a batch, or one request) -32012 with `why`, one line per group, and settles its requests. */
  unavailable(groups: OpenRequest[][], why: string): void {
    for (const group of groups) {
      const answers = group.map((request) =>
        this.framedObject({ id: request.id, error: { code: this.dialect.unavailableCode, message: `gateway unavailable, retry: ${why}`, data: { method: request.method } } }),
      );
      this.write(JSON.stringify(group[0]!.batch ? answers : answers[0]));
      for (const request of group) request.settle();
    }
  }

  /** The answer to a line longer than the relay takes; undefined where the dialect answers none (Codex). */
  oversized(maxLineBytes: number): string | undefined {
    if (!this.dialect.answersOversized) return undefined;
    return this.framed({
      id: null,
      error: {
        code: this.dialect.invalidRequestCode,
        message: `Invalid Request: a message of more than ${maxLineBytes} bytes was skipped (the gateway's limit)`,
        data: { limit: maxLineBytes },
      },
    });
  }
}
