import type { FastifyPluginAsync } from "fastify";
import { RpcError } from "../../../shared/rpc-error.js";
import fp from "fastify-plugin";
import { ASK_ERROR_CODES } from "../../../registry/ask/index.js";
import type { FrameTap } from "../../../transports/recording/frame-tap.js";
import { openAskSseStream, SSE_HEADERS, type AskSseStream } from "../../../transports/ask-sse.js";
import { PLUGIN } from "../../../gateway/plugin-names.js";
import { tappedPeerOf } from "../../../gateway/tapped-peer.js";
import { requestTenant } from "../../../gateway/request-tenant.js";

export const DEFAULT_SSE_HEARTBEAT_MS = 15_000;
/** Bytes a server-sent events client may fall behind by before it is disconnected. */
export const DEFAULT_SSE_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

export interface AskEventsRouteOptions {
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  /** How long a stream may stay backed up with its client taking none of it (the idle deadline); 0: never. */
  stallTimeoutMs?: number;
  /** `serve --record`: each stream's events, one file per stream. */
  recording?: FrameTap;
}

/**
 * `GET /rpc/events?sessionId=…&afterSeq=…`: one session's events as server-sent events. The stream
 * subscribes through the Ask surface exactly as a connection's `session/subscribe` does (tenant rules
 * included), replaying retained events after `afterSeq` — or after `Last-Event-ID`, which a
 * reconnecting EventSource sends and which wins — then following live. Failures before the stream
 * starts are HTTP errors with a JSON-RPC error object: 404 for a session that does not exist for
 * this tenant (-32004), 400 for bad parameters, 503 while the gateway drains or the upstream is down.
 * Subscribing passes the event-stream gate (refused while the gateway drains).
 *
 * Recorded (`serve --record`) one file per stream, each event as the `session/event` notification
 * its frame carries the params of; a stream refused before it starts has no events and no file.
 */
const askEvents: FastifyPluginAsync<AskEventsRouteOptions> = async (app, options) => {
  const { askSurface: surface, callGates, metrics } = app;
  const streams = new Set<AskSseStream>();

  app.get<{ Querystring: Record<string, string | string[] | undefined> }>("/rpc/events", async (request, reply) => {
    const sessionId = single(request.query.sessionId);
    if (sessionId === undefined || sessionId === "") {
      return reply.code(400).send(errorBody(ASK_ERROR_CODES.invalid_params, "invalid params: sessionId: the query must name one session"));
    }
    const lastEventId = single(request.headers["last-event-id"]);
    const cursorText = lastEventId ?? single(request.query.afterSeq);
    const cursorName = lastEventId !== undefined ? "Last-Event-ID" : "afterSeq";
    let afterSeq = 0;
    if (cursorText !== undefined && cursorText !== "") {
      if (!/^\d+$/.test(cursorText) || !Number.isSafeInteger(Number(cursorText))) {
        return reply.code(400).send(errorBody(ASK_ERROR_CODES.invalid_params, `invalid params: ${cursorName}: must be a non-negative integer (an event seq)`));
      }
      afterSeq = Number(cursorText);
    }

    const recording = options.recording?.connectionOnFirstMessage("ask", "sse GET /rpc/events", tappedPeerOf(request));
    const stream = openAskSseStream({
      tenant: requestTenant(request),
      recording,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_SSE_HEARTBEAT_MS,
      maxBufferedBytes: options.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES,
      onSlowConsumer: () => {
        request.log.warn({ sessionId }, "server-sent events client too slow; disconnected");
        metrics.slowConsumerDropped("/rpc/events");
      },
      stallTimeoutMs: options.stallTimeoutMs,
      onStalled: () => {
        request.log.info({ sessionId, stallTimeoutMs: options.stallTimeoutMs }, "server-sent events client took nothing of what waited for it; disconnected");
        metrics.networkTimeout("/rpc/events", "stalled");
      },
    });
    surface.connect(stream.peer);
    void stream.closed.then(() => {
      recording?.close();
      streams.delete(stream);
      surface.disconnect(stream.peer);
    });
    try {
      // Events replayed by the subscription are written into the body before it is sent; they wait there.
      await callGates.eventStream("session/subscribe", () => surface.call(stream.peer, "session/subscribe", { sessionId, afterSeq }));
    } catch (error) {
      stream.close();
      const { status, body } = failure(error);
      return reply.code(status).send(body);
    }
    streams.add(stream);
    reply.raw.on("close", () => stream.close());
    return reply.code(200).headers(SSE_HEADERS).send(stream.body);
  });

  // Open streams never end by themselves; the server cannot close while they last.
  app.addHook("preClose", async () => {
    for (const stream of streams) stream.close("gateway shutting down");
  });
};

export const askEventsRoute = fp(askEvents, {
  name: "tau-gateway-route-ask-events",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.metrics, PLUGIN.accessControl],
  decorators: { fastify: ["askSurface", "callGates", "metrics"], request: ["tenant", "principal"] },
});

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function errorBody(code: number, message: string, data?: unknown) {
  return { error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** An error from subscribing, as an HTTP status and a JSON-RPC error object. */
function failure(error: unknown): { status: number; body: ReturnType<typeof errorBody> } {
  if (!(error instanceof RpcError)) return { status: 500, body: errorBody(ASK_ERROR_CODES.internal_error, `Internal error: ${String(error)}`) };
  const status =
    error.code === ASK_ERROR_CODES.session_not_found
      ? 404
      : error.code === ASK_ERROR_CODES.invalid_params || error.code === ASK_ERROR_CODES.invalid_request
        ? 400
        : error.code === ASK_ERROR_CODES.upstream_unavailable
          ? 503
          : error.code === ASK_ERROR_CODES.overloaded
            ? 429
            : 500;
  return { status, body: errorBody(error.code, error.message, error.data) };
}
