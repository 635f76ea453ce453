import { afterEach, describe, expect, it, vi } from "vitest";
import type { RequestCause } from "../../src/shared/request-cause.js";
import { ACP_OUTBOUND } from "../../src/transports/acp-jsonrpc.js";
import { ASK_OUTBOUND } from "../../src/transports/ask-jsonrpc.js";
import { CODEX_OUTBOUND } from "../../src/transports/codex-jsonrpc.js";
import { JsonRpcConnection, type CallHooks } from "../../src/transports/jsonrpc-connection.js";
import { connectionOrder, PIPE_TRANSPORT, WEBSOCKET_TRANSPORT, type ConnectionOrder } from "../../src/transports/outbound-policy.js";
import { OutboundSequencer } from "../../src/transports/outbound-sequencer.js";
import { RequestOrder } from "../../src/transports/request-order.js";

/**
 * The two dialect-neutral parts of a connection's order (the transports use them end to end, see
 * ask-ordering.test.ts and codex-approval-order.test.ts): what goes out, and when a request runs.
 */

const nextEventLoopTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Ask's order: answers in request order, everything else behind the open answers, at once after them. */
const ASK = connectionOrder(ASK_OUTBOUND, WEBSOCKET_TRANSPORT);
/** Answers as they are made, what a request caused one event-loop turn after its answer, the rest at once. */
const NEXT_TICK: ConnectionOrder = { answers: "completion", caused: "next-tick", uncaused: "unrelated" };

