import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { ReadyMessage } from "../../generated/tau-v18.js";
import { formatIssue } from "../validation/issues.js";
import { TAU_VERSION, TauCodec } from "./codec.js";

/**
 * Opening a WebSocket to a Tau host, the part every upstream user shares: the token goes in the
 * `tau_token` query parameter (spec §1.2), the first message must be a valid `ready` of exactly
 * our protocol version (§1.5, §1.7: no negotiation), and nothing the host sends after `ready` may
 * be lost while the caller wires its handlers (with `ws`, several messages of one TCP chunk are
 * emitted synchronously, before any promise continuation runs).
 */

/** The upstream's `ready` announced another protocol version. Retrying cannot help. */
export class UpstreamVersionError extends Error {
  override readonly name = "UpstreamVersionError";
  constructor(
    readonly version: unknown,
    url: string,
  ) {
    super(`upstream ${url} speaks Tau protocol version ${JSON.stringify(version)}; this gateway speaks version ${TAU_VERSION}`);
  }
}

/** The upstream could not be reached, or did not complete the `ready` handshake. */
export class TauConnectError extends Error {
  override readonly name = "TauConnectError";
  constructor(
    message: string,
    /** The close code the upstream sent, when it closed the connection itself (e.g. 1008 unauthorized). */
    readonly closeCode?: number,
  ) {
    super(message);
  }
}

export interface TauSocketOptions {
  url: string;
  /** Sent as `?tau_token=`; never part of an error message or log line. */
  token?: string;
  /** Covers the TCP/WebSocket handshake and the wait for `ready`. Default 5000 (the Tau SDK's). */
  connectTimeoutMs?: number;
  /** Aborting gives up the attempt (the socket is terminated). */
  signal?: AbortSignal;
  maxPayload?: number;
}

export interface TauSocketHandlers {
  /**
   * One WebSocket message after `ready`. `text` is undefined for a binary frame; `bytes` is the
   * message as it arrived (for a relay that passes on what it does not change).
   */
  message(text: string | undefined, bytes: Buffer | undefined): void;
  close(code: number, reason: string): void;
}

export interface OpenTauSocket {
  readonly socket: WebSocket;
  /** The TCP (or TLS) socket under `socket`, from the upgrade response, e.g. to batch writes (write-batching.ts). */
  readonly transport: Duplex | undefined;
  readonly ready: ReadyMessage;
  /** The `ready` message exactly as the host sent it, for relays that forward original text. */
  readonly readyText: string;
  /** Starts delivery: messages and a close that arrived since `ready` are replayed first, in order. */
  attach(handlers: TauSocketHandlers): void;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** The URL with the token added as Tau's `tau_token` query parameter. */
export function tauSocketUrl(url: string, token?: string): string {
  if (token === undefined) return url;
  const withToken = new URL(url);
  withToken.searchParams.set("tau_token", token);
  return withToken.toString();
}

/** The URL as it may appear in logs and errors: any `tau_token` replaced. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has("tau_token")) parsed.searchParams.set("tau_token", "REDACTED");
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

/** Text of a `ws` message, or undefined when it was a binary frame. */
export function messageText(data: WebSocket.RawData, isBinary: boolean): string | undefined {
  if (isBinary) return undefined;
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
}

export function openTauSocket(options: TauSocketOptions): Promise<OpenTauSocket> {
  const shownUrl = redactUrl(options.url);
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;

  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new TauConnectError(`connecting to ${shownUrl} was cancelled`));
    let socket: WebSocket;
    try {
      socket = new WebSocket(tauSocketUrl(options.url, options.token), {
        handshakeTimeout: timeoutMs,
        maxPayload: options.maxPayload,
        // No permessage-deflate offer: a host that accepted it would have every message of the
        // connection compressed there and inflated here, CPU on both ends for bytes that travel on
        // loopback or a LAN (the embedded host, src/host/server.ts, accepts none anyway).
        perMessageDeflate: false,
      });
    } catch (err) {
      return reject(new TauConnectError(`cannot connect to ${shownUrl}: ${(err as Error).message}`));
    }

