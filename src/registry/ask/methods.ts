import type { MethodEntry } from "../model.js";
import { any, arr, bool, describe, int, nonEmpty, nullable, obj, opt, ref, str, type Schema } from "../schema.js";

/**
 * The client → server methods (seed 002 METHODS), with results as real hosts return them (spec §6)
 * and as the gateway returns them (DESIGN §4.2). Params accept unknown fields, as the hosts do;
 * the fields they do name are checked so a bad one is answered with -32602 naming it.
 */

/** Largest page a client may ask for; keeps one response bounded. */
const MAX_LIMIT = 1000;

const request = (name: string, description: string, params: Schema, result: Schema): MethodEntry => ({
  kind: "request",
  sender: "client",
  name,
  description,
  params,
  result,
});

const sessionId = () => ref("SessionId");
const interactionId = () => nonEmpty({ description: "Id from approval.required / input.requested." });
const afterSeq = (description: string) => opt(describe(description, int({ min: 0 })));
const limit = (description: string) => opt(describe(description, int({ min: 1, max: MAX_LIMIT })));
// Descriptions of reference-valued params sit on the params object: a description beside a $ref
// would make the type generator emit a copy of the referenced type.
const feedback = opt(str({ description: "Gateway extension: feedback passed to the agent with the rejection." }));
const scope = opt(ref("ApprovalScope"));
const SCOPE_DOC =
  "scope (gateway extension, also accepted by later Ask hosts): once (default), session or project; an unsupported scope is -32602 and the interaction stays pending.";