/** A sequencer over a sink that records its writes. */
function recorded(order: ConnectionOrder = ASK) {
  const writes: string[] = [];
  const sequencer = new OutboundSequencer((text) => writes.push(text), order);
  return { sequencer, texts: () => [...writes] };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("outbound policies", () => {
  it("each dialect states its order, and the wire decides how a caused message gets a read of its own", () => {
    expect(connectionOrder(ASK_OUTBOUND, PIPE_TRANSPORT)).toEqual({ answers: "arrival", caused: "with-response", uncaused: "caused-by-open-requests" });
    expect(connectionOrder(ACP_OUTBOUND, PIPE_TRANSPORT)).toEqual({ answers: "completion", caused: "next-tick", uncaused: "unrelated" });
    expect(connectionOrder(CODEX_OUTBOUND, WEBSOCKET_TRANSPORT)).toEqual({ answers: "completion", caused: "next-tick", uncaused: "unrelated" });
    expect(connectionOrder(CODEX_OUTBOUND, PIPE_TRANSPORT)).toEqual({ answers: "completion", caused: { delayMs: 25 }, uncaused: "unrelated" });
  });
});

describe("OutboundSequencer, answers in arrival order (Ask)", () => {
  it("writes a message at once when no response is open", () => {
    const { sequencer, texts } = recorded();
    sequencer.send("n1");
    expect(texts()).toEqual(["n1"]);
  });

  it("holds messages behind an open response and writes them right after it", async () => {
    const { sequencer, texts } = recorded();
    const slot = sequencer.reserve();
    sequencer.send("event 1");
    sequencer.send("event 2");
    expect(texts()).toEqual([]);
    await slot.fill("response");
    expect(texts()).toEqual(["response", "event 1", "event 2"]);
  });

  it("writes responses in the order their places were reserved, whatever order they are filled in", async () => {
    const { sequencer, texts } = recorded();
    const [first, second, third] = [sequencer.reserve(), sequencer.reserve(), sequencer.reserve()];
    sequencer.send("event");
    const thirdWritten = third.fill("3");
    void second.fill("2");
    expect(texts()).toEqual([]);
    await first.fill("1");
    await thirdWritten;
    expect(texts()).toEqual(["1", "2", "3", "event"]);
  });

  it("a request that needs no response releases what waits behind it", async () => {
    const { sequencer, texts } = recorded();
    const slot = sequencer.reserve();
    sequencer.send("event");
    await slot.fill(undefined);
    expect(texts()).toEqual(["event"]);
  });

  it("a message caused by a later request waits behind the earlier answers too", async () => {
    const { sequencer, texts } = recorded();
    const [first, second] = [sequencer.reserve(), sequencer.reserve()];
    sequencer.send("caused by the second", second.cause);
    const secondWritten = second.fill("2");
    expect(texts()).toEqual([]);
    await first.fill("1");
    await secondWritten;
    expect(texts()).toEqual(["1", "2", "caused by the second"]);
  });

  it("keeps messages in order across many held ones (the queue compacts as it goes)", async () => {
    const { sequencer, texts } = recorded();
    const expected: string[] = [];
    for (let round = 0; round < 5; round++) {
      const slot = sequencer.reserve();
      for (let i = 0; i < 1500; i++) sequencer.send(`${round}:${i}`);
      const later = sequencer.reserve();
      await slot.fill(`response ${round}`);
      expected.push(`response ${round}`, ...Array.from({ length: 1500 }, (_, i) => `${round}:${i}`));
      await later.fill(undefined);
    }
    expect(texts()).toEqual(expected);
  });
});

describe("OutboundSequencer, answers as they are made", () => {
  it("writes each response as soon as it is made, whatever arrived before it", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const [first, second] = [sequencer.reserve(), sequencer.reserve()];
    await second.fill("2");
    expect(texts()).toEqual(["2"]);
    await first.fill("1");
    expect(texts()).toEqual(["2", "1"]);
  });

  it("does not hold unrelated messages, not even behind held caused ones", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const slot = sequencer.reserve();
    sequencer.send("caused", slot.cause);
    sequencer.send("unrelated 1");
    sequencer.send("unrelated 2");
    expect(texts()).toEqual(["unrelated 1", "unrelated 2"]);
    await slot.fill("response");
    await nextEventLoopTurn();
    expect(texts()).toEqual(["unrelated 1", "unrelated 2", "response", "caused"]);
  });

  it("holds a caused message until its own response, not another's", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const [cause, other] = [sequencer.reserve(), sequencer.reserve()];
    sequencer.send("caused", cause.cause);
    await other.fill("other response");
    await nextEventLoopTurn();
    expect(texts()).toEqual(["other response"]);
    await cause.fill("response");
    await nextEventLoopTurn();
    expect(texts()).toEqual(["other response", "response", "caused"]);
  });

  it("with uncaused messages taken as caused by the open requests, holds them until every open response is released", async () => {
    const { sequencer, texts } = recorded({ answers: "completion", caused: "with-response", uncaused: "caused-by-open-requests" });
    const [first, second] = [sequencer.reserve(), sequencer.reserve()];
    sequencer.send("while both are open");
    await second.fill("2");
    expect(texts()).toEqual(["2"]);
    await first.fill("1");
    expect(texts()).toEqual(["2", "1", "while both are open"]);
    const third = sequencer.reserve();
    sequencer.send("while the third is open");
    sequencer.send("caused by the first, long answered", first.cause);
    await third.fill("3");
    expect(texts().slice(3)).toEqual(["3", "while the third is open", "caused by the first, long answered"]);
  });
});

