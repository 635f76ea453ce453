import type { Schema } from "../schema.js";

/**
 * The tools the gateway offers an MCP host: each one's name, what it is for, and the JSON Schema of
 * its arguments and of its structured result. tools/list sends these schemas as they are (self-
 * contained, without references, since a host hands them to its model), tools/call checks the
 * arguments against them, and each is also a definition of the bundle, so generated/ has their
 * TypeScript types (`<Name>Arguments`, `<Name>Output`).
 */

/** Tau's reasoning levels (session.create's `reasoning`). */
export const REASONING_LEVELS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
/** How the session's command tools are gated (the other dialects' approval modes). */
export const APPROVAL_MODE_NAMES = ["on_request", "auto", "never", "plan"] as const;
/** What tau-answer may say to a pending interaction. */
export const ANSWER_ACTIONS = ["approve", "approve_for_session", "reject", "respond", "decline"] as const;
export const TURN_STATUSES = ["completed", "failed", "aborted", "blocked"] as const;

const text = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });
const sessionId = (): Schema => text("The session's id (from tau or tau-sessions).", { minLength: 1 });
const object = (properties: Record<string, Schema>, required: string[], description?: string): Schema => ({
  type: "object",
  ...(description ? { description } : {}),
  properties,
  ...(required.length ? { required } : {}),
});

const usage = object(
  {
    inputTokens: { type: "integer", minimum: 0 },
    outputTokens: { type: "integer", minimum: 0 },
    cost: { type: "number", minimum: 0 },
  },
  [],
  "What the turn used, as far as Tau reported it.",
);

/** What a turn of tau and tau-reply answers. */
const turnOutput = object(
  {
    sessionId: sessionId(),
    turnId: text("The turn's id."),
    status: { type: "string", enum: [...TURN_STATUSES], description: "How the turn ended." },
    stopReason: text("Tau's stop reason (stop, length, toolUse, error, aborted) when it gave one."),
    text: text("The assistant's final reply."),
    error: text("What went wrong, when the turn failed or was blocked."),
    usage,
  },
  ["sessionId", "turnId", "status", "text"],
);

export interface TauToolSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Schema;
  readonly outputSchema: Schema;
  /** The tool only reads (tools/list annotations). */
  readonly readOnly: boolean;
  /** Base of its definitions' names in the bundle. */
  readonly typeName: string;
}

