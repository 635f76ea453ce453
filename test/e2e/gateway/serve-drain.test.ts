import { describe, expect, it } from "vitest";
import { AskTestClient, RpcError } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { serveCli } from "../../support/cli.js";
import { postRpc } from "../../support/http-gateway.js";
import { waitUntil } from "../../support/operated-gateway.js";

/**
 * `tau-gateway serve` receiving SIGTERM with a turn in flight: it stops being ready, refuses new
 * work, lets the turn finish (well inside the drain timeout), answers every request it accepted,
 * closes its sockets with 1001 and exits 0.
 */

const cleanups = cleanupsAfterEach();
const serve = (args: string[]) => serveCli(args, cleanups);

describe("tau-gateway serve on SIGTERM", () => {
  it("drains: not ready, new work refused with -32012, the turn in flight finishes, every request answered, exit 0", async () => {
    // The drain timeout is far above the turn's length, so the turn finishes inside it.
    const served = await serve(["--port", "0", "--drain-timeout", "60000", "--log-level", "info"]);
    const client = await AskTestClient.websocket(`${served.baseUrl.replace("http://", "ws://")}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const closed = new Promise<number>((resolve) => client.socket.once("close", (code) => resolve(code)));

    const sessionId = (await client.request("session/create", {})).session.sessionId as string;
    await client.request("session/subscribe", { sessionId });
    const sent = await client.request("session/send", { sessionId, content: "/sleep 3000\nslept well" });
    expect(sent).toMatchObject({ accepted: true });
    await client.waitForEvent(sessionId, "turn.started");

    // A request sent together with the signal: whichever wins the race, it must be answered.
    let answer: unknown = "silence";
    const queued = client.request("session/send", { sessionId, content: "after the sleep", mode: "queue" }).then(
      (result) => (answer = { result }),
      (error: unknown) => (answer = { error }),
    );
    served.child.kill("SIGTERM");

    await waitUntil(async () => (await fetch(`${served.baseUrl}/readyz`)).status === 503, "/readyz to turn 503");
    const refused = await client.request("ping").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RpcError);
    expect(refused).toMatchObject({ code: -32012, message: expect.stringMatching(/shutting down/), data: { retryable: true } });
    const overHttp = await postRpc(served.baseUrl, { jsonrpc: "2.0", id: 9, method: "ping" });
    expect(overHttp.body).toMatchObject({ id: 9, error: { code: -32012 } });

    // The turn in flight runs to its end and subscribers see it.
    // (Found by its turn: the queued message's turn may complete right after it, before a look.)
    const completedOf = () => client.eventsOf(sessionId).find((e) => e.type === "turn.completed" && (e.payload as { turnId?: string }).turnId === sent.turnId);
    await client.waitFor(() => completedOf() !== undefined, "turn.completed of the turn in flight");
    expect(completedOf()!.payload).toMatchObject({ turnId: sent.turnId, response: "You said: slept well" });

    expect(await closed).toBe(1001);
    await queued;
    expect(answer).not.toBe("silence");
    if ((answer as { error?: unknown }).error !== undefined) expect((answer as { error: RpcError }).error).toBeInstanceOf(RpcError);
    expect(client.invalid).toEqual([]);
    expect(await served.exit).toEqual({ code: 0, signal: null });
    expect(served.stderr()).toMatch(/"drained":true/);
  });

  it("stops waiting at the drain deadline when the turn cannot finish, closes with 1001 and exits 0", async () => {
    const served = await serve(["--port", "0", "--drain-timeout", "200"]);
    const client = await AskTestClient.websocket(`${served.baseUrl.replace("http://", "ws://")}/rpc`);
    cleanups.push(() => client.socket.terminate());
    const closed = new Promise<number>((resolve) => client.socket.once("close", (code) => resolve(code)));
    const sessionId = (await client.request("session/create", {})).session.sessionId as string;
    await client.request("session/send", { sessionId, content: "/sleep 30000\nnever gets here" });

    served.child.kill("SIGTERM");
    expect(await closed).toBe(1001);
    expect(await served.exit).toEqual({ code: 0, signal: null });
    // The log says what was abandoned.
    expect(served.stderr()).toMatch(/"drained":false/);
    expect(served.stderr()).toMatch(/"upstream requests":1/);
  });
});