describe("OutboundSequencer, release of what a request caused", () => {
  it("with-response: right after the response, in the same event-loop turn", async () => {
    const { sequencer, texts } = recorded({ answers: "completion", caused: "with-response", uncaused: "unrelated" });
    const slot = sequencer.reserve();
    sequencer.send("caused", slot.cause);
    expect(texts()).toEqual([]);
    await slot.fill("response");
    expect(texts()).toEqual(["response", "caused"]);
  });

  it("next-tick: on a later event-loop turn, in a write of its own", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const slot = sequencer.reserve();
    sequencer.send("turn started", slot.cause);
    sequencer.send("delta", slot.cause);
    await slot.fill("response");
    // The microtasks after the response have run; the rest waits for the event loop.
    await Promise.resolve();
    expect(texts()).toEqual(["response"]);
    await nextEventLoopTurn();
    expect(texts()).toEqual(["response", "turn started", "delta"]);
    // Once released, the request's later consequences go out at once.
    sequencer.send("later", slot.cause);
    expect(texts().at(-1)).toBe("later");
  });

  it("a delay: that long after the response", async () => {
    vi.useFakeTimers();
    const { sequencer, texts } = recorded({ answers: "completion", caused: { delayMs: 25 }, uncaused: "unrelated" });
    const slot = sequencer.reserve();
    sequencer.send("turn started", slot.cause);
    await slot.fill("response");
    vi.advanceTimersByTime(24);
    expect(texts()).toEqual(["response"]);
    vi.advanceTimersByTime(1);
    expect(texts()).toEqual(["response", "turn started"]);
  });

  it("a caused message sent after the response but before the release waits its turn behind what was held", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const slot = sequencer.reserve();
    sequencer.send("held", slot.cause);
    await slot.fill("response");
    sequencer.send("sent before the release", slot.cause);
    expect(texts()).toEqual(["response"]);
    await nextEventLoopTurn();
    expect(texts()).toEqual(["response", "held", "sent before the release"]);
  });

  it("caused messages keep their order among themselves, whichever response comes first", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const [first, second] = [sequencer.reserve(), sequencer.reserve()];
    sequencer.send("caused by the first", first.cause);
    sequencer.send("caused by the second", second.cause);
    await second.fill("2");
    await nextEventLoopTurn();
    expect(texts()).toEqual(["2"]);
    await first.fill("1");
    await nextEventLoopTurn();
    expect(texts()).toEqual(["2", "1", "caused by the first", "caused by the second"]);
  });

  it("what a request without a response (a notification) caused goes out once it has run", async () => {
    const { sequencer, texts } = recorded(NEXT_TICK);
    const slot = sequencer.reserve();
    sequencer.send("caused", slot.cause);
    await slot.fill(undefined);
    expect(texts()).toEqual(["caused"]);
  });

  it("a cause from another connection counts as none", () => {
    const other = recorded(NEXT_TICK).sequencer.reserve();
    const { sequencer, texts } = recorded(NEXT_TICK);
    sequencer.send("caused elsewhere", other.cause);
    sequencer.send("caused by nothing known", {} as RequestCause);
    expect(texts()).toEqual(["caused elsewhere", "caused by nothing known"]);
  });
});

describe("OutboundSequencer.close", () => {
  it("writes what is ready, drops what waits behind an open response, and settles its slot", async () => {
    const { sequencer, texts } = recorded();
    const answered = sequencer.reserve();
    sequencer.send("after the answer");
    const open = sequencer.reserve();
    sequencer.send("behind the open one");
    void answered.fill("answer");
    sequencer.close();
    await open.fill("too late");
    sequencer.send("after close");
    expect(texts()).toEqual(["answer", "after the answer"]);
  });

  it("writes what an answered request caused without waiting for its release, and drops what an open one caused", async () => {
    vi.useFakeTimers();
    const { sequencer, texts } = recorded({ answers: "completion", caused: { delayMs: 60_000 }, uncaused: "unrelated" });
    const [answered, open] = [sequencer.reserve(), sequencer.reserve()];
    sequencer.send("caused by the answered one", answered.cause);
    sequencer.send("caused by the open one", open.cause);
    sequencer.send("caused by the answered one, behind", answered.cause);
    await answered.fill("answer");
    expect(texts()).toEqual(["answer"]);
    sequencer.close();
    expect(texts()).toEqual(["answer", "caused by the answered one"]);
    await open.fill("too late");
    sequencer.send("after close");
    sequencer.reserve();
    expect(texts()).toEqual(["answer", "caused by the answered one"]);
  });
});

