import type { FeedbackNoticeEvent, Notice } from "../../../generated/tau-v18.js";
import { draft, type EventDraft } from "../event-draft.js";

/**
 * Tau notices → Ask events (DESIGN §4.3): a notice becomes `notice {severity, title, content}`,
 * except severity `error`, which Ask clients expect as a non-fatal `error` event.
 */

export function noticeEvent(notice: Notice): EventDraft {
  const { title, content } = notice.presentation;
  if (notice.severity === "error") {
    return draft("error", { error: content && content.length > 0 ? `${title}: ${content.join("\n")}` : title, recoverable: true });
  }
  return draft("notice", { severity: notice.severity, title, ...(content ? { content } : {}), kind: notice.kind });
}

/** A footer feedback line (ephemeral): tone `error` is an error, anything else an info notice. */
export function feedbackEvent(event: FeedbackNoticeEvent): EventDraft {
  if (event.tone === "error") return draft("error", { error: event.title, recoverable: true });
  return draft("notice", { severity: "info", title: event.title });
}
