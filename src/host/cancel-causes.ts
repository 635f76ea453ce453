/**
 * Why side work (an exec, a sample) was stopped. Each is the reason its AbortController is aborted
 * with, and a cancelled exec reports it as `data.cause` of its `cancelled` error, as Tau does.
 */
export const CANCEL_CAUSES = {
  cancelExec: "cancelled by session.cancelExec",
  interrupt: "interrupted by session.interrupt",
  disconnect: "the requesting connection closed",
  shutdown: "the host is shutting down",
} as const;

/** The cause an aborted signal carries (any reason that is not one of ours reads as "aborted"). */
export function cancelCause(signal: AbortSignal): string {
  return typeof signal.reason === "string" ? signal.reason : "aborted";
}
