import type { EventEntry } from "../model.js";
import { any, arr, bool, describe, int, nonEmpty, nullable, num, obj, oneOfStrings, opt, record, ref, str, type Schema } from "../schema.js";

/**
 * Every event type carried by `session/event` (spec §3), then the event types the gateway adds
 * (DESIGN §4.3). Payloads accept unknown fields; a field is required only where hosts always send
 * it, so transcripts from real Ask hosts validate too.
 */

const event = (name: string, description: string, payload: Schema, extension = false): EventEntry => ({
  kind: "event",
  sender: "server",
  name,
  description,
  payload,
  ...(extension ? { extension: true } : {}),
});

/** An interaction's details with the id a client resolves it by. */
const withInteractionId = (details: string): Schema => ({
  allOf: [obj({ id: str({ description: "Interaction id to pass as interactionId." }) }), ref(details)],
});

/** Why an interaction ended without a client decision (gateway extension). */
const endReason = opt(
  str({
    description: "Gateway extension: why the interaction ended without a decision (call cancelled, deadline passed).",
  }),
);

/** Which message a streamed chunk belongs to (gateway extension). */
const streamedMessageId = opt(
  str({
    description:
      "Gateway extension: the id of the Tau message the chunk belongs to. Chunks of one message share it, and it names the message as the other dialects' history does, so a client that joins mid-message knows which message the rest continues.",
  }),
);

/** Where in its message a streamed chunk begins (gateway extension). */
const streamedOffset = (what: string) =>
  opt(
    describe(
      `Gateway extension: where in the message's ${what} the chunk begins (UTF-16 code units, as JavaScript counts). A client that already has the message up to some point (from history read while the events were on their way) keeps only what lies beyond it.`,
      int({ min: 0 }),
    ),
  );

