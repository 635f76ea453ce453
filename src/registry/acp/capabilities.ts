import { opt, type Schema } from "../schema.js";
import { acpObj, arrayOf, boolean, orNull, ref, refOrNull, string, tagged } from "./shapes.js";

/**
 * The handshake's vocabulary (protocol §3–§4): who the peers are, what each can do, and how a
 * client may authenticate. A capability that is omitted (or null) is not supported; an empty
 * object capability is.
 */

/** An object capability with nothing to configure yet. */
const flag = () => acpObj({});

export const capabilityDefinitions: Record<string, Schema> = {
  ProtocolVersion: { type: "integer", minimum: 0, maximum: 65535 },
  Implementation: acpObj({ name: string(), title: opt(orNull("string")), version: string() }),

  // ── What the client can do ──
  ClientCapabilities: acpObj({
    fs: opt(ref("FileSystemCapabilities")),
    terminal: opt(boolean()),
    session: opt(refOrNull("ClientSessionCapabilities")),
    auth: opt(ref("AuthCapabilities")),
    elicitation: opt(refOrNull("ElicitationCapabilities")),
  }),
  FileSystemCapabilities: acpObj({ readTextFile: opt(boolean()), writeTextFile: opt(boolean()) }),
  AuthCapabilities: acpObj({ terminal: opt(boolean()) }),
  ElicitationCapabilities: acpObj({ form: opt(refOrNull("ElicitationFormCapabilities")), url: opt(refOrNull("ElicitationUrlCapabilities")) }),
  ElicitationFormCapabilities: flag(),
  ElicitationUrlCapabilities: flag(),
  ClientSessionCapabilities: acpObj({
    compaction: opt(refOrNull("CompactionCapabilities")),
    configOptions: opt(refOrNull("SessionConfigOptionsCapabilities")),
    notices: opt(refOrNull("NoticeCapabilities")),
  }),
  CompactionCapabilities: { type: "object" },
  NoticeCapabilities: { type: "object" },
  SessionConfigOptionsCapabilities: acpObj({ boolean: opt(refOrNull("BooleanConfigOptionCapabilities")) }),
  BooleanConfigOptionCapabilities: flag(),

  // ── What the agent can do ──
  AgentCapabilities: acpObj({
    loadSession: opt(boolean()),
    promptCapabilities: opt(ref("PromptCapabilities")),
    mcpCapabilities: opt(ref("McpCapabilities")),
    sessionCapabilities: opt(ref("SessionCapabilities")),
    auth: opt(ref("AgentAuthCapabilities")),
  }),
  PromptCapabilities: acpObj({ image: opt(boolean()), audio: opt(boolean()), embeddedContext: opt(boolean()) }),
  McpCapabilities: acpObj({ http: opt(boolean()), sse: opt(boolean()) }),
  SessionCapabilities: acpObj({
    list: opt(refOrNull("SessionListCapabilities")),
    delete: opt(refOrNull("SessionDeleteCapabilities")),
    additionalDirectories: opt(refOrNull("SessionAdditionalDirectoriesCapabilities")),
    resume: opt(refOrNull("SessionResumeCapabilities")),
    close: opt(refOrNull("SessionCloseCapabilities")),
  }),
  SessionListCapabilities: flag(),
  SessionDeleteCapabilities: flag(),
  SessionAdditionalDirectoriesCapabilities: flag(),
  SessionResumeCapabilities: flag(),
  SessionCloseCapabilities: flag(),
  AgentAuthCapabilities: acpObj({ logout: opt(refOrNull("LogoutCapabilities")) }),
  LogoutCapabilities: flag(),

  // ── Authentication ──
  AuthMethod: { anyOf: [tagged("type", "terminal", "AuthMethodTerminal"), ref("AuthMethodAgent")] },
  AuthMethodId: string(),
  AuthMethodAgent: acpObj({ id: ref("AuthMethodId"), name: string(), description: opt(orNull("string")) }),
  AuthMethodTerminal: acpObj({
    id: ref("AuthMethodId"),
    name: string(),
    description: opt(orNull("string")),
    args: opt(arrayOf(string())),
    env: opt({ type: "object", additionalProperties: string() }),
  }),
};
