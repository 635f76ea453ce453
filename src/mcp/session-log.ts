import type { Event } from "../../generated/ask-v1.0.js";
import type { LoggingLevel } from "../../generated/mcp-v2025-11-25.js";

/** A log message (notifications/message) about a session: its level and its data. */
export interface SessionLogMessage {
  level: LoggingLevel;
  data: Record<string, unknown> & { sessionId: string; message: string };
}

const NOTICE_LEVEL = { info: "info", warn: "warning", error: "error" } as const;

/**
 * What of a session's events is worth a log message to a connection that works with it: a turn
 * that failed or was interrupted, errors and Tau's notices, a decision that nobody made before
 * its deadline, a vote counted toward an approval that needs several approvers (it did not decide:
 * the voter, whose form was answered, and every other watcher learn the count), and the session's
 * state replaced or its end. Everything else (the reply, tool calls) is already the tool's progress
 * and result, or the transcript resource.
 */
export function sessionLogMessage(sessionId: string, event: Event): SessionLogMessage | undefined {
  const at = (level: LoggingLevel, message: string, extra: Record<string, unknown> = {}): SessionLogMessage => ({
    level,
    data: { sessionId, message, event: event.type, ...extra },
  });
  switch (event.type) {
    case "turn.failed":
      return at("error", `turn ${event.payload.turnId} failed: ${event.payload.error}`, { turnId: event.payload.turnId });
    case "turn.aborted":
      return at("notice", `turn ${event.payload.turnId} was interrupted`, { turnId: event.payload.turnId });
    case "error":
      return at("error", event.payload.error);
    case "notice": {
      const { severity, title, content } = event.payload;
      return at(NOTICE_LEVEL[severity], content?.length ? `${title}: ${content.join("\n")}` : title);
    }
    case "approval.updated":
      return event.payload.status === "expired" ? at("warning", `approval ${event.payload.id} expired: nobody decided before its deadline, so it was denied`) : undefined;
    case "approval.voted": {
      // One vote of several needed: worded so that no model reads it as the decision (approval.updated, or tau-answer's text, says that).
      const { id, approver, approvals, needed } = event.payload;
      const more = needed - approvals;
      return at("info", `approval ${id}: vote counted for ${approver}, ${approvals} of ${needed} approvers needed; not yet decided, it waits for ${more} more`, {
        interactionId: id,
        approver,
        approvals,
        needed,
      });
    }
    case "input.resolved":
      return event.payload.status === "expired" ? at("warning", `question ${event.payload.id} expired: nobody answered before its deadline`) : undefined;
    case "plan.rejected":
      return event.payload.status === "expired" ? at("warning", `plan ${event.payload.id ?? ""} expired: nobody decided before its deadline, so it was rejected`) : undefined;
    case "session.reset":
      return at("notice", `the session's state was replaced (${event.payload.cause}): read it again`, { cause: event.payload.cause });
    case "session.ended":
      return at("notice", `the session ended${event.payload.reason ? ` (${event.payload.reason})` : ""}`);
    default:
      return undefined;
  }
}
