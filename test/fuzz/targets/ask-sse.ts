import fc from "fast-check";
import { SseTestClient } from "../../support/sse-client.js";
import { describeValue } from "../generators/json-text.js";
import { GatewayProcess } from "../infra/gateway-process.js";
import { httpRpcResult, sessionWithATurn } from "../infra/http-rpc.js";
import { checkAskMessage } from "../oracles/json-rpc-oracle.js";
import { snapshotAmplification } from "../held-back/ask-properties.js";
import { gatewayArgs } from "../stream-target.js";
import { countError, newStats, type FuzzTarget } from "../target.js";

/**
 * Ask events as server-sent events (`GET /rpc/events`), reconnecting: each case opens the stream
 * of a session with an `afterSeq` and/or `Last-Event-ID` that is right, out of range or garbage,
 * and optionally drops the connection after some events and reconnects with the id of the last
 * one, as EventSource does. A stream must replay exactly the events after its cursor — valid,
 * in order, no gap, no repeat across the reconnect; a refusal is 400/404 with a JSON-RPC error.
 */

interface SseCase {
  /** "live": the session with events; otherwise the sessionId query value as sent (undefined: left out). */
  session: "live" | string | undefined;
  afterSeq: string | undefined;
  /** The Last-Event-ID header (undefined: not sent). */
  lastEventId: string | undefined;
  /** Reconnect after this many events (undefined: read the whole replay on one connection). */
  reconnectAfter: number | undefined;
}

/** Values a client might put where an event seq goes. */
const cursor = (newestSeq: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: newestSeq + 2 }).map(String) },
    {
      weight: 3,
      arbitrary: fc.constantFrom("", "0", "-1", "1.5", "1e1", "+1", "0x1", "00", "01", " 2", "2 ", "9007199254740991", "9007199254740992", "99999999999999999999", "１", "NaN", "null", "\t3"),
    },
    // What a header can carry: printable Latin-1 and tabs.
    { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 12 }) },
  );

const sessionQuery = (): fc.Arbitrary<SseCase["session"]> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant("live") },
    { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, "", " ", "\t", "00000000-0000-4000-8000-000000000000", "⟦session⟧", "live ") },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map(wellFormed) },
  );

