import type { ToolSchema, ToolsCallParams, ToolsCallResult, ToolsListResult } from "../../../generated/mcp-v2025-11-25.js";
import { argumentProblems } from "../../bridge/interactions/index.js";
import { SessionError } from "../../bridge/session-error.js";
import { TAU_TOOLS, type TauToolName } from "../../registry/mcp/index.js";
import type { Schema } from "../../registry/schema.js";
import { TauResponseError } from "../../tau/upstream.js";
import type { McpMethodContext } from "../context.js";
import { invalidParams, ToolFailure } from "../errors.js";
import { TOOL_HANDLERS } from "../session-tools.js";

/** The tool offered only while there is something to answer. */
const ANSWER_TOOL: TauToolName = "tau-answer";

const BY_NAME: ReadonlyMap<string, (typeof TAU_TOOLS)[number]> = new Map(TAU_TOOLS.map((tool) => [tool.name, tool]));

/**
 * tools/list: the gateway's tools, with their schemas as the registry has them (all in one page).
 * tau-answer is listed while a session the connection works with waits for a decision (an
 * approval, a question, a plan) that its principal may give (not to an observer of the session),
 * and the connection is told when that changes
 * (notifications/tools/list_changed); a call of it is still taken at any time.
 */
export async function listTools({ services, client }: McpMethodContext, params: { cursor?: string }): Promise<ToolsListResult> {
  if (params.cursor !== undefined) throw invalidParams("cursor", "unknown cursor: every tool is listed in one page");
  const answerOffered = await services.watches.answerable(client);
  client.answerOffered = answerOffered;
  return {
    tools: TAU_TOOLS.filter((tool) => answerOffered || tool.name !== ANSWER_TOOL).map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: objectSchema(tool.inputSchema),
      outputSchema: objectSchema(tool.outputSchema),
      annotations: { title: tool.title, readOnlyHint: tool.readOnly, openWorldHint: false },
    })),
  };
}

/**
 * tools/call: an unknown tool is a protocol error (-32602); arguments that do not fit the tool's
 * schema, a session that does not exist for the caller, a busy session and anything Tau refuses are
 * the tool failing — a result with isError and the reason, which the model reads and can act on.
 * A result that succeeded carries its text and the structured content its outputSchema describes.
 */
export async function callTool(ctx: McpMethodContext, params: ToolsCallParams): Promise<ToolsCallResult> {
  const tool = BY_NAME.get(params.name);
  if (!tool) throw invalidParams("name", `unknown tool ${JSON.stringify(params.name)} (tools: ${TAU_TOOLS.map((t) => t.name).join(", ")})`);
  const args = params.arguments ?? {};
  const problems = argumentProblems(tool.inputSchema, args);
  if (problems) return failed(`invalid arguments for ${tool.name}: ${problems}`);
  const progressToken = params._meta?.progressToken;
  try {
    const { text, structured } = await TOOL_HANDLERS[tool.name as TauToolName](ctx, args as never, progressToken);
    return { content: [{ type: "text", text }], structuredContent: structured as ToolsCallResult["structuredContent"] };
  } catch (error) {
    if (error instanceof ToolFailure) return failed(error.message);
    if (error instanceof SessionError) return failed(error.message);
    if (error instanceof TauResponseError) return failed(`${error.method}: ${error.message}`);
    throw error;
  }
}

/** A tool's schema as MCP wants it: a JSON Schema whose type is object (every one of the registry's is). */
function objectSchema(schema: Schema): ToolSchema {
  if (schema.type !== "object") throw new Error("a tool schema must be of type object");
  return { ...schema, type: "object" };
}

/** A failed tool call: no structured content (a client checks that only against successful results). */
const failed = (text: string): ToolsCallResult => ({ content: [{ type: "text", text }], isError: true });
