import fc from "fast-check";
import { askMessages } from "../dialects/ask.js";
import { describePiece, onePiece, renderPiece, type Piece } from "../generators/pieces.js";
import { GatewayProcess } from "../infra/gateway-process.js";
import { httpRpcResult, sessionWithATurn } from "../infra/http-rpc.js";
import { snapshotAmplification } from "../held-back/ask-properties.js";
import { KNOWN_ISSUES } from "../known-issues.js";
import { AnswerLedger } from "../oracles/answer-ledger.js";
import { ASK_MAX_BATCH, jsonRpcResponse, checkAskMessage, expectJsonRpc } from "../oracles/json-rpc-oracle.js";
import { Expectation } from "../oracles/expectation.js";
import { gatewayArgs, LIVE_ROTATE_EVERY } from "../stream-target.js";
import { MAX_MESSAGE_BYTES, type FuzzSettings } from "../settings.js";
import { countError, newStats, type FuzzTarget, type HeldBackProperty } from "../target.js";

/**
 * Ask JSON-RPC over `POST /rpc`: one body per case (a message, a batch, broken JSON, bytes that
 * are not UTF-8) with a content type that is right, nearly right or wrong. A JSON body gets one
 * HTTP answer holding exactly the responses owed (204 when none is); anything else gets 415 with a
 * JSON-RPC error object.
 */

interface HttpCase {
  piece: Piece;
  /** undefined: no Content-Type header. */
  contentType: string | undefined;
}

const JSON_TYPES = ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "application/json; charset=\"utf-8\""];
const OTHER_TYPES = ["text/plain", "application/x-www-form-urlencoded", "text/json", "application/jsonx", "multipart/form-data; boundary=x", "*/*", ""];
/** Charsets other than UTF-8: the body must be refused (415), not read as UTF-8 (a known defect). */
const FOREIGN_CHARSETS = ["application/json; charset=utf-16", "application/json; charset=iso-8859-1", "application/json; charset=latin1", "application/json; charset=utf-32le"];

const lenientUtf8 = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });

function mediaType(contentType: string | undefined): { json: boolean; foreignCharset: boolean } {
  if (contentType === undefined) return { json: false, foreignCharset: false };
  const [type, ...params] = contentType.split(";").map((p) => p.trim().toLowerCase());
  const charset = params.find((p) => p.startsWith("charset="))?.slice("charset=".length).replace(/"/g, "");
  return { json: type === "application/json", foreignCharset: charset !== undefined && charset !== "utf-8" };
}

const httpCases = (settings: FuzzSettings, withForeignCharsets: boolean): fc.Arbitrary<HttpCase> =>
  fc.record({
    piece: onePiece(askMessages(settings), settings.sizes, { batches: true, maxBatch: ASK_MAX_BATCH }),
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...JSON_TYPES) },
      { weight: 2, arbitrary: fc.constantFrom<string | undefined>(...OTHER_TYPES, undefined) },
      ...(withForeignCharsets ? [{ weight: 2, arbitrary: fc.constantFrom(...FOREIGN_CHARSETS) }] : []),
    ),
  });

