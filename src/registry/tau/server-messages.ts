import type { ServerMessageEntry } from "../model.js";
import { any, arr, int, literal, nonEmpty, nullable, num, obj, oneOfStrings, opt, protocolVersion, ref, str, union, type Schema } from "../schema.js";
import { nonEmptySingleLine } from "./common.js";
import { NOTICE_TITLE_MAX_CHARS } from "./snapshot.js";

/**
 * The eight server → client message types of Tau's routing enum (spec §2.2). Each `message` is the
 * whole wire object, envelope fields included.
 */

export const FEEDBACK_MAX_DURATION_MS = 60_000;

const serverMessage = (
  type: string,
  description: string,
  props: Record<string, unknown>,
  extra: Schema = {},
): ServerMessageEntry => ({
  name: type,
  kind: "server-message",
  sender: "server",
  description,
  message: { ...obj({ version: protocolVersion(), type: literal(type), ...props }), ...extra },
});

export const serverMessageDefinitions: Record<string, Schema> = {
  SubagentActivitiesChange: union(
    obj(
      { type: literal("agent.set"), agentId: nonEmpty(), state: ref("SubagentActivitiesAgentState") },
      { description: "Replace that agent's whole current-run activity list." },
    ),
    obj({ type: literal("agent.remove"), agentId: nonEmpty() }, { description: "Delete that agent's activities." }),
  ),

  EphemeralEvent: union(ref("FeedbackNoticeEvent"), ref("ThreadUpdateEvent"), ref("TimelineItemEvent")),

  FeedbackNoticeEvent: obj(
    {
      type: literal("feedback.notice"),
      title: nonEmptySingleLine({ maxLength: NOTICE_TITLE_MAX_CHARS }),
      tone: oneOfStrings(["default", "error"]),
      presentation: literal("footer"),
      durationMs: int({ min: 1, max: FEEDBACK_MAX_DURATION_MS }),
    },
    { description: "Short-lived footer feedback." },
  ),

  ThreadUpdateEvent: obj(
    {
      type: literal("ephemeral-agent.thread-update"),
      contextId: nonEmpty(),
      threadId: nonEmpty(),
      update: obj({ costTotal: num(), usage: ref("AgentUsage"), lastActivityText: opt(str()) }),
    },
    { description: "Live progress of one ephemeral context thread." },
  ),

  TimelineItemEvent: obj(
    { type: literal("timeline.item"), epoch: int({ min: 1 }), item: ref("NoticeTimelineItem") },
    { description: "A non-recoverable notice; show it only while `epoch` is the installed timeline epoch." },
  ),
};

export const tauServerMessages: ServerMessageEntry[] = [
  serverMessage("ready", "First message on every connection, listing the full supported method set.", {
    methods: arr(ref("MethodName"), { unique: true }),
  }),
  {
    name: "response",
    kind: "server-message",
    sender: "server",
    description: "The success or error response to one request, echoing its id (null when the id was unreadable).",
    message: { oneOf: [ref("SuccessResponse"), ref("ErrorResponse")] },
  },
  serverMessage(
    "session.delta",
    "A revisioned change to an observed session's snapshot: an atomic patch or a full reset.",
    {
      sessionId: nonEmpty(),
      fromRevision: nullable(int({ min: 1 })),
      toRevision: int({ min: 1 }),
      cause: ref("DeltaCause"),
      delta: union(ref("SnapshotPatch"), ref("SnapshotReset")),
    },
    {
      // A patch needs a base revision, and compaction/rewind only ever arrive as resets. The ordering
      // (toRevision > fromRevision) and epoch rules are left to the delta applier.
      if: { properties: { delta: { type: "object", properties: { type: { const: "snapshot.patch" } } } } },
      then: {
        properties: {
          fromRevision: { type: "integer" },
          cause: { type: "object", properties: { type: { not: { enum: ["compaction", "rewind"] } } } },
        },
      },
    },
  ),
  serverMessage(
    "session.pendingUserMessages",
    "Full replacement of the session's pending queue/steer list; apply only when its revision is newer.",
    { sessionId: nonEmpty(), state: ref("PendingUserMessagesState") },
  ),
  serverMessage(
    "session.subagentActivities",
    "Changes to per-subagent activity lists; apply only when the revision is newer (agent ids are unique per message).",
    { sessionId: nonEmpty(), revision: int({ min: 1 }), changes: arr(ref("SubagentActivitiesChange")) },
  ),
  serverMessage("session.ephemeral", "A best-effort live event with no revision that never needs resynchronisation.", {
    sessionId: nonEmpty(),
    event: ref("EphemeralEvent"),
  }),
  serverMessage(
    "session.clientTool.call",
    "Asks the advertising client to run one of its tools; deadlines are relative durations in milliseconds.",
    {
      sessionId: nonEmpty(),
      agentId: nonEmpty({ description: "`main` for the main conversation, otherwise a subagent id." }),
      callId: nonEmpty(),
      toolName: nonEmpty(),
      arguments: any("The model's tool-call arguments."),
      ackDeadlineMs: int({ min: 1 }),
      executionDeadlineMs: int({ min: 1 }),
    },
  ),
  serverMessage("session.clientTool.cancel", "Tells the client to stop a tool call and send nothing further for it.", {
    sessionId: nonEmpty(),
    callId: nonEmpty(),
    reason: oneOfStrings(["aborted", "timeout", "client-detached", "host-failed"]),
  }),
];
