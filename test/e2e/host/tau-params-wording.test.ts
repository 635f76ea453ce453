import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildGateway } from "../../../src/gateway/app.js";
import { TauUpstream } from "../../../src/tau/upstream.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { gatewayInFrontOf } from "../../support/gateway.js";
import { pause, startHostClosedAfterTest, TauTestClient, type Response } from "../../support/tau-client.js";

/**
 * Invalid params in Tau's own words (spec §3), on the embedded host and through the gateway's
 * `/tau` front door: for every method, the message Tau v18 sends, fields checked in Tau's order,
 * and no `data` — checked against a table of Tau's answers recorded from Tau's own parser (the
 * fixture names the commit it was read from), then class by class.
 */

interface FixtureCase {
  method: string;
  kind: string;
  params: unknown;
  tau: { accepted: true } | { code: string; message: string };
}
const fixture = JSON.parse(readFileSync(new URL("../../fixtures/tau-v18-params/invalid-params.json", import.meta.url), "utf8")) as {
  source: { commit: string };
  cases: FixtureCase[];
};

const cleanups = cleanupsAfterEach();
const logged: string[] = [];

async function connect(url: string): Promise<TauTestClient> {
  const client = await TauTestClient.connect(url);
  cleanups.push(() => client.close());
  return client;
}

/** A client of the embedded host, or of `/tau` on a gateway in front of one. */
const targets: Array<[string, () => Promise<TauTestClient>]> = [
  [
    "the embedded host",
    async () => {
      logged.length = 0;
      const host = await startHostClosedAfterTest(cleanups, { log: (line) => logged.push(line) });
      return connect(host.url);
    },
  ],
  [
    "the gateway's /tau",
    async () => {
      const host = await startHostClosedAfterTest(cleanups);
      const { app } = gatewayInFrontOf(host.url, cleanups);
      const address = await app.listen({ port: 0, host: "127.0.0.1" });
      return connect(`${address.replace("http://", "ws://")}/tau`);
    },
  ],
];

const answerOf = (response: Response) => (response.ok ? { accepted: true } : response.error);

