import type { MethodEntry, NotificationEntry } from "../model.js";
import { literal, opt, type Schema } from "../schema.js";
import { clientRequest, serverRequest } from "../request-entries.js";
import { acpObj, arrayOf, orNull, otherTag, ref, refOrNull, string, tagged } from "./shapes.js";

/**
 * The agent side of ACP v1 as the gateway speaks it: the client's requests and notification it
 * accepts, and the notification and requests it sends the client. Methods of the official schema
 * the gateway does not take part in (file system and terminal requests, logout, session/delete,
 * configuration options, URL elicitation) are not listed: a client calling one gets -32601.
 */

/** The agent's requests are ACP's name for the server's reverse requests. */
const agentRequest = serverRequest;

const sessionId = () => ref("SessionId");
const mcpServers = () => arrayOf(ref("McpServer"));
const directories = () => arrayOf(string());
/** What new, load and resume answer: the session's modes (and configuration options, which the gateway does not offer). */
const sessionState = {
  modes: opt(refOrNull("SessionModeState")),
  configOptions: opt(orNull("array", { items: ref("SessionConfigOption") })),
};
const empty = () => acpObj({});

export const acpMethodEntries: MethodEntry[] = [
  // ── Handshake ──
  {
    ...clientRequest(
      "initialize",
      "Negotiates the protocol version and exchanges capabilities; may be repeated.",
      acpObj({ protocolVersion: ref("ProtocolVersion"), clientCapabilities: opt(ref("ClientCapabilities")), clientInfo: opt(refOrNull("Implementation")) }),
      acpObj({
        protocolVersion: ref("ProtocolVersion"),
        agentCapabilities: opt(ref("AgentCapabilities")),
        authMethods: opt(arrayOf(ref("AuthMethod"))),
        agentInfo: opt(refOrNull("Implementation")),
      }),
    ),
    // Before it, every other request is refused (protocol §1).
    beforeInitialize: true,
  },
  clientRequest("authenticate", "Authenticates with one of the methods initialize advertised.", acpObj({ methodId: ref("AuthMethodId") }), empty()),

  // ── Sessions ──
  clientRequest(
    "session/new",
    "Creates a session rooted at cwd.",
    acpObj({ cwd: string(), additionalDirectories: opt(directories()), mcpServers: mcpServers() }),
    acpObj({ sessionId: sessionId(), ...sessionState }),
  ),
  clientRequest(
    "session/load",
    "Replays a session's conversation as session/update notifications, then answers.",
    acpObj({ mcpServers: mcpServers(), cwd: string(), additionalDirectories: opt(directories()), sessionId: sessionId() }),
    acpObj(sessionState),
  ),
  clientRequest(
    "session/list",
    "Lists sessions, optionally only those rooted at cwd.",
    acpObj({ cwd: opt(orNull("string")), cursor: opt(orNull("string")) }),
    acpObj({ sessions: arrayOf(ref("SessionInfo")), nextCursor: opt(orNull("string")) }),
  ),
  clientRequest(
    "session/resume",
    "Takes up a session without replaying it.",
    acpObj({ sessionId: sessionId(), cwd: string(), additionalDirectories: opt(directories()), mcpServers: opt(mcpServers()) }),
    acpObj(sessionState),
  ),
  clientRequest("session/close", "Cancels the session's work on this connection and lets it go.", acpObj({ sessionId: sessionId() }), empty()),
  clientRequest("session/set_mode", "Switches the session's mode.", acpObj({ sessionId: sessionId(), modeId: ref("SessionModeId") }), empty()),

  // ── Prompt turns ──
  clientRequest(
    "session/prompt",
    "Runs one turn; answered with how it stopped once it has.",
    acpObj({ sessionId: sessionId(), prompt: arrayOf(ref("ContentBlock")) }),
    acpObj({ stopReason: ref("StopReason") }),
  ),

  // ── Asking the client ──
  agentRequest(
    "session/request_permission",
    "Asks the user to allow or reject a tool call.",
    acpObj({ sessionId: sessionId(), toolCall: ref("ToolCallUpdate"), options: arrayOf(ref("PermissionOption")) }),
    acpObj({ outcome: ref("RequestPermissionOutcome") }),
  ),
  agentRequest(
    "elicitation/create",
    "Asks the user to fill in a form (or visit a URL).",
    acpObj(
      { message: string() },
      {
        anyOf: [
          tagged("mode", "form", "ElicitationFormMode"),
          tagged("mode", "url", "ElicitationUrlMode"),
          otherTag("mode", ["form", "url"], { anyOf: [ref("ElicitationSessionScope"), ref("ElicitationRequestScope")], unevaluatedProperties: true }),
        ],
      },
    ),
    acpObj(
      {},
      {
        anyOf: [
          tagged("action", "accept", "ElicitationAcceptAction"),
          { type: "object", properties: { action: literal("decline") }, required: ["action"] },
          { type: "object", properties: { action: literal("cancel") }, required: ["action"] },
          otherTag("action", ["accept", "decline", "cancel"], { additionalProperties: true }),
        ],
      },
    ),
  ),
];

export const acpNotificationEntries: NotificationEntry[] = [
  {
    kind: "notification",
    sender: "client",
    name: "session/cancel",
    description: "Cancels the session's prompt turn; the prompt is answered with stopReason cancelled.",
    params: acpObj({ sessionId: sessionId() }),
  },
  {
    kind: "notification",
    sender: "server",
    name: "session/update",
    description: "Reports what happens in a session: message chunks, tool calls, plan, mode, usage, notices.",
    params: acpObj({ sessionId: sessionId(), update: ref("SessionUpdate") }),
  },
  {
    kind: "notification",
    sender: "server",
    name: "$/cancel_request",
    description:
      "Tells the client that a request of the agent's it has not answered (a permission request or a form) is no longer needed: settled by another client, past its deadline, or its turn ended. The client may close it and still answers it, with a result or -32800.",
    params: acpObj({ requestId: ref("RequestId") }),
  },
];