/** Lone surrogates as U+FFFD (a URL component must be well-formed UTF-16 to be percent-encoded). */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** What an HTTP header value can carry (node refuses to send anything else). */
const headerSafe = (s: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(s);

function sseCases(newestSeq: number): fc.Arbitrary<SseCase> {
  return fc.record({
    session: sessionQuery(),
    afterSeq: fc.option(cursor(newestSeq), { nil: undefined }),
    lastEventId: fc.option(cursor(newestSeq).filter(headerSafe), { nil: undefined, freq: 3 }),
    reconnectAfter: fc.option(fc.integer({ min: 1, max: Math.max(1, newestSeq - 1) }), { nil: undefined }),
  });
}

/** What the gateway must answer: a status, and for 200 the first event seq it replays. */
function expectedAnswer(c: SseCase): { status: 200; after: number } | { status: 400 | 404 } {
  const sessionId = c.session;
  if (sessionId === undefined || sessionId === "") return { status: 400 };
  // Node reads header values without the optional whitespace around them.
  const header = c.lastEventId?.replace(/^[ \t]+|[ \t]+$/g, "");
  const text = header ?? c.afterSeq;
  let after = 0;
  if (text !== undefined && text !== "") {
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return { status: 400 };
    after = Number(text);
  }
  if (sessionId === "live") return { status: 200, after };
  if (!/\S/.test(sessionId)) return { status: 400 };
  return { status: 404 };
}

const ERROR_CODE_OF_STATUS: Record<number, number[]> = { 400: [-32602, -32600], 404: [-32004] };

const target: FuzzTarget = {
  name: "GET /rpc/events (SSE)",
  dialect: "ask",
  heldBack: [snapshotAmplification],
  async start({ upstream, settings }) {
    const { process: gateway, baseUrl } = await GatewayProcess.start("serve", [...gatewayArgs({ upstream, settings }), "--port", "0"]);
    const stats = newStats();
    let live: { sessionId: string; newestSeq: number };
    try {
      live = await sessionWithATurn(baseUrl!, upstream.cwd);
    } catch (err) {
      await gateway.stop();
      throw err;
    }

    const url = (c: SseCase) => {
      const query: string[] = [];
      if (c.session !== undefined) query.push(`sessionId=${encodeURIComponent(c.session === "live" ? live.sessionId : c.session)}`);
      if (c.afterSeq !== undefined) query.push(`afterSeq=${encodeURIComponent(c.afterSeq)}`);
      return `${baseUrl}/rpc/events${query.length ? `?${query.join("&")}` : ""}`;
    };

    /** Opens one stream and reads its replay (up to `until` or the newest event); resolves with the seqs seen. */
    const readStream = async (c: SseCase, lastEventId: string | undefined, until: number, problems: string[]): Promise<{ status: number; seqs: number[] }> => {
      stats.requests++;
      const stream = await SseTestClient.open(url(c), { headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId } });
      stats.responses++;
      try {
        if (stream.status !== 200) {
          countError(stats, `HTTP ${stream.status}`, 1);
          const body = await Promise.race([stream.body(), new Promise<string>((r) => setTimeout(() => r("(no body within the time limit)"), settings.answerTimeoutMs))]);
          problems.push(...refusal(stream.status, body));
          return { status: stream.status, seqs: [] };
        }
        if (!String(stream.headers["content-type"]).startsWith("text/event-stream")) problems.push(`200 with Content-Type ${stream.headers["content-type"]}`);
        const seqs = () => stream.events().map((e) => e.event.seq);
        await stream.waitFor(() => stream.comments.includes("open") && (until <= 0 || seqs().some((s) => s >= until)), `the replay up to seq ${until}`, settings.answerTimeoutMs).catch((err: Error) => problems.push(err.message));
        // The replay is written before the response starts; anything past `until` would already be here.
        await new Promise((resolve) => setTimeout(resolve, 5));
        for (const frame of stream.frames) {
          if (frame.event !== "session/event") {
            problems.push(`a frame that is not a session/event: ${JSON.stringify(frame).slice(0, 300)}`);
            continue;
          }
          let data: any;
          try {
            data = JSON.parse(frame.data ?? "");
          } catch {
            problems.push(`a frame whose data is not JSON: ${JSON.stringify(frame).slice(0, 300)}`);
            continue;
          }
          problems.push(...checkAskMessage({ jsonrpc: "2.0", method: "session/event", params: data }, undefined));
          if (data?.sessionId !== live.sessionId) problems.push(`an event of another session: ${frame.data?.slice(0, 200)}`);
          if (frame.id !== String(data?.event?.seq)) problems.push(`frame id ${frame.id} is not its event's seq ${data?.event?.seq}`);
        }
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
      const firstUntil = expected.status === 200 ? (reconnect ? expected.after + c.reconnectAfter! : live.newestSeq > expected.after ? live.newestSeq : 0) : 0;
      const first = await readStream(c, c.lastEventId, firstUntil, problems);
      if (first.status !== expected.status) return [...problems, `HTTP ${first.status}, expected ${expected.status}`];
      if (expected.status !== 200) return problems;
      let seqs = reconnect ? first.seqs.filter((s) => s <= firstUntil) : first.seqs;
      if (reconnect) {
        // As EventSource does: the same URL, with the id of the last event received.
        const second = await readStream(c, String(firstUntil), live.newestSeq, problems);
        if (second.status !== 200) problems.push(`the reconnect got HTTP ${second.status}`);
        seqs = [...seqs, ...second.seqs];
      }
      const wanted = Array.from({ length: Math.max(0, live.newestSeq - expected.after) }, (_, i) => expected.after + 1 + i);
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
        // create → subscribe over SSE → send → turn.completed on the stream; then a reconnect resumes after a mid-turn event.
        const { session } = await httpRpcResult(baseUrl!, "session/create", { workspace: { workspacePath: upstream.cwd } });
        const sessionId = session.sessionId as string;
        const stream = await SseTestClient.open(`${baseUrl}/rpc/events?sessionId=${encodeURIComponent(sessionId)}`);
        try {
          if (stream.status !== 200) throw new Error(`GET /rpc/events answered ${stream.status}: ${await stream.body()}`);
          await httpRpcResult(baseUrl!, "session/send", { sessionId, content: "hello after fuzzing" });
          await stream.waitForEvent("turn.completed");
        } finally {
          stream.close();
        }
        const all = stream.events().map((e) => e.event.seq);
        const middle = all[Math.floor(all.length / 2)]!;
        const resumed = await SseTestClient.open(`${baseUrl}/rpc/events?sessionId=${encodeURIComponent(sessionId)}`, { headers: { "last-event-id": String(middle) } });
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

/** A refused stream: 400 or 404 with a JSON-RPC error object whose code matches the status. */
function refusal(status: number, body: string): string[] {
  let parsed: any;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [`HTTP ${status} with a body that is not JSON: ${body.slice(0, 200)}`];
  }
  const problems = checkAskMessage({ jsonrpc: "2.0", id: null, ...parsed }, undefined);
  if (!ERROR_CODE_OF_STATUS[status]?.includes(parsed?.error?.code)) problems.push(`HTTP ${status} with error ${JSON.stringify(parsed?.error)}`);
  return problems;
}

export default target;
