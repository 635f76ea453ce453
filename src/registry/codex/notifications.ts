import type { NotificationEntry } from "../model.js";
import { bool, describe, int, nullable, obj, opt, ref, str, type Schema } from "../schema.js";

/** Notifications: the client's `initialized`, and what the gateway reports about threads, turns and items. */

const server = (name: string, description: string, params: Schema): NotificationEntry => ({ kind: "notification", sender: "server", name, description, params });

const inTurn = { threadId: str(), turnId: str() };
const epochMs = (description: string) => describe(description, int({ min: 0 }));

export const codexNotificationEntries: NotificationEntry[] = [
  {
    kind: "notification",
    sender: "client",
    name: "initialized",
    description: "The client has read the initialize response. Optional: the connection is ready once initialize is answered.",
    params: obj({}),
    // Harmless either way: it asks nothing of the connection.
    beforeInitialize: true,
  },
  server("thread/started", "A thread was started (after the thread/start response).", obj({ thread: ref("Thread") })),
  server("thread/status/changed", "The thread became active (with what it waits for), idle, or failed.", obj({ threadId: str(), status: ref("ThreadStatus") })),
  server(
    "thread/settings/updated",
    "How the thread runs changed: the gateway sends it when the session's approval mode changes, whichever client (of any dialect) changed it, so the approvalPolicy shown is the session's.",
    obj({ threadId: str(), threadSettings: ref("ThreadSettings") }),
  ),
  server("turn/started", "A turn began.", obj({ threadId: str(), turn: ref("Turn") })),
  server("turn/completed", "A turn ended (completed, interrupted or failed, with its error); exactly once per turn, and last.", obj({ threadId: str(), turn: ref("Turn") })),
  server("item/started", "An item began, with a complete skeleton of it.", obj({ ...inTurn, item: ref("ThreadItem"), startedAtMs: epochMs("When, in Unix milliseconds.") })),
  server(
    "item/completed",
    "An item ended; carries the whole final item.",
    obj({ ...inTurn, item: ref("ThreadItem"), completedAtMs: epochMs("When, in Unix milliseconds."), contentTokenCount: opt(nullable(int({ min: 0 }))) }),
  ),
  server("item/agentMessage/delta", "Text streamed into an agentMessage item.", obj({ ...inTurn, itemId: str(), delta: str() })),
  server("item/reasoning/summaryTextDelta", "Thinking streamed into a reasoning item's summary.", obj({ ...inTurn, itemId: str(), delta: str(), summaryIndex: int() })),
  server("item/reasoning/summaryPartAdded", "A reasoning item's summary gained a part.", obj({ ...inTurn, itemId: str(), summaryIndex: int() })),
  server("item/reasoning/textDelta", "Raw reasoning text streamed into a reasoning item.", obj({ ...inTurn, itemId: str(), delta: str(), contentIndex: int() })),
  server("item/commandExecution/outputDelta", "Output of a commandExecution item, as plain text.", obj({ ...inTurn, itemId: str(), delta: str() })),
  server(
    "turn/plan/updated",
    "The turn's plan as a checklist.",
    obj({ ...inTurn, plan: describe("The steps.", { type: "array", items: ref("TurnPlanStep") }), explanation: opt(nullable(str())) }),
  ),
  server("thread/tokenUsage/updated", "Token usage after a model response: the thread's total and the last turn's.", obj({ ...inTurn, tokenUsage: ref("ThreadTokenUsage") })),
  server("serverRequest/resolved", "A server request of the thread was settled (answered, or ended with its turn).", obj({ threadId: str(), requestId: ref("RequestId") })),
  server(
    "error",
    "A turn failed (willRetry false; turn/completed failed follows) or hit a transient problem (willRetry true).",
    obj({ ...inTurn, error: ref("TurnError"), willRetry: bool() }),
  ),
];
