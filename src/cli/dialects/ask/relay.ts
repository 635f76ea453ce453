import { ASK_ERROR_CODES } from "../../../registry/ask/errors.js";
import type { RelayDialect } from "../../../relay/relay-dialect.js";
import { AskSubscriptionResume } from "./relay-resume.js";

/**
 * What `tau-gateway stdio --remote URL` must know of Ask to relay it to a gateway's `/rpc`
 * WebSocket: its own messages carry `"jsonrpc"` as the gateway's answers do, a session/send the
 * lost link did not answer is sent again with its key, and each event subscription is resumed
 * after the last event passed on (relay-resume.ts).
 */
export const ASK_RELAY: RelayDialect = {
  name: "Ask",
  route: "/rpc",
  jsonrpcMember: "mirror",
  unavailableCode: ASK_ERROR_CODES.upstream_unavailable,
  overloadedCode: ASK_ERROR_CODES.overloaded,
  invalidRequestCode: ASK_ERROR_CODES.invalid_request,
  answersOversized: true,
  handshakeRequest: "initialize",
  handshakeNotifications: [],
  // Above the range clients use, as Ask hosts (and the gateway) number them.
  firstRequestId: 10001,
  rejoins: ["session/send"],
  rejoinsAnsweredFirst: true,
  resume: () => new AskSubscriptionResume(),
};