describe("a JSON-RPC connection's methods name what their requests cause", () => {
  const codes = { parse_error: -32700, invalid_request: -32600, method_not_found: -32601, invalid_params: -32602, internal_error: -32603 };

  /** A connection under Codex's policy on a WebSocket whose `start` method sends what `cause` asks of it. */
  function connection(cause: (connection: JsonRpcConnection, hooks: CallHooks) => void) {
    const written: Array<Record<string, unknown>> = [];
    const rpc: JsonRpcConnection = new JsonRpcConnection(
      (text) => void written.push(JSON.parse(String(text)) as Record<string, unknown>),
      {
        jsonrpcMember: "omit",
        outbound: CODEX_OUTBOUND,
        methods: ["start"],
        call: async (_method, _params, hooks) => {
          cause(rpc, hooks);
          sendUnrelated();
          return { started: true };
        },
        errorOf: () => ({ code: -32603, message: "failed" }),
        codes,
        batches: false,
        answerUnidentifiable: false,
        firstRequestId: 0,
        cancelNotice: (id) => ({ method: "$/cancel_request", params: { requestId: id } }),
      },
    );
    const sendUnrelated = () => rpc.send({ method: "unrelated" });
    return { rpc, written };
  }

  it("a caused notification and request follow the response in a later event-loop turn; an unrelated one goes out at once", async () => {
    const { rpc, written } = connection((c, hooks) => {
      c.send({ method: "caused/notification" }, hooks.cause);
      void c.request("caused/request", {}, undefined, hooks.cause).answer.catch(() => undefined);
    });
    await rpc.receive(JSON.stringify({ id: 1, method: "start" }));
    expect(written).toEqual([{ method: "unrelated" }, { id: 1, result: { started: true } }]);
    await nextEventLoopTurn();
    expect(written.slice(2)).toEqual([{ method: "caused/notification" }, { id: 0, method: "caused/request", params: {} }]);
    rpc.close();
  });

  it("the notice that withdraws a caused request follows that request", async () => {
    const controller = new AbortController();
    const { rpc, written } = connection((c, hooks) => {
      void c.request("caused/request", {}, controller.signal, hooks.cause).answer.catch(() => undefined);
      controller.abort();
    });
    await rpc.receive(JSON.stringify({ id: 1, method: "start" }));
    await nextEventLoopTurn();
    expect(written.map((m) => m.method ?? m.id)).toEqual(["unrelated", 1, "caused/request", "$/cancel_request"]);
    rpc.close();
  });
});

describe("RequestOrder", () => {
  it("runs requests one after another in the order they entered, whatever each takes", async () => {
    const order = new RequestOrder();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`${name} end`);
      return name;
    };
    const turns = [order.enter(), order.enter(), order.enter()];
    const results = await Promise.all([turns[2]!.run(step("c", 1)), turns[0]!.run(step("a", 30)), turns[1]!.run(step("b", 1))]);
    expect(results).toEqual(["c", "a", "b"]);
    expect(log).toEqual(["a start", "a end", "b start", "b end", "c start", "c end"]);
  });

  it("a failed request does not hold up the next", async () => {
    const order = new RequestOrder();
    const failing = order.enter();
    const next = order.enter();
    await expect(failing.run(async () => Promise.reject(new Error("no")))).rejects.toThrow("no");
    expect(await next.run(async () => "ran")).toBe("ran");
  });

  it("a place released without running (a refused request) lets the next run once the ones before are done", async () => {
    const order = new RequestOrder();
    const slow = order.enter();
    const refused = order.enter();
    const next = order.enter();
    let finishSlow!: () => void;
    const slowRun = slow.run(() => new Promise<void>((resolve) => (finishSlow = resolve)));
    refused.release();
    let nextRan = false;
    const nextRun = next.run(async () => void (nextRan = true));
    await nextEventLoopTurn();
    expect(nextRan).toBe(false);
    finishSlow();
    await slowRun;
    await nextRun;
    expect(nextRan).toBe(true);
    // Releasing again after running changes nothing.
    slow.release();
    expect(await order.enter().run(async () => "still in order")).toBe("still in order");
  });
});
