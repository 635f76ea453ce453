import { carrierOfHeaders } from "../../../shared/tracing.js";
import type { FastifyError, FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { ASK_ERROR_CODES } from "../../../registry/ask/index.js";
import { answerAskHttp } from "../../../transports/ask-http.js";
import type { AskJsonRpcOptions } from "../../../transports/ask-jsonrpc.js";
import type { FrameTap } from "../../../transports/recording/frame-tap.js";
import { httpConnectionRecordings } from "../../../gateway/http-connection-recordings.js";
import { tappedPeerOf } from "../../../gateway/tapped-peer.js";
import { readJsonBodiesAsText, UnsupportedCharset } from "../../../gateway/json-charset.js";
import { PLUGIN } from "../../../gateway/plugin-names.js";
import { requestTenant } from "../../../gateway/request-tenant.js";

export interface AskHttpRouteOptions {
  /** Framing of each request's short-lived connection; the tenant comes from the request, the gate from `callGates`. */
  jsonrpc: Pick<AskJsonRpcOptions, "jsonrpcMember" | "maxBatch">;
  /** Largest request body, in bytes (413 beyond it). */
  bodyLimit: number;
  /** `serve --record`: each HTTP connection's bodies and answers, one file per connection. */
  recording?: FrameTap;
}


/**
 * `POST /rpc`: a JSON-RPC request, notification or batch in an `application/json` body, answered
 * in the HTTP response (200 with the response or batch of responses; 204 when there is nothing
 * to answer). Only what the HTTP layer decides gets an HTTP error: 415 for another content type
 * or a charset other than UTF-8, 413 for a body over the limit; both carry a JSON-RPC error
 * object so clients parse one shape.
 *
 * Recorded (`serve --record`) here, once per direction: the body as it came, the answer as sent;
 * bodies the HTTP layer refuses are no JSON-RPC exchange and are not recorded.
 */
const askHttp: FastifyPluginAsync<AskHttpRouteOptions> = async (app, options) => {
  const { askSurface: surface, callGates } = app;
  const recordingOf = options.recording && httpConnectionRecordings(options.recording, "ask", "http POST /rpc");
  readJsonBodiesAsText(app, options.bodyLimit);

  app.setErrorHandler((error: FastifyError, _request, reply) => {
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return reply.code(415).send(unsupportedMediaType());
    if (error instanceof UnsupportedCharset) {
      return reply.code(415).send(rpcError(ASK_ERROR_CODES.invalid_request, `Invalid Request: POST /rpc takes JSON in UTF-8, not charset ${JSON.stringify(error.charset)}`));
    }
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return reply.code(413).send(rpcError(ASK_ERROR_CODES.invalid_request, `Invalid Request: the body exceeds the limit of ${options.bodyLimit} bytes`));
    }
    return reply.send(error);
  });

  app.post("/rpc", { bodyLimit: options.bodyLimit }, async (request, reply) => {
    // A POST without a body (and so without a content type) never reaches the parser.
    if (typeof request.body !== "string") return reply.code(415).send(unsupportedMediaType());
    const recording = recordingOf?.(request.raw.socket, tappedPeerOf(request));
    recording?.client(request.body);
    const answer = await answerAskHttp(surface, request.body, { ...options.jsonrpc, tenant: requestTenant(request), principal: request.principal, gate: callGates.httpRequest(carrierOfHeaders(request.headers)) });
    if (answer === undefined) return reply.code(204).send();
    recording?.server(answer);
    return reply.code(200).type("application/json; charset=utf-8").send(answer);
  });
};

export const askHttpRoute = fp(askHttp, {
  name: "tau-gateway-route-ask-http",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.callGates, PLUGIN.accessControl],
  decorators: { fastify: ["askSurface", "callGates"], request: ["tenant", "principal"] },
});

const rpcError = (code: number, message: string) => ({ jsonrpc: "2.0", id: null, error: { code, message } });
const unsupportedMediaType = () => rpcError(ASK_ERROR_CODES.invalid_request, "Invalid Request: POST /rpc takes a JSON-RPC body with Content-Type: application/json");
