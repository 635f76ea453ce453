import { askMessages } from "../dialects/ask.js";
import { httpCases, mediaType, type HttpCase } from "../generators/http-bodies.js";
import { describePiece, renderPiece } from "../generators/pieces.js";
import { snapshotAmplification } from "../properties/ask-properties.js";
import { foreignCharsets } from "../properties/http-properties.js";
import { GatewayProcess } from "../infra/gateway-process.js";
import { httpRpcResult, sessionWithATurn } from "../infra/http-rpc.js";
import { checkHttpAnswer, type HttpAnswer } from "../oracles/http-oracle.js";
import { ASK_MAX_BATCH, checkAskMessage, jsonRpcResponse } from "../oracles/json-rpc-oracle.js";
import { MAX_MESSAGE_BYTES } from "../settings.js";
import { gatewayArgs, LIVE_ROTATE_EVERY } from "../stream-target.js";
import { countError, newStats, type FuzzTarget } from "../target.js";

/**
 * Ask JSON-RPC over `POST /rpc`: one body per case (a message, a batch, broken JSON, bytes that
 * are not UTF-8) with a Content-Type that is right, nearly right or wrong (oracles/http-oracle.ts).
 */
const target: FuzzTarget = {
  name: "POST /rpc (HTTP)",
  dialect: "ask",
  properties: [snapshotAmplification, foreignCharsets],
  async start({ upstream, settings }) {
    const { process: gateway, baseUrl } = await GatewayProcess.start("serve", [...gatewayArgs({ upstream, settings }), "--port", "0"]);
    const stats = newStats();
    const answers = { response: jsonRpcResponse, check: checkAskMessage };
    const liveSession = async () => {
      const { session } = await httpRpcResult(baseUrl!, "session/create", { workspace: { workspacePath: upstream.cwd } });
      return { sessionId: session.sessionId as string, cwd: upstream.cwd };
    };
    const stillUsable = (sessionId: string) =>
      httpRpcResult(baseUrl!, "session/events", { sessionId, limit: 1 }).then(
        () => true,
        () => false,
      );
    let live = await liveSession().catch(async (err: unknown) => {
      await gateway.stop();
      throw err;
    });

    const runCase = async (value: unknown): Promise<string[]> => {
      const { piece, contentType } = value as HttpCase;
      if (!gateway.alive()) return [`the gateway process is not running (${JSON.stringify(await gateway.exited)})`];
      // A case may have closed the shared session, and its history only grows: another now and then.
      if ((stats.cases > 0 && stats.cases % LIVE_ROTATE_EVERY === 0) || (stats.cases % 50 === 49 && !(await stillUsable(live.sessionId)))) live = await liveSession();
      const body = renderPiece(piece, live).data;
      let answer: HttpAnswer;
      try {
        const headers: Record<string, string> = contentType === undefined ? {} : { "content-type": contentType };
        const response = await fetch(`${baseUrl}/rpc`, { method: "POST", headers, body: new Uint8Array(body), signal: AbortSignal.timeout(settings.answerTimeoutMs) });
        answer = { status: response.status, contentType: response.headers.get("content-type"), text: await response.text() };
      } catch (err) {
        // Refused while still uploading (413, connection closed): the client may see only the reset.
        return body.length > MAX_MESSAGE_BYTES ? [] : [`POST /rpc got no answer: ${(err as Error).message}`];
      }
      const { json, foreignCharset } = mediaType(contentType);
      const verdict = checkHttpAnswer(body, json && !foreignCharset, answer, answers);
      stats.cases++;
      stats.requests += verdict.sent;
      if (answer.status >= 400) countError(stats, `HTTP ${answer.status}`, 1, answer.text);
      if (verdict.ledger) {
        stats.responses += verdict.ledger.responses;
        for (const [code, n] of verdict.ledger.errorCodes) countError(stats, code, n, verdict.ledger.errorSamples.get(code));
      }
      if (!gateway.alive()) verdict.problems.push(`the gateway process exited (${JSON.stringify(await gateway.exited)}); stderr:\n${gateway.stderr()}`);
      return verdict.problems;
    };

    return {
      gateway,
      baseUrl,
      cases: httpCases(askMessages(settings), settings, { maxBatch: ASK_MAX_BATCH }),
      describeCase: (value) => {
        const { piece, contentType } = value as HttpCase;
        return `  Content-Type: ${contentType === undefined ? "(none)" : JSON.stringify(contentType)}\n  body: ${describePiece(piece)}`;
      },
      runCase,
      // Over POST /rpc alone (events read with session/events): create → send → turn.completed.
      normalSession: async () => void (await sessionWithATurn(baseUrl!, upstream.cwd, "hello after fuzzing")),
      quiesce: async () => undefined,
      stats,
      stop: async () => void (await gateway.stop()),
    };
  },
};

export default target;
