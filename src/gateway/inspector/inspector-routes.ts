import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { PassThrough } from "node:stream";
import { Deadline } from "../../shared/deadline.js";
import { PLUGIN } from "../plugin-names.js";
import type { SessionReceiptsSource } from "../routes/receipts.js";
import { refuseInspector, type InspectorAccess } from "./access-guard.js";
import type { InspectorEvent, InspectorHub } from "./inspector-hub.js";
import { eventFor, missedBy, seesEvent, snapshotFor, sees, viewerOf } from "./inspector-viewer.js";
import { readPageFiles } from "./page-files.js";
import { sessionRoutes } from "./session-routes.js";
import type { InspectedSessions } from "./session-view.js";
import { DEFAULT_MAX_TRANSCRIPT_BYTES, transcriptRoute } from "./transcript-route.js";

export interface InspectorRoutesOptions {
  hub: InspectorHub;
  access: InspectorAccess;
  /** Interval of `: keepalive` comments on the feed. Default 15000. */
  heartbeatMs?: number;
  /** What may wait unread for a feed before it is closed (the page resumes it). Default 8 MiB. */
  maxBufferedBytes?: number;
  /** How long a feed may stay backed up with its reader taking none of it, then it is closed (the idle deadline); 0 or absent: never. */
  stallTimeoutMs?: number;
  /** The bridge's sessions: their timelines and pending interactions (session-routes.ts); absent, no such routes. */
  sessions?: InspectedSessions;
  /** The sessions' receipts, for the approvals panel (with `sessions`): read from the session routes, their steps told on the feed. */
  receipts?: SessionReceiptsSource;
  /** Largest transcript the page may send to be checked. Default 8 MiB. */
  maxTranscriptBytes?: number;
  /** Longest a transcript's check may take (in its worker thread). Default 30 s. */
  transcriptCheckMs?: number;
}

/**
 * The page of the whole scheme: no inline script or style, nothing from elsewhere, no framing.
 * `connect-src 'self'` is the feed and the API.
 */
export const INSPECTOR_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "content-security-policy": INSPECTOR_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store",
};

/**
 * `serve --inspector`: the page (`GET /inspector` and its files under `/inspector/static/`), the
 * connections and a connection's frames as a recording (`/inspector/api/…`), and the live feed
 * (`GET /inspector/feed`, server-sent events: a snapshot, then every connection change and frame,
 * each with an id a reconnecting page sends back as `Last-Event-ID` to get only what it missed).
 * Every route passes the checks of access-guard.ts; the page's files need no token, the rest a
 * valid one, and show what its viewer may see (inspector-viewer.ts: an operator everything, a
 * tenant its own connections); `/inspector/api/viewer` says which.
 */
