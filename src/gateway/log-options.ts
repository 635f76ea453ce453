import type { FastifyServerOptions } from "fastify";
import type { GatewayConfig } from "./config.js";

/**
 * How the gateway logs: pino JSON lines with a request id on every line of a request, the client
 * address as Fastify resolves it (from `X-Forwarded-For` only when the proxy is trusted), and no
 * secrets. Clients may carry tokens in the query string (`access_token`, Tau's `tau_token`) and in
 * headers, so query values with those names and the credential headers never reach a log line.
 */

/** Query parameters whose values are credentials. Compared case-insensitively. */
const SECRET_QUERY_PARAMETERS = new Set(["access_token", "tau_token", "token"]);

export const REDACTED = "REDACTED";

export function loggerOptions(config: GatewayConfig): FastifyServerOptions["logger"] {
  if (!config.logger) return false;
  return {
    level: config.logger.level,
    ...(config.logger.stream ? { stream: config.logger.stream } : {}),
    // Headers are not serialised below; these paths guard lines that log a request or headers directly.
    redact: {
      paths: [
        "req.headers.authorization",
        "req.headers.cookie",
        "req.headers['proxy-authorization']",
        "headers.authorization",
        "headers.cookie",
        "headers['proxy-authorization']",
      ],
      censor: REDACTED,
    },
    serializers: {
      req: (req) => ({
        method: req.method,
        url: redactQuery(req.url ?? ""),
        // `ip` is the FastifyRequest's view (honours trustProxy); a raw request only has its socket.
        remoteAddress: (req as { ip?: string }).ip ?? req.socket?.remoteAddress,
      }),
    },
  };
}

/** The URL with the value of every credential-carrying query parameter replaced; other parameters stay readable. */
export function redactQuery(url: string): string {
  const at = url.indexOf("?");
  if (at === -1) return url;
  const parts = url
    .slice(at + 1)
    .split("&")
    .map((part) => {
      const eq = part.indexOf("=");
      const rawName = eq === -1 ? part : part.slice(0, eq);
      return SECRET_QUERY_PARAMETERS.has(decodeName(rawName).toLowerCase()) ? `${rawName}=${REDACTED}` : part;
    });
  return `${url.slice(0, at)}?${parts.join("&")}`;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, " "));
  } catch {
    // Undecodable: compare the raw text; a name that cannot be decoded cannot be a known one anyway.
    return raw;
  }
}