const charsetProperty: HeldBackProperty = {
  issue: KNOWN_ISSUES.httpCharset,
  checks: "a JSON body declared in another charset than UTF-8 is refused with 415",
  async run(target) {
    const problems: string[] = [];
    for (const contentType of FOREIGN_CHARSETS) {
      const response = await fetch(`${target.baseUrl}/rpc`, { method: "POST", headers: { "content-type": contentType }, body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}', "utf16le") });
      if (response.status !== 415) problems.push(`${contentType}: HTTP ${response.status} ${await response.text()}`);
    }
    return problems;
  },
};

const target: FuzzTarget = {
  name: "POST /rpc (HTTP)",
  dialect: "ask",
  heldBack: [snapshotAmplification, charsetProperty],
  async start({ upstream, settings }) {
    const { process: gateway, baseUrl } = await GatewayProcess.start("serve", [...gatewayArgs({ upstream, settings }), "--port", "0"]);
    const stats = newStats();
    const liveSession = async () => {
      const { session } = await httpRpcResult(baseUrl!, "session/create", { workspace: { workspacePath: upstream.cwd } });
      return { sessionId: session.sessionId as string, cwd: upstream.cwd };
    };
    let live: { sessionId: string; cwd: string };
    try {
      live = await liveSession();
    } catch (err) {
      await gateway.stop();
      throw err;
    }

    const runCase = async (value: unknown): Promise<string[]> => {
      const { piece, contentType } = value as HttpCase;
      if (!gateway.alive()) return [`the gateway process is not running (${JSON.stringify(await gateway.exited)})`];
      // A case may have closed the session cases refer to, and its history only grows: another now and then.
      if (stats.cases > 0 && stats.cases % LIVE_ROTATE_EVERY === 0) live = await liveSession();
      else if (stats.cases % 50 === 49) {
        const usable = await httpRpcResult(baseUrl!, "session/events", { sessionId: live.sessionId, limit: 1 }).then(
          () => true,
          () => false,
        );
        if (!usable) live = await liveSession();
      }
      const body = renderPiece(piece, live).data;
      const headers: Record<string, string> = contentType === undefined ? {} : { "content-type": contentType };
      const problems: string[] = [];
      let status: number;
      let text: string;
      let responseType: string | null;
      try {
        const response = await fetch(`${baseUrl}/rpc`, { method: "POST", headers, body: new Uint8Array(body), signal: AbortSignal.timeout(settings.answerTimeoutMs) });
        status = response.status;
        responseType = response.headers.get("content-type");
        text = await response.text();
      } catch (err) {
        // Refused while still uploading (413 and the connection closed): the client may see only the reset.
        if (body.length > MAX_MESSAGE_BYTES) return [];
        return [`POST /rpc got no answer: ${(err as Error).message}`];
      }
      stats.cases++;
      const { json } = mediaType(contentType);
      if (status >= 400) countError(stats, `HTTP ${status}`, 1, text);
      if (!json || body.length > MAX_MESSAGE_BYTES) stats.requests++;
      if (body.length > MAX_MESSAGE_BYTES) return status === 413 ? errorBody(text) : [`a body of ${body.length} bytes: HTTP ${status}, expected 413`];
      if (!json) {
        // Refused before reading: 415 and a JSON-RPC error object.
        if (status !== 415) problems.push(`Content-Type ${JSON.stringify(contentType)}: HTTP ${status}, expected 415`);
        problems.push(...errorBody(text));
        return problems;
      }
      const expectation = new Expectation();
      expectJsonRpc(lenientUtf8.decode(body), expectation, { blankIsParseError: true });
      stats.requests += expectation.sent;
      const owesSomething = expectation.nullsAtLeast > 0 || [...expectation.owed.values()].some((o) => o.min > 0);
      const mayOweSomething = expectation.nullsAtMost > 0 || expectation.owed.size > 0;
      if (status === 204) {
        if (owesSomething) problems.push("HTTP 204 where responses were owed");
        if (text !== "") problems.push(`HTTP 204 with a body: ${text.slice(0, 200)}`);
        return problems;
      }
      if (status !== 200) return [...problems, `HTTP ${status} for a JSON body (expected 200 or 204): ${text.slice(0, 300)}`];
      if (!mayOweSomething) problems.push(`HTTP 200 where nothing was owed (expected 204): ${text.slice(0, 300)}`);
      if (!responseType?.startsWith("application/json")) problems.push(`HTTP 200 with Content-Type ${responseType}`);
      let answer: unknown;
      try {
        answer = JSON.parse(text);
      } catch {
        return [...problems, `HTTP 200 with a body that is not JSON: ${text.slice(0, 300)}`];
      }
      const ledger = new AnswerLedger(expectation, { response: jsonRpcResponse, check: checkAskMessage });
      for (const m of Array.isArray(answer) ? answer : [answer]) ledger.receive(m);
      stats.responses += ledger.responses;
      for (const [code, n] of ledger.errorCodes) countError(stats, code, n, ledger.errorSamples.get(code));
      problems.push(...ledger.verdict());
      if (!gateway.alive()) problems.push(`the gateway process exited (${JSON.stringify(await gateway.exited)}); stderr:\n${gateway.stderr()}`);
      return problems;
    };

    return {
      gateway,
      baseUrl,
      cases: httpCases(settings, settings.knownIssues).filter((c) => settings.knownIssues || !mediaType(c.contentType).foreignCharset),
      describeCase: (value) => {
        const { piece, contentType } = value as HttpCase;
        return `  Content-Type: ${contentType === undefined ? "(none)" : JSON.stringify(contentType)}\n  body: ${describePiece(piece)}`;
      },
      runCase,
      // Over POST /rpc alone (events are read with session/events): create → send → turn.completed.
      normalSession: async () => void (await sessionWithATurn(baseUrl!, upstream.cwd, "hello after fuzzing")),
      quiesce: async () => undefined,
      stats,
      stop: async () => void (await gateway.stop()),
    };
  },
};

/** A refusal's body: one JSON-RPC error object with a null id. */
function errorBody(text: string): string[] {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const problems = checkAskMessage(body, undefined);
    if (body.id !== null || typeof (body.error as { code?: unknown })?.code !== "number") problems.push(`a refusal's body should be a JSON-RPC error with a null id: ${text.slice(0, 300)}`);
    return problems;
  } catch {
    return [`a refusal's body is not JSON: ${text.slice(0, 300)}`];
  }
}

export default target;