const inspector: FastifyPluginAsync<InspectorRoutesOptions> = async (app, options) => {
  const { hub, access } = options;
  const files = readPageFiles();
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBufferedBytes = options.maxBufferedBytes ?? 8 * 1024 * 1024;
  /** How to end each open feed. */
  const feeds = new Set<() => void>();

  app.addHook("onRequest", async (request, reply) => {
    reply.headers(SECURITY_HEADERS);
    return refuseInspector(access, request, reply);
  });

  const page = { config: { tokenOptional: true, checksOwnOrigin: true, checksOwnHost: true } };
  const data = { config: { checksOwnOrigin: true, checksOwnHost: true } };
  const sendFile = (reply: FastifyReply, name: string) => {
    const file = files.get(name);
    if (!file) return reply.code(404).send({ error: "not_found", message: `the inspector has no file ${JSON.stringify(name)}` });
    return reply.type(file.contentType).send(file.body);
  };
  app.get("/inspector", page, async (_request, reply) => sendFile(reply, "index.html"));
  app.get<{ Params: { file: string } }>("/inspector/static/:file", page, async (request, reply) => sendFile(reply, request.params.file === "index.html" ? "" : request.params.file));

  const viewer = (request: FastifyRequest) => viewerOf(request, access.authenticated);

  app.get("/inspector/api/viewer", data, async (request) => viewer(request));

  const sessionTenant = (id: string) => sessions?.get(id)?.tenant;

  app.get("/inspector/api/connections", data, async (request) => ({ connections: snapshotFor(viewer(request), hub).connections }));

  const sessions = options.sessions;
  const receipts = sessions ? options.receipts : undefined;
  if (sessions) await app.register(sessionRoutes, { hub, sessions, viewer, ...(receipts ? { receipts } : {}) });
  // Each receipt's step, as it is added: pages that show the session read its receipts again.
  const unwatch = receipts?.watch(({ sessionId, callId, steps }) => hub.recordReceiptStep({ sessionId, callId, step: steps.at(-1)!.step }, sessionTenant(sessionId)));
  if (unwatch) app.addHook("onClose", async () => unwatch());

  app.get<{ Params: { id: string } }>("/inspector/api/connections/:id/transcript", data, async (request, reply) => {
    const trace = hub.trace(request.params.id);
    // Another tenant's connection is, to this viewer, one that does not exist.
    if (!trace || !sees(viewer(request), trace.tenant)) return reply.code(404).send({ error: "not_found", message: `no connection ${JSON.stringify(request.params.id)} is kept (closed connections go after a while)` });
    return reply
      .type("application/x-ndjson; charset=utf-8")
      .header("content-disposition", `attachment; filename="${trace.id}.jsonl"`)
      .send(trace.transcript());
  });

  // A transcript dropped on the page, checked by validate's own reader and checker.
  app.register(transcriptRoute, { maxBytes: options.maxTranscriptBytes ?? DEFAULT_MAX_TRANSCRIPT_BYTES, checkTimeoutMs: options.transcriptCheckMs });

  app.get("/inspector/feed", data, async (request, reply) => {
    const header = request.headers["last-event-id"];
    const lastEventId = Array.isArray(header) ? header[0] : header;
    const body = new PassThrough();
    // A page that stopped reading (a frozen tab, a machine gone) is closed once it took nothing for the deadline.
    const stall = new Deadline(options.stallTimeoutMs ?? 0, () => {
      request.log.info({ stallTimeoutMs: options.stallTimeoutMs }, "inspector feed took nothing of what waited for it; closed");
      app.metrics.networkTimeout("/inspector/feed", "stalled");
      body.destroy();
    });
    body.on("drain", () => stall.disarm());
    const put = (text: string) => {
      if (!body.write(text)) stall.arm();
    };
    const write = (event: string, id: number, data: unknown) => {
      if (body.writableEnded) return;
      if (body.writableLength > maxBufferedBytes) {
        request.log.warn({ maxBufferedBytes }, "inspector feed too slow; closed (the page resumes it)");
        body.end();
        return;
      }
      put(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const watcher = viewer(request);
    const send = (event: InspectorEvent) => {
      if (!seesEvent(watcher, hub, event, sessionTenant)) return;
      const shown = eventFor(watcher, hub, event);
      write(shown.type, shown.seq, shown);
    };
    const missed = lastEventId !== undefined && /^\d+$/.test(lastEventId) ? missedBy(watcher, hub, Number(lastEventId)) : undefined;
    if (missed) missed.forEach(send);
    else {
      const snapshot = snapshotFor(watcher, hub, sessionTenant);
      write("snapshot", snapshot.seq, snapshot);
    }
    const unsubscribe = hub.subscribe(send);
    const heartbeat = setInterval(() => body.writableEnded || put(": keepalive\n\n"), heartbeatMs);
    const stop = () => {
      stall.disarm();
      unsubscribe();
      clearInterval(heartbeat);
      feeds.delete(stop);
      if (!body.writableEnded) body.end();
    };
    feeds.add(stop);
    body.once("close", stop);
    body.once("finish", stop);
    reply.raw.once("close", stop);
    return reply.code(200).headers({ "content-type": "text/event-stream; charset=utf-8", "x-accel-buffering": "no", connection: "close" }).send(body);
  });

  // Feeds never end by themselves; the server cannot close while they last.
  app.addHook("preClose", async () => {
    for (const stop of [...feeds]) stop();
  });
};

export const inspectorRoutes = fp(inspector, {
  name: "tau-gateway-route-inspector",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.accessControl, PLUGIN.metrics],
  decorators: { fastify: ["metrics"], request: ["principal"] },
});
