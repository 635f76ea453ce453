import { describe, expect, it } from "vitest";
import type { Event } from "../../generated/ask-v1.0.js";
import { sessionLogMessage } from "../../src/mcp/session-log.js";

/** What of a session's events becomes a log message (notifications/message) to the MCP connections watching it. */

const voted = (approvals: number, needed: number): Event => ({ type: "approval.voted", seq: 9, payload: { id: "act_1", approver: "ann", approvals, needed } });

describe("sessionLogMessage", () => {
  it("tells a vote that did not decide as a vote, with the count and how many more it waits for", () => {
    expect(sessionLogMessage("s-1", voted(1, 2))).toEqual({
      level: "info",
      data: {
        sessionId: "s-1",
        event: "approval.voted",
        message: "approval act_1: vote counted for ann, 1 of 2 approvers needed; not yet decided, it waits for 1 more",
        interactionId: "act_1",
        approver: "ann",
        approvals: 1,
        needed: 2,
      },
    });
    expect(sessionLogMessage("s-1", voted(2, 4))?.data.message).toBe("approval act_1: vote counted for ann, 2 of 4 approvers needed; not yet decided, it waits for 2 more");
  });

  it("says nothing of an approval decided by a client (the tool's result and the transcript say it), and warns of one that expired", () => {
    expect(sessionLogMessage("s-1", { type: "approval.updated", seq: 10, payload: { id: "act_1", status: "approved" } })).toBeUndefined();
    expect(sessionLogMessage("s-1", { type: "approval.updated", seq: 10, payload: { id: "act_1", status: "expired" } })).toEqual({
      level: "warning",
      data: { sessionId: "s-1", event: "approval.updated", message: "approval act_1 expired: nobody decided before its deadline, so it was denied" },
    });
  });
});
