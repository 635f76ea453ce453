import { opt, type Schema } from "../schema.js";
import { acpObj, arrayOf, boolean, closedStrings, openStrings, orNull, ref, refOrNull, string, tagged } from "./shapes.js";

/**
 * Sessions (protocol §5, §9): the MCP servers a client hands over, the modes and configuration
 * options a session offers, what session/list reports, and how a prompt turn ends.
 */

const mcpRemote = () => acpObj({ name: string(), url: string(), headers: arrayOf(ref("HttpHeader")) });

export const sessionDefinitions: Record<string, Schema> = {
  SessionId: string(),

  // ── MCP servers ──
  McpServer: { anyOf: [tagged("type", "http", "McpServerHttp"), tagged("type", "sse", "McpServerSse"), ref("McpServerStdio")] },
  McpServerHttp: mcpRemote(),
  McpServerSse: mcpRemote(),
  McpServerStdio: acpObj({ name: string(), command: string(), args: arrayOf(string()), env: arrayOf(ref("EnvVariable")) }),
  HttpHeader: acpObj({ name: string(), value: string() }),
  EnvVariable: acpObj({ name: string(), value: string() }),

  // ── Modes ──
  SessionModeState: acpObj({ currentModeId: ref("SessionModeId"), availableModes: arrayOf(ref("SessionMode")) }),
  SessionModeId: string(),
  SessionMode: acpObj({ id: ref("SessionModeId"), name: string(), description: opt(orNull("string")) }),

  // ── Configuration options ──
  SessionConfigOption: acpObj(
    {
      id: ref("SessionConfigId"),
      name: string(),
      description: opt(orNull("string")),
      category: opt(refOrNull("SessionConfigOptionCategory")),
    },
    { oneOf: [tagged("type", "select", "SessionConfigSelect"), tagged("type", "boolean", "SessionConfigBoolean")] },
  ),
  SessionConfigId: string(),
  SessionConfigOptionCategory: openStrings("mode", "model", "model_config", "thought_level"),
  SessionConfigSelect: { type: "object", properties: { currentValue: ref("SessionConfigValueId"), options: ref("SessionConfigSelectOptions") }, required: ["currentValue", "options"] },
  SessionConfigBoolean: { type: "object", properties: { currentValue: boolean() }, required: ["currentValue"] },
  SessionConfigValueId: string(),
  SessionConfigSelectOptions: { anyOf: [arrayOf(ref("SessionConfigSelectOption")), arrayOf(ref("SessionConfigSelectGroup"))] },
  SessionConfigSelectOption: acpObj({ value: ref("SessionConfigValueId"), name: string(), description: opt(orNull("string")) }),
  SessionConfigSelectGroup: acpObj({ group: ref("SessionConfigGroupId"), name: string(), options: arrayOf(ref("SessionConfigSelectOption")) }),
  SessionConfigGroupId: string(),

  // ── Listing ──
  SessionInfo: acpObj({
    sessionId: ref("SessionId"),
    cwd: string(),
    additionalDirectories: opt(arrayOf(string())),
    title: opt(orNull("string")),
    updatedAt: opt(orNull("string")),
  }),

  // ── Prompt turns ──
  StopReason: closedStrings("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"),
};
