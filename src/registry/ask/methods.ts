import type { MethodEntry } from "../model.js";
import { any, arr, bool, describe, int, nonEmpty, nullable, obj, oneOfStrings, opt, ref, REQUEST_KEY_PATTERN, str, type Schema } from "../schema.js";
import { ASK_TOOL_NAMES } from "./types.js";
import { clientRequest } from "../request-entries.js";

/**
 * The client → server methods (seed 002 METHODS), with results as real hosts return them (spec §6)
 * and as the gateway returns them (DESIGN §4.2). Params accept unknown fields, as the hosts do;
 * the fields they do name are checked so a bad one is answered with -32602 naming it.
 */

/** Largest page a client may ask for; keeps one response bounded. */
const MAX_LIMIT = 1000;

const request = clientRequest;

const sessionId = () => ref("SessionId");
const interactionId = () => nonEmpty({ description: "Id from approval.required / input.requested." });
/** -1 reads from the start, as 0 does (Ask hosts accept both). */
const afterSeq = (description: string) => opt(describe(description, int({ min: -1 })));
const limit = (description: string, min = 1) => opt(describe(description, int({ min, max: MAX_LIMIT })));
// Descriptions of reference-valued params sit on the params object: a description beside a $ref
// would make the type generator emit a copy of the referenced type.
const feedback = opt(str({ description: "Gateway extension: feedback passed to the agent with the rejection." }));
const scope = opt(ref("ApprovalScope"));
/** A principal's role in a session (docs/approvals.md#roles). */
const role = () => oneOfStrings(["owner", "controller", "observer"]);
const principal = () => nonEmpty({ description: "A principal: the id of a token of the gateway's tokens file." });
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
    obj(
      {
        workspace: opt(
          nullable(
            obj(
              {
                workspacePath: opt(
                  nullable(
                    nonEmpty({
                      description:
                        "Working directory: absolute, or relative to the host's default working directory (\".\" is that directory); null or absent = the default.",
                    }),
                  ),
                ),
              },
              { description: "The project the session works in." },
            ),
          ),
        ),
        mode: opt(str({ description: "A SessionMode; any other value falls back to the host default (on_request), with a notice event." })),
        model: opt(str({ description: "Model identifier, with or without a provider/ prefix." })),
        tools: opt(
          describe(
            `Tool names to enable: Ask's (${ASK_TOOL_NAMES.join(", ")}), Tau's own, or the gateway's client tools; an unknown name is -32602 "Unknown tool: <name>".`,
            arr(str()),
          ),
        ),
        systemPrompt: opt(str({ description: "System prompt override." })),
      },
      {
        description:
          "model, tools and systemPrompt are what the session asks for: a value the host cannot honour does not stop the session; the result reports the model really used and a notice event (seq 2 on) says what was not applied.",
      },
    ),
    obj({ session: ref("SessionInfo") }),
  ),
  request(
    "session/list",
    "List sessions, most recent first.",
    obj(
      {
        limit: limit("Max sessions (default 20)."),
        cursor: opt(nonEmpty({ description: "nextCursor of the previous page; absent = the first page." })),
      },
      { description: "cursor (gateway extension): continue after the last session of the previous page." },
    ),
    obj(
      {
        sessions: arr(ref("SessionSummary")),
        nextCursor: opt(
          nullable(
            str({
              description:
                "Gateway extension: pass as cursor for the next page; null on the last page. Pages do not shift when sessions are created meanwhile (newer ones sort before the first page).",
            }),
          ),
        ),
      },
      { description: "nextCursor is a gateway extension." },
    ),
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
          "Replay events after this seq (default 0; -1 is the start too); ignored by live, which starts at the newest event.",
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
      afterSeq: afterSeq("Return events after this seq (default 0; -1 is the start too)."),
      limit: limit("Max events to return; 0 = no limit.", 0),
    }),
    obj({
      sessionId: sessionId(),
      events: arr(ref("Event")),
      hasMore: describe(
        "With a positive limit: whether events remain after the last one returned. false with limit 0, null without a limit.",
        nullable(bool()),
      ),
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
        tauGatewayRequestKey: opt(
          str({
            pattern: REQUEST_KEY_PATTERN,
            description:
              "Gateway extension, for `stdio --remote` relays: an idempotency key (a UUID, the turn's id when the message starts or queues one); session/send sent again with the same key within 10 minutes answers as the first did instead of delivering the message again (docs/remote.md).",
          }),
        ),
      },
      {
        description:
          "mode (gateway extension): for a running session, steer delivers at the next model call (status steered), queue at the next turn boundary (status queued). Without mode a running session is steered and the status is queued, the Ask host's word for it.",
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
    "Abort the running turn; it then ends with turn.aborted. Answers aborted:true on an idle session too (nothing to abort).",
    obj({ sessionId: sessionId() }),
    obj({ aborted: bool(), sessionId: sessionId() }),
  ),
  request(
    "session/close",
    "Close the session: its pending interactions are cancelled and its running turn is interrupted (its terminal event, then session.ended, are the last events). Afterwards every method naming it answers -32004 and session/list leaves it out.",
    obj({ sessionId: sessionId() }),
    obj({ closed: bool(), sessionId: sessionId() }),
  ),
  request(
    "session/setRole",
    "Gateway extension: grant a principal (a token id of the tokens file, of the session's tenant) a role in the session — owner, controller (prompt, steer, interrupt, close, answer) or observer (watch only) — or take its granted role away (role null: its default role again). Only the session's owner or an operator token may (-32011 otherwise); without tokens there are no principals and nothing to grant.",
    obj({ sessionId: sessionId(), principal: principal(), role: nullable(role()) }),
    obj({ sessionId: sessionId(), principal: str(), role: describe("The role the principal holds in the session now by creation or grant; null: none (its default role applies).", nullable(role())) }),
  ),
  request(
    "session/roles",
    "Gateway extension: the session's owner and the roles granted in it, and the caller's own role (null without tokens). A principal not listed has its default role (its tokens-file entry's sessionRole, else controller).",
    obj({ sessionId: sessionId() }),
    obj({
      sessionId: sessionId(),
      roles: arr(obj({ principal: str(), role: role() })),
      yourRole: nullable(role()),
    }),
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
    obj({
      approved: describe("true when this answer approved the call; false when it was one vote that did not decide it (vote).", bool()),
      interactionId: str(),
      vote: opt(ref("ApprovalVoteCount")),
    }),
  ),
  request(
    "interaction/reject",
    "Reject a pending approval by id.",
    obj({ sessionId: sessionId(), interactionId: interactionId(), feedback }),
    obj({
      rejected: describe("true when this answer rejected the call; false when it was handed as a vote to the gateway replica holding the call, which decides with it (vote).", bool()),
      interactionId: str(),
      vote: opt(ref("ApprovalVoteCount")),
    }),
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

  {
    kind: "request",
    sender: "client",
    name: "interaction/requestPermission",
    typeName: "interaction/permissionQuery",
    description:
      "Ask hosts answer a client that sends interaction/requestPermission (the reverse request's name) as a query: the approval mode and whether an approval is pending. Not in the canonical method list.",
    params: obj(
      { sessionId: opt(ref("SessionId")) },
      { description: "Any params are accepted; sessionId (gateway extension) names the session to report on, else the host default is reported." },
    ),
    result: obj({
      mode: ref("ApprovalMode"),
      pending: describe("Whether the session has an approval waiting for a decision.", bool()),
    }),
  },

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
    obj({ workspace: ref("WorkspaceState"), settings: ref("WorkspaceSettings") }),
  ),
];
