import type { MethodEntry, NotificationEntry } from "../model.js";
import { clientRequest, serverRequest } from "../request-entries.js";
import { anyOf, arr, literal, num, obj, opt, record, ref, str, type Schema } from "../schema.js";
import { META } from "./jsonrpc.js";

/**
 * The server side of MCP as the gateway speaks it: the client's requests and notifications it
 * accepts, and the notifications and the one request (elicitation) it sends. What it has no part
 * in (prompts, completions, sampling, roots, tasks) is not listed: a client calling one gets -32601.
 */

/** Params that may carry `_meta` (a progress token on a request) and nothing else. */
const bare = (): Schema => obj({ _meta: opt(ref("RequestMeta")) });
/** A result with nothing to say. */
const empty = (): Schema => obj({ _meta: opt(META) });
const paginated = (): Schema => obj({ cursor: opt(str()), _meta: opt(ref("RequestMeta")) });
const meta = { _meta: opt(META) };

const notification = (sender: "client" | "server", name: string, description: string, params: Schema, typeName?: string): NotificationEntry => ({
  kind: "notification",
  sender,
  name,
  description,
  params,
  ...(typeName ? { typeName } : {}),
});

export const mcpMethodEntries: MethodEntry[] = [
  // ── Lifecycle ──
  {
    ...clientRequest(
      "initialize",
      "Negotiates the protocol revision (the client's if the server supports it, else the server's newest) and exchanges capabilities.",
      obj({ protocolVersion: str(), capabilities: ref("ClientCapabilities"), clientInfo: ref("Implementation"), ...meta }),
      obj({ protocolVersion: str(), capabilities: ref("ServerCapabilities"), serverInfo: ref("Implementation"), instructions: opt(str()), ...meta }),
    ),
    beforeInitialize: true,
  },
  { ...clientRequest("ping", "Checks the server is alive; answered with an empty result.", bare(), empty()), beforeInitialize: true },
  clientRequest("logging/setLevel", "Sets the least severe log level the server sends as notifications/message.", obj({ level: ref("LoggingLevel"), ...meta }), empty()),

  // ── Tools ──
  clientRequest("tools/list", "Lists the tools, all in one page.", paginated(), obj({ tools: arr(ref("Tool")), nextCursor: opt(str()), ...meta })),
  clientRequest(
    "tools/call",
    "Calls a tool; a tool that fails answers a result with isError rather than an error.",
    obj({ name: str(), arguments: opt(record({})), _meta: opt(ref("RequestMeta")) }),
    ref("CallToolResultShape"),
  ),

  // ── Resources ──
  clientRequest("resources/list", "Lists the resources: each session's transcript, all in one page.", paginated(), obj({ resources: arr(ref("Resource")), nextCursor: opt(str()), ...meta })),
  clientRequest(
    "resources/templates/list",
    "Lists the resource templates: the transcript of any session by its id.",
    paginated(),
    obj({ resourceTemplates: arr(ref("ResourceTemplate")), nextCursor: opt(str()), ...meta }),
  ),
  clientRequest(
    "resources/read",
    "Reads a resource: a session's transcript as text.",
    obj({ uri: str(), _meta: opt(ref("RequestMeta")) }),
    obj({ contents: arr(anyOf(ref("TextResourceContents"), ref("BlobResourceContents"))), ...meta }),
  ),
  clientRequest("resources/subscribe", "Asks for notifications/resources/updated whenever the resource changes.", obj({ uri: str(), _meta: opt(ref("RequestMeta")) }), empty()),
  clientRequest("resources/unsubscribe", "Stops the notifications resources/subscribe asked for.", obj({ uri: str(), _meta: opt(ref("RequestMeta")) }), empty()),

  // ── Asking the client ──
  serverRequest(
    "elicitation/create",
    "Asks the user to fill in a form: an approval, a plan or a question of a session the client works with.",
    obj({ mode: opt(literal("form")), message: str(), requestedSchema: ref("ElicitationSchema"), ...meta }),
    obj({ action: ref("ElicitAction"), content: opt(record(ref("ElicitContentValue"))), ...meta }),
  ),
];

const progress = () =>
  obj({ progressToken: ref("ProgressToken"), progress: num(), total: opt(num()), message: opt(str()), ...meta });
const cancelled = () => obj({ requestId: opt(ref("RequestId")), reason: opt(str()), ...meta });

export const mcpNotificationEntries: NotificationEntry[] = [
  { ...notification("client", "notifications/initialized", "The client has taken the initialize result; the session is operating.", obj(meta)), beforeInitialize: true },
  notification("client", "notifications/cancelled", "The client no longer wants the answer to one of its requests; a tool call's turn is interrupted.", cancelled(), "ClientCancelled"),
  notification("client", "notifications/progress", "Progress of a request of the server's (ignored: the gateway asks for none).", progress(), "ClientProgress"),
  notification("client", "notifications/roots/list_changed", "The client's roots changed (ignored: Tau sessions have their own working directories).", obj(meta)),
  notification("server", "notifications/cancelled", "A request of the gateway's (an elicitation) is no longer needed: another client decided, its deadline passed or its turn ended.", cancelled(), "ServerCancelled"),
  notification("server", "notifications/progress", "Progress of a tool call that carried a progress token: the reply so far, as it streams.", progress(), "ServerProgress"),
  notification("server", "notifications/message", "A log message at or above the level logging/setLevel chose.", obj({ level: ref("LoggingLevel"), logger: opt(str()), data: {}, ...meta })),
  notification("server", "notifications/tools/list_changed", "The list of tools changed.", obj(meta)),
  notification("server", "notifications/resources/list_changed", "The list of resources changed: a session was created or came into view.", obj(meta)),
  notification("server", "notifications/resources/updated", "A subscribed resource changed: the session's transcript grew.", obj({ uri: str(), ...meta })),
];
