import {
  CallToolResultSchema,
  ElicitResultSchema,
  EmptyResultSchema,
  InitializeResultSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCMessageSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
  ServerNotificationSchema,
  ServerRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * The official MCP schema as @modelcontextprotocol/sdk ships it (its zod schemas, at the SDK's
 * newest revision), and the check of every message a server sent against it: what an SDK client
 * accepts is what this accepts.
 */

type ZodLike = { safeParse(value: unknown): { success: boolean; error?: { message: string } } };

/** The official result schema of each client request the gateway answers. */
const RESULT_OF: Record<string, ZodLike> = {
  initialize: InitializeResultSchema,
  ping: EmptyResultSchema,
  "logging/setLevel": EmptyResultSchema,
  "tools/list": ListToolsResultSchema,
  "tools/call": CallToolResultSchema,
  "resources/list": ListResourcesResultSchema,
  "resources/templates/list": ListResourceTemplatesResultSchema,
  "resources/read": ReadResourceResultSchema,
  "resources/subscribe": EmptyResultSchema,
  "resources/unsubscribe": EmptyResultSchema,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Problems of the messages a server sent, each checked as an MCP client takes it: the envelope as
 * a JSON-RPC message, a request or notification as one of the server's, a response by the method
 * of the client's request it answers (`fromClient` are the client's messages), an error as the
 * official error response.
 */
export function serverMessageProblems(fromServer: readonly unknown[], fromClient: readonly unknown[]): string[] {
  const clientRequests = new Map<string, string>();
  for (const m of fromClient) if (isObject(m) && typeof m.method === "string" && "id" in m) clientRequests.set(JSON.stringify(m.id), m.method);
  const problems: string[] = [];
  fromServer.forEach((message, index) => {
    const at = `#${index} ${JSON.stringify(message).slice(0, 300)}`;
    const fail = (what: string, result: { success: boolean; error?: { message: string } }) => {
      if (!result.success) problems.push(`${at}: ${what}: ${result.error?.message.slice(0, 600)}`);
    };
    fail("JSON-RPC message", JSONRPCMessageSchema.safeParse(message));
    if (!isObject(message)) return;
    if (typeof message.method === "string") {
      const body = { method: message.method, ...(message.params === undefined ? {} : { params: message.params }) };
      fail("id" in message ? "server request" : "server notification", ("id" in message ? ServerRequestSchema : ServerNotificationSchema).safeParse(body));
    } else if ("error" in message) {
      fail("error response", JSONRPCErrorResponseSchema.safeParse(message));
    } else {
      const method = clientRequests.get(JSON.stringify(message.id));
      if (!method) return void problems.push(`${at}: answers no request of the client's`);
      const schema = RESULT_OF[method];
      if (!schema) return void problems.push(`${at}: no official result schema listed for ${method}`);
      fail(`result of ${method}`, schema.safeParse(message.result));
    }
  });
  return problems;
}

/** Problems of a client's answers to elicitation/create (for tests that script them). */
export const elicitResultProblem = (value: unknown) => ElicitResultSchema.safeParse(value).error?.message;
