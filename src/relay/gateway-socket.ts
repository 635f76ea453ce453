import WebSocket from "ws";

/** The gateway answered the upgrade with an HTTP status instead (401: the token is missing or wrong). */
export class GatewayRefusedError extends Error {
  constructor(
    readonly status: number,
    url: string,
  ) {
    super(
      status === 401
        ? `the gateway at ${url} refused the connection (401 Unauthorized): it needs a token (--remote-token or TAU_GATEWAY_REMOTE_TOKEN), or the one given is wrong`
        : `the gateway at ${url} refused the connection (HTTP ${status})${status === 404 ? ": no such route; give the gateway's base URL (ws://HOST:PORT)" : ""}`,
    );
  }
}

/** The gateway could not be reached at all (refused, unresolvable, timed out). */
export class GatewayUnreachableError extends Error {
  constructor(url: string, cause: Error) {
    super(`cannot reach the gateway at ${url}: ${cause.message}`);
  }
}

/**
 * The header tau-gateway puts on every WebSocket upgrade it accepts, naming the route's dialect.
 * A relay (`--remote`) requires it: without it the URL is some other server's — a Tau host
 * (`--upstream`'s kind of URL), another app — whose messages the relay must not pass off as a
 * gateway's.
 */
export const GATEWAY_DIALECT_HEADER = "x-tau-gateway-dialect";

/** The server at the URL accepted the WebSocket but is not tau-gateway (no GATEWAY_DIALECT_HEADER). */
export class NotAGatewayError extends Error {
  constructor(url: string) {
    super(
      `${url} is not a tau-gateway endpoint: the server accepted the WebSocket without saying it is tau-gateway (a Tau host, or another server). ` +
        "--remote takes the address of a running tau-gateway serve (ws://HOST:PORT); a Tau host is served with --upstream",
    );
  }
}

/** How long the TCP connection and the upgrade may take. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * A URL for messages and logs: without the credentials a URL may carry, as user:password or in
 * its query (`?access_token=…`, `?token=…`: every query value is hidden, whatever its name). Text
 * that is not a URL is shown with anything like either cut out.
 */
export function displayUrl(url: string): string {
  let shown: URL;
  try {
    shown = new URL(url);
  } catch {
    return url.replace(/\/\/[^/?#]*@/, "//").replace(/[?#].*$/s, "?REDACTED");
  }
  shown.username = "";
  shown.password = "";
  for (const name of new Set(shown.searchParams.keys())) shown.searchParams.set(name, "REDACTED");
  shown.hash = "";
  return shown.toString();
}

/**
 * Opens one WebSocket to a gateway route, presenting `token` as `Authorization: Bearer …`.
 * Resolves once open; rejects with GatewayRefusedError, GatewayUnreachableError or
 * NotAGatewayError, whose messages name the URL but never the token.
 */
export function openGatewaySocket(url: string, token: string | undefined): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url, {
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        // The relay passes messages through as they are: no compression to negotiate.
        perMessageDeflate: false,
      });
    } catch {
      // ws's own message repeats the URL as given, query and password included.
      return reject(new GatewayUnreachableError(displayUrl(url), new Error("the URL cannot be connected to")));
    }
    let refusedWith: number | undefined;
    let isGateway = false;
    socket.once("upgrade", (response) => void (isGateway = response.headers[GATEWAY_DIALECT_HEADER] !== undefined));
    socket.once("unexpected-response", (request, response) => {
      refusedWith = response.statusCode ?? 0;
      response.resume();
      socket.terminate();
    });
    const onError = (error: Error) => {
      socket.off("open", onOpen);
      // A failed handshake may report more than one error; the first one says it.
      socket.on("error", () => undefined);
      reject(refusedWith !== undefined ? new GatewayRefusedError(refusedWith, displayUrl(url)) : new GatewayUnreachableError(displayUrl(url), error));
    };
    const onOpen = () => {
      socket.off("error", onError);
      if (isGateway) return resolve(socket);
      socket.on("error", () => undefined);
      socket.terminate();
      reject(new NotAGatewayError(displayUrl(url)));
    };
    socket.once("error", onError);
    socket.once("open", onOpen);
  });
}
