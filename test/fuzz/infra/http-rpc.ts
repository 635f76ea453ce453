import { postRpc } from "../../support/http-gateway.js";
import { checkAskMessage } from "../oracles/json-rpc-oracle.js";

let calls = 0;

/** A request of the runner's own over POST /rpc; resolves with its result (checked against the registry). */
export async function httpRpcResult(baseUrl: string, method: string, params: unknown): Promise<any> {
  const id = `fuzz-runner-${++calls}`;
  const { status, body } = await postRpc(baseUrl, { jsonrpc: "2.0", id, method, params });
  if (status !== 200) throw new Error(`POST /rpc ${method}: HTTP ${status} ${JSON.stringify(body)}`);
  const problems = checkAskMessage(body, method);
  if (problems.length) throw new Error(`POST /rpc ${method}: ${problems.join("; ")}`);
  if (body.error) throw new Error(`POST /rpc ${method} failed: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** A session with one completed turn, created over POST /rpc; resolves with its id and newest event seq. */
export async function sessionWithATurn(baseUrl: string, cwd: string, text = "hello"): Promise<{ sessionId: string; newestSeq: number }> {
  const { session } = await httpRpcResult(baseUrl, "session/create", { workspace: { workspacePath: cwd } });
  const sessionId = session.sessionId as string;
  const { turnId } = await httpRpcResult(baseUrl, "session/send", { sessionId, content: text });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { events } = await httpRpcResult(baseUrl, "session/events", { sessionId });
    const done = events.find((e: any) => e.type === "turn.completed" && e.payload.turnId === turnId);
    if (done) return { sessionId, newestSeq: events.at(-1).seq };
    if (Date.now() > deadline) throw new Error(`the turn of ${sessionId} did not complete; events: ${events.map((e: any) => e.type).join(" ")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