export const askMethodEntries: MethodEntry[] = [
  // ── Handshake ──
  request(
    "ping",
    "Liveness check.",
    describe("Ignored.", obj({})),
    obj({
      status: str({ description: "Always ok." }),
      version: str({ description: "Host version." }),
      protocolVersion: str({ description: "Ask protocol version, 1.0." }),
      uptime: opt(describe("Seconds since the host started.", int({ min: 0 }))),
      sessions: opt(describe("Live session count.", int({ min: 0 }))),
    }),
  ),
  request(
    "initialize",
    "Handshake: the host announces its protocol version and capabilities (there is no negotiation).",
    obj({
      client: opt(ref("ClientInfo")),
      clientName: opt(str({ description: "Older spelling of client.name." })),
      capabilities: opt(
        describe("Client capabilities; reverseRequests opts in to interaction/request* reverse requests.", arr(any())),
      ),
    }),
    obj({
      protocolVersion: str(),
      capabilities: describe("Only what the host really emits.", arr(ref("Capability"), { unique: true })),
      server: ref("ServerInfo"),
    }),
  ),

  // ── Session lifecycle ──
  request(
    "session/create",
    "Create a session in a workspace.",
    obj({
      workspace: opt(
        obj(
          { workspacePath: opt(nonEmpty({ description: "Working directory; the host default when absent." })) },
          { description: "The project the session works in." },
        ),
      ),
      mode: opt(ref("SessionMode")),
      model: opt(str({ description: "Model identifier." })),
      tools: opt(describe("Tool names to enable.", arr(str()))),
      systemPrompt: opt(str({ description: "System prompt override." })),
    }),
    obj({ session: ref("SessionInfo") }),
  ),
  request(
    "session/list",
    "List sessions, most recent first.",
    obj({ limit: limit("Max sessions (default 20).") }),
    obj({ sessions: arr(ref("SessionSummary")) }),
  ),
  request(
    "session/resume",
    "Attach to an existing session (does not subscribe).",
    obj({ sessionId: sessionId() }),
    obj({
      sessionId: sessionId(),
      running: describe("A turn is in progress.", bool()),
      idle: describe("The session is ready for a prompt.", bool()),
      createdAt: str({ description: "ISO 8601 creation time." }),
    }),
  ),
  request(
    "session/subscribe",
    "Subscribe this connection to a session's event stream, with replay.",
    obj(
      {
        sessionId: sessionId(),
        deliveryKind: opt(ref("DeliveryKind")),
        afterSeq: afterSeq(
          "Replay events after this seq (default 0); ignored by live, which starts at the newest event.",
        ),
        includeSnapshot: opt(describe("Return the missed events in the result instead of pushing them.", bool())),
      },
      { description: "deliveryKind defaults to replay." },
    ),
    obj({
      subscription: ref("Subscription"),
      snapshot: opt(describe("Events after afterSeq, when includeSnapshot.", arr(ref("Event")))),
    }),
  ),
  request(
    "session/events",
    "Poll events after a seq; moves no subscription cursor.",
    obj({
      sessionId: sessionId(),
      afterSeq: afterSeq("Return events after this seq (default 0)."),
      limit: limit("Max events to return."),
    }),
    obj({
      sessionId: sessionId(),
      events: arr(ref("Event")),
      hasMore: describe("Whether more events may follow; null when no limit was given.", nullable(bool())),
    }),
  ),
  request(
    "session/send",
    "Prompt an idle session, or inject a message into the running turn.",
    obj(
      {
        sessionId: sessionId(),
        content: nonEmpty({ description: "The message text." }),
        expectedTurnId: opt(str({ description: "Staleness guard: only deliver into this turn." })),
        mode: opt(ref("SendMode")),
      },
      {
        description:
          "mode (gateway extension): for a running session, steer (default) delivers at the next model call, queue at the next turn boundary.",
      },
    ),
    obj({
      accepted: describe("false only when status is stale.", bool()),
      status: ref("SendStatus"),
      turnId: opt(nullable(str({ description: "The turn the message starts or applies to." }))),
    }),
  ),
  request(
    "session/abort",
    "Abort the running turn; it then ends with turn.aborted.",
    obj({ sessionId: sessionId() }),
    obj({ aborted: bool(), sessionId: sessionId() }),
  ),
  request(
    "session/close",
    "Close the session, cancelling its pending interactions, and release its resources.",
    obj({ sessionId: sessionId() }),
    obj({ closed: bool(), sessionId: sessionId() }),
  ),

  // ── Artifacts ──
  request(
    "session/artifacts",
    "List the session's tool artifacts (without content).",
    obj({ sessionId: sessionId() }),
    obj({ artifacts: arr(ref("ArtifactRecord")) }),
  ),
  request(
    "session/artifact/get",
    "Fetch one artifact with its content.",
    obj({ sessionId: sessionId(), artifactId: nonEmpty() }),
    obj({ artifact: ref("ArtifactRecord") }),
  ),

  // ── Interactions ──
  request(
    "interaction/list",
    "List a session's pending interactions (plan proposals are not included).",
    obj({ sessionId: sessionId() }),
    obj({ interactions: arr(ref("InteractionRecord")) }),
  ),
  request(
    "interaction/approve",
    "Approve a pending approval by id.",
    obj({ sessionId: sessionId(), interactionId: interactionId(), scope }, { description: SCOPE_DOC }),
    obj({ approved: bool(), interactionId: str() }),
  ),
  request(
    "interaction/reject",
    "Reject a pending approval by id.",
    obj({ sessionId: sessionId(), interactionId: interactionId(), feedback }),
    obj({ rejected: bool(), interactionId: str() }),
  ),
  request(
    "interaction/approve-all",
    "Approve every pending approval of the session.",
    obj({ sessionId: sessionId(), scope }, { description: SCOPE_DOC }),
    obj({ approved: describe("Number approved.", int({ min: 0 })) }),
  ),
  request(
    "interaction/reject-all",
    "Reject every pending approval of the session.",
    obj({ sessionId: sessionId(), feedback }),
    obj({ rejected: describe("Number rejected.", int({ min: 0 })) }),
  ),
  request(
    "interaction/respond",
    "Answer a pending user_input interaction by id.",
    obj({ sessionId: sessionId(), interactionId: interactionId(), response: str({ description: "The answer text." }) }),
    obj({ responded: bool(), interactionId: str() }),
  ),

  // ── Plan mode ──
  request(
    "plan/approve",
    "Approve the session's pending plan proposal.",
    obj({ sessionId: sessionId() }),
    obj({ approved: bool() }),
  ),
  request(
    "plan/reject",
    "Reject the session's pending plan proposal; the agent stays in plan mode.",
    obj({ sessionId: sessionId(), feedback }),
    obj({ rejected: bool() }),
  ),

  // ── Workspace ──
  request(
    "workspace/readState",
    "Read a session's workspace (path, name, git branch) and approval mode.",
    obj(
      { sessionId: opt(ref("SessionId")) },
      {
        description:
          "sessionId (gateway extension, also accepted by later Ask hosts): the session whose workspace to read.",
      },
    ),
    obj({ workspace: ref("WorkspaceState"), settings: opt(ref("WorkspaceSettings")) }),
  ),
];
