import { ACP_ERROR_CODES } from "../../../registry/acp/errors.js";
import type { RelayDialect } from "../../../relay/relay-dialect.js";
import { AcpSessionResume } from "./relay-resume.js";

/**
 * What `tau-gateway acp --remote URL` must know of ACP to relay it to a gateway's `/acp`
 * WebSocket: its messages always carry `"jsonrpc":"2.0"`, a question whose link was lost is
 * withdrawn with `$/cancel_request`, a prompt the lost link did not answer is sent again with its
 * turn id, and the sessions the editor has open are resumed where it was (relay-resume.ts).
 */
export const ACP_RELAY: RelayDialect = {
  name: "ACP",
  route: "/acp",
  jsonrpcMember: "include",
  unavailableCode: ACP_ERROR_CODES.upstream_unavailable,
  overloadedCode: ACP_ERROR_CODES.overloaded,
  invalidRequestCode: ACP_ERROR_CODES.invalid_request,
  answersOversized: true,
  handshakeRequest: "initialize",
  handshakeNotifications: [],
  withdrawal: (id) => ({ method: "$/cancel_request", params: { requestId: id } }),
  withdrawalMethod: "$/cancel_request",
  firstRequestId: 0,
  rejoins: ["session/prompt"],
  resume: () => new AcpSessionResume(),
};
