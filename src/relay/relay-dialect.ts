import { PIPE_TRANSPORT, type OutboundPolicy } from "../transports/outbound-policy.js";
import type { StreamResume } from "./stream-resume.js";

/**
 * What a stdio relay (`acp --remote`, `app-server --remote`, `stdio --remote`, `mcp --remote`) must know of the
 * dialect it carries. The relay passes messages through unchanged; it speaks only when the gateway
 * cannot: to answer a request the link lost, to refuse an oversized line, and to repeat the
 * client's handshake on a new link. What it says then must be in the dialect's own words.
 */
export interface RelayDialect {
  /** The dialect's name in logs. */
  name: string;
  /** The gateway's WebSocket route for it. */
  route: string;
  /**
   * Whether the relay's own messages carry `"jsonrpc":"2.0"`: always (ACP), never (Codex), or as
   * the gateway's latest answer did (Ask: the gateway's --jsonrpc-member decides).
   */
  jsonrpcMember: "include" | "omit" | "mirror";
  /** Code of "the gateway cannot be reached, retry" (-32012 in every dialect). */
  unavailableCode: number;
  /** Code of "a gateway limit was reached, retry later" (-32013 in every dialect): a resume refused so is sent again. */
  overloadedCode: number;
  /** Code of a message the relay skipped as too long. */
  invalidRequestCode: number;
  /** A skipped oversized line is answered (id null, as the local command does) rather than only logged (Codex). */
  answersOversized: boolean;
  /** The request that opens a connection, repeated on every new link once the client made it. */
  handshakeRequest: string;
  /** Notifications that complete the handshake, repeated after it (Codex `initialized`). */
  handshakeNotifications: readonly string[];
  /**
   * How the dialect withdraws a request the gateway asked (an approval) whose connection was lost:
   * the client's answer can no longer reach whoever asked, so its prompt is withdrawn as when
   * another client decides (Codex `serverRequest/resolved`, ACP `$/cancel_request`). Ask has no
   * such message: its `approval.updated` event arrives with the resumed event stream.
   */
  withdrawal?(id: string | number, params: unknown): { method: string; params: Record<string, unknown> } | undefined;
  /** The method of that withdrawal, whose `requestId` the gateway also sends when another client decided. */
  withdrawalMethod?: string;
  /** The first id of the relay's own numbering of the gateway's requests to the client (reverse-requests.ts), as the local command numbers them. */
  firstRequestId: number;
  /**
   * How long what follows a response waits before it is written on the relay's stdout: the pipe's
   * pause where the dialect wants a request's consequences read apart from its response (see
   * spaced-writer.ts); undefined: no pause.
   */
  pauseAfterResponseMs?: number;
  /**
   * Requests the lost link did not answer that are sent again on the new one (after the resumes)
   * instead of being answered -32012: each went with an idempotency key of the relay's (ACP's
   * session/prompt its turn id, src/cli/dialects/acp/relay-resume.ts; Codex's turn/start and Ask's session/send
   * `tauGatewayRequestKey`, src/bridge/request-recall.ts), so the repeat answers as the first did
   * if the gateway had it, and runs only if it never arrived. One in a batch is answered -32012 as
   * any other.
   */
  rejoins?: readonly string[];
  /**
   * While such a request is open on the new link, the gateway's other messages wait for its answer
   * (rejoins.ts): the dialect's client reads a prompt's answer before what it brought about.
   */
  rejoinsAnsweredFirst?: boolean;
  /** What is resumed on a new link besides the handshake (Ask: event subscriptions; Codex and ACP: the sessions the client opened). */
  resume?(): StreamResume;
}

/**
 * What a stdio relay must know of a dialect, each dialect's descriptor builds from its own registry
 * (src/cli/dialects/<dialect>/relay.ts): there is no table of them here.
 */

/** The pause a pipe puts after a response for a dialect whose caused messages are read on their own. */
export function pipePause(policy: OutboundPolicy): number | undefined {
  const release = PIPE_TRANSPORT.ownRead;
  return policy.caused === "own-read" && typeof release === "object" ? release.delayMs : undefined;
}
