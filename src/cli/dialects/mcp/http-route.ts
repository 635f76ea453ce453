import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { Readable } from "node:stream";
import type { McpServer } from "../../../mcp/server.js";
import { carrierOfHeaders } from "../../../shared/tracing.js";
import type { McpHttpSessions } from "../../../transports/mcp-http.js";
import { jsonRpcError } from "../../../transports/mcp-http-errors.js";
import type { DialectRoutesContext } from "../../../gateway/dialects.js";
import { readJsonBodiesAsText, UnsupportedCharset } from "../../../gateway/json-charset.js";
import { JsonBodyRefused, keepsConnectionOpen } from "../../../gateway/json-body-reader.js";
import { refusalMessage } from "../../../transports/jsonrpc-envelope.js";
import { pinoLog } from "../../../gateway/log.js";
import { PLUGIN } from "../../../gateway/plugin-names.js";
import { tappedPeerOf } from "../../../gateway/tapped-peer.js";
import { requestTenant } from "../../../gateway/request-tenant.js";

export interface McpHttpRouteOptions extends DialectRoutesContext {
  server: McpServer;
  route: string;
}

/**
 * `/mcp`: MCP's Streamable HTTP transport on the gateway (POST, the GET event stream, DELETE;
 * src/transports/mcp-http.ts). Behind the front door every route has (bearer token and tenant,
 * Host and Origin allowlists, the request size limit, drain); each session gets the call gates a
 * WebSocket connection gets (in-flight limit, metrics and spans under "mcp", drain) and its own
 * recording (`serve --record`). Event streams are bounded as the gateway's other streams: a client
 * that lets more than `maxBufferedBytes` wait unread is disconnected (it may resume from its last
 * event id). What the HTTP layer refuses (415, 413, a body that is no JSON, 400 for one past the
 * shape bounds, refused while it is read: json-body-reader.ts) carries a JSON-RPC error object
 * like every other answer of the route.
 */
const mcpHttp: FastifyPluginAsync<McpHttpRouteOptions> = async (app, options) => {
  const { callGates, metrics } = app;
  // Made at the route's first request: the SDK's transport under them (its message schemas are
  // built as it loads) is nothing a gateway needs before an MCP client comes.
  let sessions: Promise<McpHttpSessions> | undefined;
  const loadSessions = () =>
    (sessions ??= import("../../../transports/mcp-http.js").then(
      ({ McpHttpSessions }) =>
        new McpHttpSessions(options.server, {
          maxSessions: options.limits.maxConnections,
          heartbeatMs: options.sseHeartbeatMs,
          // Replicas sharing a store say which sessions they serve (the others answer why they do not know one).
          shared: app.store?.records,
          log: pinoLog(app.log),
        }),
    ));
  const streams = new Set<Readable>();

  readJsonBodiesAsText(app, options.maxMessageBytes);
  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return sendWeb(reply, unsupportedMediaType());
    if (error instanceof UnsupportedCharset) return sendWeb(reply, jsonRpcError(415, -32000, `Unsupported Media Type: ${options.route} takes JSON in UTF-8, not charset ${JSON.stringify(error.charset)}`));
    if (error instanceof JsonBodyRefused) {
      keepsConnectionOpen(reply);
      const { refused, id } = error;
      return sendWeb(reply, jsonRpcError(400, -32600, refusalMessage(refused), {}, { id, data: { limit: refused.limit } }));
    }
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendWeb(reply, jsonRpcError(413, -32000, `Payload Too Large: the body exceeds the limit of ${options.maxMessageBytes} bytes`));
    return reply.send(error);
  });

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: options.route,
    bodyLimit: options.maxMessageBytes,
    handler: async (request, reply) => {
      let body: unknown;
      if (request.method === "POST") {
        // A POST without a body (and so without a content type) never reaches the parser.
        if (typeof request.body !== "string") return sendWeb(reply, unsupportedMediaType());
        try {
          body = JSON.parse(request.body);
        } catch {
          return sendWeb(reply, jsonRpcError(400, -32700, "Parse error: the body is not JSON"));
        }
      }
      const { response, session } = await (await loadSessions()).handle(
        // The SDK's transport reads only the path and query of the URL; the Host header is no part of it (with tokens it is not checked).
        { method: request.method, url: `http://localhost${request.url}`, headers: webHeaders(request), body },
        {
          tenant: requestTenant(request),
          principal: request.principal,
          gate: () => callGates.connection("mcp", carrierOfHeaders(request.headers)),
          recording: options.recording && (() => options.recording!.connectionOnFirstMessage("mcp", `http ${options.route}`, tappedPeerOf(request))),
        },
      );
      if (!response.headers.get("content-type")?.startsWith("text/event-stream") || response.body === null) return sendWeb(reply, response);
      const done = session?.streaming();
      const stream = boundedStream(response.body, reply, options.limits.maxBufferedBytes, () => {
        request.log.warn({ route: options.route }, "MCP event stream client too slow; disconnected");
        metrics.slowConsumerDropped(options.route);
      });
      streams.add(stream);
      stream.once("close", () => {
        streams.delete(stream);
        done?.();
      });
      reply.code(response.status);
      response.headers.forEach((value, name) => void reply.header(name, value));
      return reply.send(stream);
    },
  });

  // Open streams never end by themselves; the server cannot close while they last.
  app.addHook("preClose", async () => {
    for (const stream of streams) stream.destroy();
    await (await sessions)?.closeAll();
  });
};

export const mcpHttpRoute = fp(mcpHttp, {
  name: "tau-gateway-route-mcp-http",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.metrics, PLUGIN.accessControl],
  decorators: { fastify: ["callGates", "metrics"], request: ["tenant", "principal"] },
});

/** The request's headers as the SDK's transport reads them. */
function webHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return headers;
}

/** A whole (non-streamed) Response of the SDK's transport as the reply. */
async function sendWeb(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  response.headers.forEach((value, name) => void reply.header(name, value));
  const text = await response.text();
  return reply.send(text === "" ? undefined : text);
}

/**
 * An event stream's body, read from the transport as fast as it writes (so what waits for the
 * client is in Node's buffers, where it is counted): past `maxBytes` unread, the stream ends
 * (`onSlow`). Ending it, or the client leaving, cancels the transport's stream, which the SDK
 * takes as the client gone (its events stay kept for a resume).
 */
function boundedStream(body: ReadableStream<Uint8Array>, reply: FastifyReply, maxBytes: number, onSlow: () => void): Readable {
  const reader = body.getReader();
  const stream = new Readable({
    read() {},
    destroy(error, callback) {
      reader.cancel().catch(() => undefined);
      callback(error);
    },
  });
  reply.raw.once("close", () => stream.destroy());
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (stream.destroyed) return;
        if (done) return void stream.push(null);
        stream.push(value);
        if (stream.readableLength + reply.raw.writableLength > maxBytes) {
          onSlow();
          return void stream.destroy();
        }
      }
    } catch {
      stream.destroy();
    }
  })();
  return stream;
}

const unsupportedMediaType = () => jsonRpcError(415, -32000, "Unsupported Media Type: a POST takes a JSON-RPC message with Content-Type: application/json");
