import type { ErrorCode } from "../../generated/tau-v18.js";

/** What a request to a Tau host fails with (upstream.ts). */

/** The host answered a request with an error response. `code` is Tau's; branch on it, not on the text. */
export class TauResponseError extends Error {
  override readonly name = "TauResponseError";
  constructor(
    readonly method: string,
    readonly code: ErrorCode,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** Not connected, or the connection dropped while the request was open. */
export class UpstreamUnavailableError extends Error {
  override readonly name = "UpstreamUnavailableError";
}