const askEvents: EventEntry[] = [
  event("session.created", "A session came into existence; always seq 1.", obj({ sessionId: ref("SessionId") })),
  event(
    "session.ended",
    "The session was closed; delivered to subscribers before the session is torn down.",
    obj({ sessionId: ref("SessionId"), reason: opt(str({ description: "Why it ended, e.g. closed." })) }),
  ),
  event(
    "turn.started",
    "A turn (one prompt through to its final answer) began.",
    obj({ turnId: str({ description: "Id of the turn; the gateway uses Tau's user history entry id." }) }),
  ),
  event(
    "turn.completed",
    "A turn finished normally.",
    obj({
      turnId: opt(str({ description: "Id of the turn; the gateway always sends it, older hosts only when known." })),
      response: str({ description: "The final assistant text." }),
      inputTokens: opt(int({ min: 0 })),
      outputTokens: opt(int({ min: 0 })),
      cost: opt(num({ min: 0 })),
    }),
  ),
  event(
    "turn.failed",
    "A turn ended in failure (the gateway also reports Tau's blocked outcome this way).",
    obj({ turnId: str(), error: str({ description: "What went wrong." }) }),
  ),
  event("turn.aborted", "A turn was interrupted, e.g. by session/abort.", obj({ turnId: str() })),
  event("model.streaming", "A chunk of assistant text; empty chunks are never sent.", obj({ delta: str(), messageId: streamedMessageId, offset: streamedOffset("text") })),
  event("model.thinking", "A chunk of the model's reasoning text; empty chunks are never sent.", obj({ delta: str(), messageId: streamedMessageId, offset: streamedOffset("thinking") })),
  event(
    "tool.use",
    "A tool call started executing.",
    obj({
      id: str({ description: "Tool call id." }),
      name: str({ description: "Tool name." }),
      args: opt(describe("Arguments of the call.", record(any()))),
    }),
  ),
  event(
    "tool.delta",
    "Progress output of a running tool call.",
    obj({ id: str(), name: str(), partial: str({ description: "Partial output so far." }) }),
  ),
  event(
    "tool.result",
    "A tool call finished.",
    obj({
      id: str(),
      name: str(),
      output: opt(any("A string or a structured result.")),
      isError: bool(),
      durationMs: opt(nullable(int({ min: 0 }))),
    }),
  ),
  event(
    "approval.required",
    "A gated tool call waits for interaction/approve or interaction/reject.",
    withInteractionId("ApprovalDetails"),
  ),
  event(
    "approval.updated",
    "An approval was resolved, or ended without a decision (the gateway's cancelled and expired).",
    obj(
      {
        id: str(),
        status: describe(
          "approved and rejected come from a client; cancelled (the call was cancelled or the session closed) and expired (deadline passed, so denied) are gateway extensions.",
          oneOfStrings(["approved", "rejected", "cancelled", "expired"]),
        ),
        scope: opt(ref("ApprovalScope")),
        feedback: opt(str({ description: "Rejection feedback passed to the agent." })),
        reason: endReason,
      },
      { description: "scope is omitted when once." },
    ),
  ),
  event(
    "approval.voted",
    "Gateway extension: one approver's vote on an approval a policy rule needs several approvers for was counted, and did not decide it: the approval is still pending (approval.updated follows once it is decided).",
    obj({
      id: str(),
      approver: str({ description: "The principal (tokens-file id) whose vote was counted; (no principal) for the clients connected without one." }),
      approvals: describe("Distinct approvers counted so far.", int({ min: 1 })),
      needed: describe("Distinct approvers the approval needs.", int({ min: 1 })),
    }),
    true,
  ),
  event(
    "plan.proposed",
    "The agent proposed a plan; resolve it with plan/approve or plan/reject.",
    obj({ id: str(), plan: str() }),
  ),
  event("plan.approved", "The pending plan was approved.", obj({ plan: str(), id: opt(str()) })),
  event(
    "plan.rejected",
    "The pending plan was rejected, or ended without a decision.",
    obj({
      plan: str(),
      id: opt(str()),
      feedback: opt(str({ description: "Gateway extension: rejection feedback passed to the agent." })),
      status: opt(
        describe(
          "Gateway extension: rejected (omitted) = a client rejected it; cancelled = the call was cancelled or the session closed; expired = nobody decided before the deadline.",
          oneOfStrings(["rejected", "cancelled", "expired"]),
        ),
      ),
      reason: endReason,
    }),
  ),
  event(
    "todos.updated",
    "The agent's todo list changed; carries the whole list.",
    obj({ todos: arr(ref("TodoItem")) }),
  ),
  event("error", "A non-fatal error; it does not end the turn.", obj({ error: str(), recoverable: opt(bool()) })),
  event(
    "file.changed",
    "A file in the workspace changed; the payload is not specified by any host, so any object is accepted (the gateway does not emit it).",
    describe("Unspecified; any object.", record(any())),
  ),
];

