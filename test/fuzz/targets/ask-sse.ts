import { SseTestClient } from "../../support/sse-client.js";
import { describeValue } from "../generators/json-text.js";
import { sseCases, type SseCase } from "../generators/sse-requests.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { GatewayProcess } from "../infra/gateway-process.js";
import { httpRpcResult, sessionWithATurn } from "../infra/http-rpc.js";
import { checkAskMessage, jsonRpcResponse } from "../oracles/json-rpc-oracle.js";
import { checkEventFrames, checkRefusal, expectedAnswer, replayAfter } from "../oracles/sse-oracle.js";
import { gatewayArgs } from "../stream-target.js";
import { countError, newStats, type FuzzTarget } from "../target.js";

/**
 * Ask events as server-sent events (`GET /rpc/events`), reconnecting: each case opens the stream
 * of a session with an `afterSeq` and/or `Last-Event-ID` that is right, out of range or garbage,
 * and may drop the connection after some events and reconnect with the id of the last one, as
 * EventSource does. Across the reconnect no event may be missing or repeated.
 */
const target: FuzzTarget = {
  name: "GET /rpc/events (SSE)",
  dialect: "ask",
  properties: [snapshotAmplification],
  async start({ upstream, settings }) {
    const { process: gateway, baseUrl } = await GatewayProcess.start("serve", [...gatewayArgs({ upstream, settings }), "--port", "0"]);
    const stats = newStats();
    const answers = { response: jsonRpcResponse, check: checkAskMessage };
    const live = await sessionWithATurn(baseUrl!, upstream.cwd).catch(async (err: unknown) => {
      await gateway.stop();
      throw err;
    });

    const url = (c: SseCase) => {
      const query: string[] = [];
      if (c.session !== undefined) query.push(`sessionId=${encodeURIComponent(c.session === "live" ? live.sessionId : c.session)}`);
      if (c.afterSeq !== undefined) query.push(`afterSeq=${encodeURIComponent(c.afterSeq)}`);
      return `${baseUrl}/rpc/events${query.length ? `?${query.join("&")}` : ""}`;
    };

    /** Opens one stream and reads its replay up to seq `until` (0: expects none); resolves with the seqs seen. */
    const readStream = async (c: SseCase, lastEventId: string | undefined, until: number, problems: string[]): Promise<{ status: number; seqs: number[] }> => {
      stats.requests++;
      const stream = await SseTestClient.open(url(c), { headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId } });
      stats.responses++;
      try {
        if (stream.status !== 200) {
          countError(stats, `HTTP ${stream.status}`);
          const body = await Promise.race([stream.body(), new Promise<string>((r) => setTimeout(() => r("(no body in time)"), settings.answerTimeoutMs))]);
          problems.push(...checkRefusal(stream.status, body, answers));
          return { status: stream.status, seqs: [] };
        }
        if (!String(stream.headers["content-type"]).startsWith("text/event-stream")) problems.push(`200 with Content-Type ${stream.headers["content-type"]}`);
        const seqs = () => stream.events().map((e) => e.event.seq);
        await stream
          .waitFor(() => stream.comments.includes("open") && (until <= 0 || seqs().some((s) => s >= until)), `the replay up to seq ${until}`, settings.answerTimeoutMs)
          .catch((err: Error) => problems.push(err.message));
        // The replay is written before the response starts: anything past `until` is already here.
        await new Promise((resolve) => setTimeout(resolve, 5));
        problems.push(...checkEventFrames(stream.frames, live.sessionId, answers));
        return { status: 200, seqs: seqs() };
      } finally {
        stream.close();
      }
    };

    const runCase = async (value: unknown): Promise<string[]> => {
      const c = value as SseCase;
      if (!gateway.alive()) return [`the gateway process is not running (${JSON.stringify(await gateway.exited)})`];
      stats.cases++;
      const problems: string[] = [];
      const expected = expectedAnswer(c);
      const reconnect = expected.status === 200 && c.reconnectAfter !== undefined && expected.after + c.reconnectAfter < live.newestSeq;
      const firstUntil = expected.status !== 200 ? 0 : reconnect ? expected.after + c.reconnectAfter! : live.newestSeq > expected.after ? live.newestSeq : 0;
      const first = await readStream(c, c.lastEventId, firstUntil, problems);
      if (first.status !== expected.status) return [...problems, `HTTP ${first.status}, expected ${expected.status}`];
      if (expected.status !== 200) return problems;
      // A reconnecting client keeps what it read up to the drop and resumes with the id of the last event, as EventSource does.
      let seqs = reconnect ? first.seqs.filter((s) => s <= firstUntil) : first.seqs;
      if (reconnect) {
        const second = await readStream(c, String(firstUntil), live.newestSeq, problems);
        if (second.status !== 200) problems.push(`the reconnect got HTTP ${second.status}`);
        seqs = [...seqs, ...second.seqs];
      }
      const wanted = replayAfter(expected.after, live.newestSeq);
      if (JSON.stringify(seqs) !== JSON.stringify(wanted)) problems.push(`events replayed: seqs ${JSON.stringify(seqs)}, expected ${JSON.stringify(wanted)}`);
      if (!gateway.alive()) problems.push(`the gateway process exited (${JSON.stringify(await gateway.exited)}); stderr:\n${gateway.stderr()}`);
      return problems;
    };

    return {
      gateway,
      baseUrl,
      cases: sseCases(live.newestSeq),
      describeCase: (value) => `  ${describeValue(value)}`,
      runCase,
      async normalSession() {
        // create → stream → send → turn.completed on the stream; then a reconnect resumes after a mid-turn event.
        const { session } = await httpRpcResult(baseUrl!, "session/create", { workspace: { workspacePath: upstream.cwd } });
        const streamUrl = `${baseUrl}/rpc/events?sessionId=${encodeURIComponent(session.sessionId)}`;
        const stream = await SseTestClient.open(streamUrl);
        try {
          if (stream.status !== 200) throw new Error(`GET /rpc/events answered ${stream.status}: ${await stream.body()}`);
          await httpRpcResult(baseUrl!, "session/send", { sessionId: session.sessionId, content: "hello after fuzzing" });
          await stream.waitForEvent("turn.completed");
        } finally {
          stream.close();
        }
        const all = stream.events().map((e) => e.event.seq);
        const middle = all[Math.floor(all.length / 2)]!;
        const resumed = await SseTestClient.open(streamUrl, { headers: { "last-event-id": String(middle) } });
        try {
          await resumed.waitForEvent("turn.completed");
          const seqs = resumed.events().map((e) => e.event.seq);
          if (JSON.stringify(seqs) !== JSON.stringify(all.filter((s) => s > middle))) throw new Error(`resuming after ${middle} replayed ${JSON.stringify(seqs)} of ${JSON.stringify(all)}`);
        } finally {
          resumed.close();
        }
      },
      quiesce: async () => undefined,
      stats,
      stop: async () => void (await gateway.stop()),
    };
  },
};

export default target;