export const TAU_TOOLS = [
  {
    name: "tau",
    title: "Start a Tau session",
    typeName: "TauStart",
    description:
      "Starts a Tau coding-agent session with a prompt and returns its reply once the turn has ended. The reply streams as progress notifications when the call carries a progress token. Continue the session with tau-reply and its sessionId.",
    readOnly: false,
    inputSchema: object(
      {
        prompt: text("What to ask the agent.", { minLength: 1 }),
        cwd: text("Working directory of the session (absolute, or relative to the gateway's default); default: the gateway's."),
        approvalMode: { type: "string", enum: [...APPROVAL_MODE_NAMES], description: "How the session's command tools are gated (default on_request: each call is asked about)." },
        reasoning: { type: "string", enum: [...REASONING_LEVELS], description: "Tau's reasoning level for the session (default: the model's)." },
      },
      ["prompt"],
    ),
    outputSchema: turnOutput,
  },
  {
    name: "tau-reply",
    title: "Continue a Tau session",
    typeName: "TauReply",
    description: "Sends another prompt to an existing Tau session (one started by any client of the gateway) and returns the reply once the turn has ended.",
    readOnly: false,
    inputSchema: object({ sessionId: sessionId(), prompt: text("What to ask the agent.", { minLength: 1 }) }, ["sessionId", "prompt"]),
    outputSchema: turnOutput,
  },
  {
    name: "tau-sessions",
    title: "List Tau sessions",
    typeName: "TauSessions",
    description: "Lists the caller's Tau sessions, most recently active first, optionally only those in one working directory.",
    readOnly: true,
    inputSchema: object({ cwd: text("Only sessions working in this absolute directory.") }, []),
    outputSchema: object(
      {
        sessions: {
          type: "array",
          items: object(
            {
              sessionId: sessionId(),
              cwd: text("The session's working directory."),
              updatedAt: text("When the session last changed (ISO 8601)."),
              running: { type: "boolean", description: "A turn is running now." },
              uri: text("Its transcript as a resource."),
            },
            ["sessionId", "cwd", "updatedAt", "running", "uri"],
          ),
        },
      },
      ["sessions"],
    ),
  },
  {
    name: "tau-history",
    title: "Read a Tau session",
    typeName: "TauHistory",
    description: "Returns a session's conversation so far: each user prompt and assistant reply, oldest first.",
    readOnly: true,
    inputSchema: object({ sessionId: sessionId() }, ["sessionId"]),
    outputSchema: object(
      {
        sessionId: sessionId(),
        running: { type: "boolean", description: "A turn is running now." },
        messages: {
          type: "array",
          items: object({ id: text("The message's id."), role: { type: "string", enum: ["user", "assistant"] }, text: text("Its text.") }, ["id", "role", "text"]),
        },
      },
      ["sessionId", "running", "messages"],
    ),
  },
  {
    name: "tau-interrupt",
    title: "Interrupt a Tau session",
    typeName: "TauInterrupt",
    description: "Interrupts the turn running in a session, whichever client started it.",
    readOnly: false,
    inputSchema: object({ sessionId: sessionId() }, ["sessionId"]),
    outputSchema: object({ sessionId: sessionId(), interrupted: { type: "boolean", description: "A turn was running and was interrupted." } }, ["sessionId", "interrupted"]),
  },
  {
    name: "tau-answer",
    title: "Answer a Tau approval, question or plan",
    typeName: "TauAnswer",
    description:
      "Answers what a session waits for: approve (once or for the session) or reject a command, approve or reject a plan, respond to or decline a question. Without interactionId, the oldest pending one is answered. The first answer from any client wins.",
    readOnly: false,
    inputSchema: object(
      {
        sessionId: sessionId(),
        interactionId: text("The approval, question or plan to answer (default: the oldest pending)."),
        action: { type: "string", enum: [...ANSWER_ACTIONS], description: "approve, approve_for_session or reject an approval or a plan; respond to or decline a question." },
        text: text("The response to a question (respond), or feedback with a rejection."),
      },
      ["sessionId", "action"],
    ),
    outputSchema: object(
      {
        sessionId: sessionId(),
        interactionId: text("What was answered."),
        kind: { type: "string", enum: ["approval", "question", "plan"] },
        action: { type: "string", enum: [...ANSWER_ACTIONS] },
        vote: object(
          {
            approvals: { type: "integer", minimum: 1, description: "Distinct approvers counted so far, this one among them (absent: counted by the gateway replica holding the call, not yet)." },
            needed: { type: "integer", minimum: 1, description: "Distinct approvers the approval needs." },
          },
          ["needed"],
          "Present when the answer was one vote towards an approval that needs several approvers (a policy's count) and did not decide it: the approval is still pending.",
        ),
      },
      ["sessionId", "interactionId", "kind", "action"],
    ),
  },
] as const satisfies readonly TauToolSpec[];

export type TauToolName = (typeof TAU_TOOLS)[number]["name"];

/** Each tool's schemas as definitions of the bundle. */
export const tauToolDefinitions: Record<string, Schema> = Object.fromEntries(
  TAU_TOOLS.flatMap((tool) => [
    [`${tool.typeName}Arguments`, { description: `Arguments of the ${tool.name} tool.`, ...tool.inputSchema }],
    [`${tool.typeName}Output`, { description: `Structured result of the ${tool.name} tool.`, ...tool.outputSchema }],
  ]),
);