const gatewayEvents: EventEntry[] = [
  event(
    "input.requested",
    "The agent asked the user a question; answer with interaction/respond.",
    withInteractionId("UserInputDetails"),
    true,
  ),
  event(
    "input.resolved",
    "A user-input request was answered, or ended without an answer.",
    obj({
      id: str(),
      status: describe(
        "responded = answered; cancelled = the call was cancelled or the session closed; expired = nobody answered before the deadline.",
        oneOfStrings(["responded", "cancelled", "expired"]),
      ),
      response: opt(str({ description: "The answer, when responded." })),
      reason: endReason,
    }),
    true,
  ),
  event(
    "compaction.started",
    "The conversation is being compacted (summarised to free context).",
    obj({
      operationId: nonEmpty({ description: "Tau operation id; pairs with compaction.completed." }),
      kind: ref("CompactionKind"),
    }),
    true,
  ),
  event(
    "compaction.completed",
    "A compaction ended, successfully or not.",
    obj({
      operationId: nonEmpty(),
      kind: ref("CompactionKind"),
      status: oneOfStrings(["succeeded", "failed", "skipped", "cancelled"]),
      error: opt(str({ description: "Why it failed, when failed." })),
      reason: opt(str({ description: "Why it was skipped or cancelled." })),
    }),
    true,
  ),
  event(
    "session.reset",
    "The session's state was replaced wholesale upstream; clients should re-read what they display.",
    obj({
      cause: describe(
        "compaction = history summarised; rewind = history cut back; resync = state reloaded after a gap.",
        oneOfStrings(["compaction", "rewind", "resync"]),
      ),
      epoch: opt(int({ min: 1 })),
    }),
    true,
  ),
  event(
    "queue.updated",
    "The messages waiting to be delivered to the session changed; carries the whole list.",
    obj({ messages: arr(ref("QueuedMessage")) }),
    true,
  ),
  event(
    "user.message",
    "A user message joined the conversation, whichever client (of any dialect) sent it: a prompt that starts a turn comes right after that turn's turn.started; a message added without one (steered into a running turn, recorded by a Tau client) names the running turn, if any. Replays and rebuilt histories carry it too.",
    obj({
      messageId: nonEmpty({ description: "Tau's id of the message (a prompt's is its turn's id)." }),
      turnId: opt(str({ description: "The turn the message belongs to; absent when none was running." })),
      text: str({ description: "The message's text." }),
    }),
    true,
  ),
  event(
    "mode.updated",
    "The session's approval mode changed (a Codex client's approvalPolicy, an ACP client's session/set_mode); carries the new mode.",
    obj({
      mode: describe(
        "The mode in session/create's words: on_request (ask before each command tool call), auto and never (run them without asking), plan (hold them until a plan is approved).",
        oneOfStrings(["on_request", "auto", "never", "plan"]),
      ),
      approvalMode: ref("ApprovalMode"),
    }),
    true,
  ),
  event(
    "subagent.started",
    "A sub-agent began a run, whichever client's turn started it: it works beside the turn (which may end before it does) until subagent.completed.",
    obj({
      agentId: nonEmpty({ description: "Tau's id of the sub-agent." }),
      runRevision: describe("Which run of the sub-agent (a sub-agent can be given more work later).", int({ min: 1 })),
      title: str(),
      model: str({ description: "The model the sub-agent runs." }),
      reasoning: opt(str({ description: "Its reasoning effort." })),
      workingDirectory: str(),
      turnId: opt(str({ description: "The turn running when it started, if the gateway saw it start." })),
      toolCallId: opt(str({ description: "The tool call (Tau's spawn_agent) that started it, when known." })),
    }),
    true,
  ),
  event(
    "subagent.activity",
    "What a running sub-agent did since the last subagent.activity of its run: the new activities, in order. A client keeps a run's list by appending; Tau keeps the last 64 of a run.",
    obj({
      agentId: nonEmpty(),
      runRevision: int({ min: 1 }),
      index: describe("The position in the run's activities of the first one here (counting from the run's first, also those Tau no longer keeps).", int({ min: 0 })),
      activities: arr(ref("SubagentActivity")),
    }),
    true,
  ),
  event(
    "subagent.completed",
    "A sub-agent's run ended.",
    obj({
      agentId: nonEmpty(),
      runRevision: int({ min: 1 }),
      title: str(),
      status: ref("SubagentStatus"),
      response: opt(str({ description: "Its answer, when succeeded." })),
      error: opt(str({ description: "Why it failed or was interrupted." })),
      inputTokens: int({ min: 0 }),
      outputTokens: int({ min: 0 }),
      cost: describe("The sub-agent's cost so far.", num({ min: 0 })),
      durationMs: opt(int({ min: 0 })),
    }),
    true,
  ),
  event("subagent.removed", "Tau disposed of a sub-agent: it is no longer part of the session.", obj({ agentId: nonEmpty() }), true),
  event(
    "notice",
    "A host notice for the user; severity mirrors Tau's notice severities.",
    obj({
      severity: oneOfStrings(["info", "warn", "error"]),
      title: str(),
      content: opt(arr(str())),
      kind: opt(str({ description: "Dotted notice kind, e.g. for filtering." })),
    }),
    true,
  ),
];

export const askEventEntries: EventEntry[] = [...askEvents, ...gatewayEvents];
