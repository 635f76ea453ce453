import { CODEX_ERROR_CODES } from "../../../registry/codex/errors.js";
import { pipePause, type RelayDialect } from "../../../relay/relay-dialect.js";
import { CODEX_OUTBOUND } from "../../../transports/codex-jsonrpc.js";
import { CodexThreadResume } from "./relay-resume.js";

/**
 * What `tau-gateway app-server --remote URL` must know of Codex to relay it to a gateway's `/`
 * WebSocket: its messages never carry `"jsonrpc"`, an oversized line is only logged, the handshake
 * is initialize then initialized, a turn's notifications are read apart from its response, a
 * turn/start the lost link did not answer is sent again with its key, and the threads the client
 * opened are resumed where it was (relay-resume.ts).
 */
export const CODEX_RELAY: RelayDialect = {
  name: "Codex",
  route: "/",
  jsonrpcMember: "omit",
  unavailableCode: CODEX_ERROR_CODES.upstream_unavailable,
  overloadedCode: CODEX_ERROR_CODES.overloaded,
  invalidRequestCode: CODEX_ERROR_CODES.invalid_request,
  // Codex answers nothing without an id (the local app-server logs the line and goes on).
  answersOversized: false,
  handshakeRequest: "initialize",
  handshakeNotifications: ["initialized"],
  withdrawalMethod: "serverRequest/resolved",
  firstRequestId: 0,
  pauseAfterResponseMs: pipePause(CODEX_OUTBOUND),
  rejoins: ["turn/start"],
  rejoinsAnsweredFirst: true,
  withdrawal: (id, params) => {
    const threadId = (params as { threadId?: unknown } | undefined)?.threadId;
    return typeof threadId === "string" ? { method: "serverRequest/resolved", params: { threadId, requestId: id } } : undefined;
  },
  resume: () => new CodexThreadResume(),
};