describe.each(targets)("invalid params on %s", (_target, open) => {
  it(`are answered as Tau answers them, for every method: the recorded table (Tau ${fixture.source.commit.slice(0, 7)})`, async () => {
    const client = await open();
    expect(new Set(fixture.cases.map((c) => c.method))).toEqual(new Set(client.ready.methods));
    const differences: string[] = [];
    for (const c of fixture.cases) {
      const answer = answerOf(await client.request(c.method, c.params));
      if ("accepted" in c.tau) {
        // Tau takes these params; what the handler then says (an unknown session, say) is not about them.
        if ("code" in answer && (answer.code === "invalid_params" || answer.code === "invalid_request")) differences.push(`${c.method} (${c.kind}): refused ${JSON.stringify(answer)}`);
      } else if (JSON.stringify(answer) !== JSON.stringify(c.tau)) {
        differences.push(`${c.method} (${c.kind}):\n  Tau:     ${JSON.stringify(c.tau)}\n  we said: ${JSON.stringify(answer)}`);
      }
    }
    expect(differences).toEqual([]);
    expect(fixture.cases.length).toBeGreaterThan(300);
  });

  it("say what Tau says in the cases clients meet most, with no data", async () => {
    const client = await open();
    const examples: Array<[string, unknown, string]> = [
      ["session.submit", { sessionId: "s", text: "" }, "session.submit params.text must be a non-empty string"],
      ["session.list", [], "session.list params must be an empty object"],
      ["session.observe", {}, "session.observe params.sessionId must be a non-empty string"],
      ["session.create", {}, "session.create params.executionEnvironment must be an object"],
      ["session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: 10 }, "session.setAutoCompactThreshold params are invalid: thresholdTokens: Too small: expected number to be >=50000"],
      [
        "session.exec",
        { sessionId: "s", execId: "e", command: "ls", env: { HOME: "/tmp" } },
        "session.exec params.env must use valid environment variable names and string values without null bytes and cannot override HOME",
      ],
    ];
    for (const [method, params, message] of examples) expect(await client.fail(method, params), method).toEqual({ code: "invalid_params", message });
  });

  it("name the first field in Tau's order, sessionId first, whatever else is wrong", async () => {
    const client = await open();
    expect((await client.fail("session.ephemeral.submit", { text: 1 })).message).toBe("session.ephemeral.submit params.sessionId must be a non-empty string");
    expect((await client.fail("session.ephemeral.submit", { sessionId: "s", message: "" })).message).toBe("session.ephemeral.submit params.contextId must be a non-empty string");
    const create = { executionEnvironment: { kind: "local", cwd: "relative" }, attributes: "none", reasoning: "extreme" };
    expect((await client.fail("session.create", create)).message).toBe("session.create params.executionEnvironment.cwd must be an absolute path");
  });

  it("say a problem deeper than any named field with the parser's issues, path by path", async () => {
    const client = await open();
    expect((await client.fail("session.sample", { sessionId: "s", context: {}, options: {} })).message).toBe(
      "session.sample params are invalid: context.systemPrompt: Invalid input: expected string, received undefined; context.messages: Invalid input: expected array, received undefined",
    );
    expect((await client.fail("session.ephemeral.create", { sessionId: "s", instructions: "i", tools: ["zap"] })).message).toBe(
      'session.ephemeral.create params are invalid: tools.0: Invalid option: expected one of "bash"|"write"|"edit"|"view_image"|"web"',
    );
    expect((await client.fail("session.clientTool.result", { sessionId: "s", callId: "c", ok: "yes" })).message).toBe(
      "session.clientTool.result params are invalid: ok: Invalid discriminator value. Expected 'true' | 'false'",
    );
    expect((await client.fail("session.clientTool.ack", { sessionId: "s", callId: "c", presentation: { colour: "red" } })).message).toBe(
      'session.clientTool.ack params.presentation is invalid: presentation: Unrecognized key: "colour"',
    );
  });

  it("leave unknown fields alone, except on session.setAutoCompactThreshold, which Tau parses strictly", async () => {
    const client = await open();
    expect((await client.call("session.list", { verbose: true })).sessions).toEqual([]);
    expect((await client.fail("session.observe", { sessionId: "no-such-session", verbose: true })).code).toBe("not_found");
    expect(await client.fail("session.setAutoCompactThreshold", { sessionId: "s", thresholdTokens: null, a: 1, b: 2 })).toEqual({
      code: "invalid_params",
      message: 'session.setAutoCompactThreshold params are invalid: Unrecognized keys: "a", "b"',
    });
  });

  it("print a version that is not a number as Tau does, with String()", async () => {
    const client = await open();
    for (const [version, shown] of [
      [{ major: 18 }, "[object Object]"],
      [[18, 0], "18,0"],
      [null, "null"],
      ["18", "18"],
    ] as const) {
      const since = client.mark();
      client.sendRaw(JSON.stringify({ version, type: "request", id: "v", method: "session.list", params: {} }));
      const response = await client.waitFor((m) => m.type === "response" && m.id === "v", "the version error", { since });
      expect(response.error).toEqual({ code: "invalid_request", message: `unsupported session protocol version: ${shown}` });
    }
  });
});

describe("the embedded host's log", () => {
  it("keeps what exactly was wrong with invalid params, which the client is not sent", async () => {
    const [, open] = targets[0]!;
    const client = await open();
    const error = await client.fail("session.exec", { sessionId: "s", execId: "e", command: "ls", timeoutMs: 0, env: { HOME: "/tmp" } });
    expect(error).toEqual({
      code: "invalid_params",
      message: "session.exec params.env must use valid environment variable names and string values without null bytes and cannot override HOME",
    });
    const line = logged.find((l) => l.includes("invalid session.exec params"));
    expect(line).toContain("/env/HOME");
    expect(line).toContain("/timeoutMs: must be >= 1");
  });
});

describe("the gateway's log", () => {
  it("keeps what exactly was wrong with params it refused on /tau, which the client is not sent", async () => {
    const host = await startHostClosedAfterTest(cleanups);
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString("utf8").split("\n")) if (line.trim()) lines.push(JSON.parse(line));
        callback();
      },
    });
    const upstream = new TauUpstream({ url: host.url, client: { name: "gateway-tests", version: "1" }, reconnect: false });
    cleanups.push(() => upstream.close());
    const app = buildGateway({ tauUpstream: { url: host.url }, upstream, logger: { level: "debug", stream } });
    cleanups.push(() => app.close());
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    const client = await connect(`${address.replace("http://", "ws://")}/tau`);
    expect(await client.fail("session.submit", { sessionId: "s", text: "  " })).toEqual({ code: "invalid_params", message: "session.submit params.text must be a non-empty string" });
    const refused = () => lines.find((l) => l.msg === "invalid Tau request answered by the gateway");
    for (let i = 0; i < 200 && !refused(); i++) await pause(10);
    expect(refused()).toMatchObject({ code: "invalid_params", method: "session.submit", issues: [expect.stringContaining("/text")] });
  });
});
