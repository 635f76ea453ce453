import { describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/io.js";
import { readSettings, upstreamSettings } from "../../src/cli/settings.js";

/** `--upstream` once per Tau host; its variable lists hosts with commas (URLs hold colons). */

const read = (argv: string[], env: NodeJS.ProcessEnv = {}) => readSettings(argv, env, upstreamSettings).upstream;

describe("--upstream", () => {
  it("is none (the embedded host) when not given, one host when given once", () => {
    expect(read([])).toEqual([]);
    expect(read(["--upstream", "embedded"])).toEqual(["embedded"]);
    expect(read(["--upstream", "ws://127.0.0.1:8787"])).toEqual(["ws://127.0.0.1:8787"]);
  });

  it("takes several hosts from repeated flags, or from the variable separated by commas; the flags win", () => {
    expect(read(["--upstream", "ws://a:1", "--upstream", "wss://b:2/tau"])).toEqual(["ws://a:1", "wss://b:2/tau"]);
    expect(read([], { TAU_GATEWAY_UPSTREAM: "ws://a:1,ws://b:2" })).toEqual(["ws://a:1", "ws://b:2"]);
    expect(read(["--upstream", "ws://c:3"], { TAU_GATEWAY_UPSTREAM: "ws://a:1,ws://b:2" })).toEqual(["ws://c:3"]);
  });

  it("refuses a host given twice, embedded among others, and a value that is no host, naming where it came from", () => {
    expect(() => read(["--upstream", "ws://a:1", "--upstream", "ws://a:1"])).toThrow(new UsageError('invalid --upstream: "ws://a:1" is given twice'));
    expect(() => read([], { TAU_GATEWAY_UPSTREAM: "embedded,ws://a:1" })).toThrow(new UsageError("invalid TAU_GATEWAY_UPSTREAM: embedded cannot be combined with other upstreams"));
    expect(() => read([], { TAU_GATEWAY_UPSTREAM: "ws://a:1,http://b:2" })).toThrow(/^invalid TAU_GATEWAY_UPSTREAM "http:\/\/b:2": must be embedded or a ws:\/\/ or wss:\/\/ URL$/);
  });
});