    // The promise's resolving functions until it is settled. The socket's handlers below live as long
    // as the connection; were they to keep these, they would keep the settled promise, and the
    // `ready` it holds, for as long too.
    let pending: { resolve: (opened: OpenTauSocket) => void; reject: (error: Error) => void } | undefined = { resolve, reject };
    // Messages and the close that arrive after `ready` but before `attach`.
    const early: Array<{ kind: "message"; text: string | undefined; bytes: Buffer | undefined } | { kind: "close"; code: number; reason: string }> = [];
    let handlers: TauSocketHandlers | undefined;

    const giveUp = (error: Error, closeWith?: { code: number; reason: string }) => {
      if (!pending) return;
      const { reject: rejectOpen } = pending;
      pending = undefined;
      cleanup();
      if (closeWith && socket.readyState === WebSocket.OPEN) socket.close(closeWith.code, closeWith.reason);
      else socket.terminate();
      rejectOpen(error);
    };
    const timer = setTimeout(() => giveUp(new TauConnectError(`no ready message from ${shownUrl} within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => giveUp(new TauConnectError(`connecting to ${shownUrl} was cancelled`));
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const cleanup = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
    };

    // The upgrade response's socket is the one `ws` goes on writing frames to.
    let transport: Duplex | undefined;
    socket.once("upgrade", (response) => (transport = response.socket));

    // `ws` reports failures as an error followed by a close; the error carries the useful text.
    socket.on("error", (err) => giveUp(new TauConnectError(`cannot connect to ${shownUrl}: ${err.message}`)));

    socket.on("close", (code, reasonBuffer) => {
      const reason = reasonBuffer.toString();
      if (pending) {
        const why = reason ? `${code} ${reason}` : String(code);
        giveUp(new TauConnectError(`${shownUrl} closed the connection before ready (${why})`, code));
        return;
      }
      if (handlers) handlers.close(code, reason);
      else early.push({ kind: "close", code, reason });
    });

    socket.on("message", (data, isBinary) => {
      const text = messageText(data, isBinary);
      if (!pending) {
        const bytes = Buffer.isBuffer(data) ? data : undefined;
        if (handlers) handlers.message(text, bytes);
        else early.push({ kind: "message", text, bytes });
        return;
      }
      const protocolError = (what: string) =>
        giveUp(new TauConnectError(`${shownUrl} did not start the Tau protocol: ${what}`), { code: 1002, reason: "expected a ready message" });
      const codec = TauCodec.shared();
      const decoded = codec.decodeServerMessage(text);
      if (!decoded.ok) return protocolError(`its first message is ${decoded.problem}${text === undefined ? "" : `: ${text.slice(0, 200)}`}`);
      const { value: msg, text: readyText } = decoded;
      const record = typeof msg === "object" && msg !== null ? (msg as Record<string, unknown>) : {};
      if (record.type !== "ready") return protocolError(`its first message is not a ready message: ${readyText.slice(0, 200)}`);
      if (record.version !== TAU_VERSION) {
        return giveUp(new UpstreamVersionError(record.version, shownUrl), { code: 1002, reason: "unsupported protocol version" });
      }
      const checked = codec.checkServerMessage(msg);
      if (!checked.ok) return protocolError(`invalid ready message (${checked.issues.slice(0, 3).map(formatIssue).join("; ")})`);

      const { resolve: resolveOpen } = pending;
      pending = undefined;
      cleanup();
      resolveOpen({
        socket,
        transport,
        ready: msg as ReadyMessage,
        readyText,
        attach(next) {
          if (handlers) throw new Error("openTauSocket: handlers already attached");
          handlers = next;
          for (const item of early.splice(0)) {
            if (item.kind === "message") next.message(item.text, item.bytes);
            else next.close(item.code, item.reason);
          }
        },
      });
    });
  });
}
