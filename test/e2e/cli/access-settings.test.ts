import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isLoopbackHost, loadTokens, trustProxyValue } from "../../../src/cli/access-settings.js";
import { originAllowed, parseAllowedOrigins } from "../../../src/gateway/auth/origins.js";
import { TokenRegistry } from "../../../src/gateway/auth/tokens.js";
import { AskTestClient } from "../../support/ask-client.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCommand, serveCli } from "../../support/cli.js";
import { TauTestClient } from "../../support/tau-client.js";

/** The front-door settings: tokens files, origins, trusted proxies, and `tau-gateway serve` refusing bad or unsafe ones. */

const cleanups = cleanupsAfterEach();

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), "access-settings-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const parseError = (text: string) => {
  try {
    TokenRegistry.parse(text, "/etc/tau/tokens.json");
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected the tokens file to be refused");
};

describe("tokens file", () => {
  it("authenticates plain and SHA-256 entries to their tenants, and nothing else", () => {
    const registry = TokenRegistry.parse(
      JSON.stringify([
        { id: "ci", token: "tok-ci-1", tenant: "build" },
        { id: "ops", sha256: createHash("sha256").update("tok-ops-2").digest("hex"), tenant: "ops" },
      ]),
      "tokens.json",
    );
    expect(registry.size).toBe(2);
    expect(registry.authenticate("tok-ci-1")).toEqual({ tokenId: "ci", tenant: "build" });
    expect(registry.authenticate("tok-ops-2")).toEqual({ tokenId: "ops", tenant: "ops" });
    expect(registry.authenticate("tok-ci-")).toBeUndefined();
    expect(registry.authenticate("")).toBeUndefined();
    expect(TokenRegistry.single("only").authenticate("only")).toEqual({ tokenId: "default", tenant: "default" });
  });

  it("names the file and the entry in every error, and never repeats a token", () => {
    expect(parseError("{nope")).toMatch(/^\/etc\/tau\/tokens\.json: not valid JSON/);
    expect(parseError("[]")).toBe("/etc/tau/tokens.json: lists no tokens");
    expect(parseError('{"tokens":[]}')).toBe("/etc/tau/tokens.json: must be a JSON list of {id, token or sha256, tenant} entries");
    expect(parseError(JSON.stringify([{ id: "a", token: "t1", tenant: "x" }, { id: "b", token: "t2" }]))).toBe('/etc/tau/tokens.json: entry 1 (id "b") /tenant: is required');
    expect(parseError(JSON.stringify([{ id: "a", tenant: "x" }]))).toBe('/etc/tau/tokens.json: entry 0 (id "a"): must have exactly one of "token" and "sha256"');
    expect(parseError(JSON.stringify([{ id: "a", token: "t1", sha256: "0".repeat(64), tenant: "x" }]))).toBe(
      '/etc/tau/tokens.json: entry 0 (id "a"): must have exactly one of "token" and "sha256"',
    );
    expect(parseError(JSON.stringify([{ id: "a", sha256: "abc", tenant: "x" }]))).toBe('/etc/tau/tokens.json: entry 0 (id "a") /sha256: must be 64 hexadecimal digits (the SHA-256 of the token)');
    expect(parseError(JSON.stringify([{ id: "a", token: "t1", tenant: "x", role: "admin" }]))).toBe('/etc/tau/tokens.json: entry 0 (id "a") /role: is not an allowed field');
    expect(parseError(JSON.stringify([{ id: "a", token: "t1", tenant: "x" }, { id: "a", token: "t2", tenant: "y" }]))).toBe('/etc/tau/tokens.json: entry 1 (id "a"): id is already used by entry 0');
    const digest = createHash("sha256").update("same-secret").digest("hex");
    expect(parseError(JSON.stringify([{ id: "a", token: "same-secret", tenant: "x" }, { id: "b", sha256: digest, tenant: "y" }]))).toBe(
      '/etc/tau/tokens.json: entry 1 (id "b"): the same token as entry 0',
    );
    const spaced = parseError(JSON.stringify([{ id: "a", token: "secret with spaces", tenant: "x" }]));
    expect(spaced).toBe('/etc/tau/tokens.json: entry 0 (id "a") /token: must not contain whitespace or control characters');
    expect(spaced).not.toContain("secret");
  });

  it("reports a missing file with its path", async () => {
    await expect(TokenRegistry.fromFile("/nonexistent/tokens.json")).rejects.toThrow(/^\/nonexistent\/tokens\.json: cannot read the tokens file/);
  });
});

describe("origins, proxies, loopback", () => {
  it("parses the origin allowlist, normalising entries, and refuses what is not an origin", () => {
    expect(parseAllowedOrigins("https://App.Example.com/, http://localhost:5173")).toEqual(["https://app.example.com", "http://localhost:5173"]);
    expect(parseAllowedOrigins("*")).toBe("*");
    expect(parseAllowedOrigins("")).toEqual([]);
    expect(() => parseAllowedOrigins("app.example.com")).toThrow(/"app.example.com" is not an origin/);
    expect(() => parseAllowedOrigins("https://app.example.com/path")).toThrow(/without path/);
    expect(() => parseAllowedOrigins("ftp://files.example.com")).toThrow(/http:\/\/ or https:\/\//);
    expect(() => parseAllowedOrigins("*,https://a.example")).toThrow(/cannot be combined/);
  });

  it("allows requests without Origin and exactly the listed origins", () => {
    const list = parseAllowedOrigins("https://app.example.com");
    expect(originAllowed(list, undefined)).toBe(true);
    expect(originAllowed(list, "https://app.example.com")).toBe(true);
    expect(originAllowed(list, "https://app.example.com:8443")).toBe(false);
    expect(originAllowed(list, "http://app.example.com")).toBe(false);
    expect(originAllowed(list, "null")).toBe(false);
    expect(originAllowed([], "https://app.example.com")).toBe(false);
    expect(originAllowed("*", "https://anything.example")).toBe(true);
  });

  it("parses --trust-proxy", () => {
    expect(trustProxyValue("false")).toBe(false);
    expect(trustProxyValue("TRUE")).toBe(true);
    expect(trustProxyValue("127.0.0.1, 10.0.0.0/8,::1,fd00::/8,loopback")).toEqual(["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8", "loopback"]);
    expect(() => trustProxyValue("2")).toThrow(/"2" is not an IP address/);
    expect(() => trustProxyValue("10.0.0.0/33")).toThrow(/"10.0.0.0\/33"/);
    expect(() => trustProxyValue("proxy.internal")).toThrow(/"proxy.internal"/);
  });

  it("knows which listen addresses are loopback", () => {
    for (const host of ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]", "::ffff:127.0.0.1"]) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ["0.0.0.0", "::", "192.168.1.10", "gateway.internal", "128.0.0.1"]) expect(isLoopbackHost(host)).toBe(false);
  });
});

describe("tau-gateway serve settings", () => {
  const noStackTrace = (stderr: string) => expect(stderr).not.toMatch(/^\s+at /m);

  it("refuses a non-loopback address without tokens (exit 2) unless --insecure-no-auth", async () => {
    const result = await runCommand(["serve", "--host", "0.0.0.0", "--port", "0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("refusing to listen on 0.0.0.0 without authentication");
    expect(result.stderr).toContain("--insecure-no-auth");
    expect(result.stderr).toContain("TAU_GATEWAY_TOKEN");
    noStackTrace(result.stderr);

    // The same rule, decided before anything starts: a token or the explicit opt-out lets it through.
    await expect(loadTokens({ insecureNoAuth: false }, "192.168.1.10")).rejects.toThrow(/refusing to listen on 192.168.1.10/);
    await expect(loadTokens({ insecureNoAuth: true }, "0.0.0.0")).resolves.toBeUndefined();
    await expect(loadTokens({ insecureNoAuth: false }, "127.0.0.1")).resolves.toBeUndefined();
    expect((await loadTokens({ token: "t0k", insecureNoAuth: false }, "0.0.0.0"))?.authenticate("t0k")).toEqual({ tokenId: "default", tenant: "default" });
  });

  it("names the setting and the bad value, and hides the value of a token", async () => {
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [["--allowed-origins", "app.example.com"], {}, /invalid --allowed-origins "app.example.com": "app.example.com" is not an origin/],
      [[], { TAU_GATEWAY_ALLOWED_ORIGINS: "ftp://x.example" }, /invalid TAU_GATEWAY_ALLOWED_ORIGINS "ftp:\/\/x.example"/],
      [["--trust-proxy", "maybe"], {}, /invalid --trust-proxy "maybe": "maybe" is not an IP address/],
      [[], { TAU_GATEWAY_INSECURE_NO_AUTH: "sure" }, /invalid TAU_GATEWAY_INSECURE_NO_AUTH "sure": must be true or false/],
      [["--tokens-file", "/nonexistent/tokens.json"], {}, /invalid --tokens-file "\/nonexistent\/tokens.json":\n\/nonexistent\/tokens.json: cannot read the tokens file/],
      [["--token", "a", "--tokens-file", "/x.json"], {}, /give either --token \(TAU_GATEWAY_TOKEN\) or --tokens-file \(TAU_GATEWAY_TOKENS_FILE\), not both/],
    ];
    const file = tempFile("tokens.json", JSON.stringify([{ id: "a", token: "t", tenant: "x" }, { id: "b", tenant: "y", token: "u", extra: 1 }]));
    const serve = (args: string[], env: NodeJS.ProcessEnv = {}) => runCommand(["serve", "--port", "0", ...args], { env });
    for (const [args, env, expected] of cases) {
      const result = await serve(args, env);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(expected);
      noStackTrace(result.stderr);
    }
    const secret = await serve([], { TAU_GATEWAY_TOKEN: "hunter2 with space" });
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain("invalid TAU_GATEWAY_TOKEN (value not shown): must not contain whitespace");
    expect(secret.stderr).not.toContain("hunter2");
    const invalidFile = await serve(["--tokens-file", file]);
    expect(invalidFile.code).toBe(2);
    expect(invalidFile.stderr).toContain(`${file}: entry 1 (id "b") /extra: is not an allowed field`);
  });

  it("--help lists the access settings with their variables and defaults", async () => {
    const result = await runCommand(["serve", "--help"]);
    expect(result.code).toBe(0);
    for (const [flag, variable] of [
      ["--token TOKEN", "TAU_GATEWAY_TOKEN"],
      ["--tokens-file FILE", "TAU_GATEWAY_TOKENS_FILE"],
      ["--insecure-no-auth", "TAU_GATEWAY_INSECURE_NO_AUTH"],
      ["--allowed-origins", "TAU_GATEWAY_ALLOWED_ORIGINS"],
      ["--trust-proxy", "TAU_GATEWAY_TRUST_PROXY"],
    ]) {
      expect(result.stdout).toContain(flag);
      expect(result.stdout).toContain(variable);
    }
    expect(result.stdout).toMatch(/--allowed-origins[\s\S]*default none/);
    expect(result.stdout).toMatch(/--trust-proxy[\s\S]*default false/);
  });

  it("serves with TAU_GATEWAY_TOKEN: probes open, everything else needs the token, Ask and Tau share the tenant, the token never logged", async () => {
    const token = "tok-serve-e2e-4410";
    // Every setting from its variable, as a container would pass them.
    const served = await serveCli([], cleanups, { TAU_GATEWAY_TOKEN: token, TAU_GATEWAY_PORT: "0", TAU_GATEWAY_LOG_LEVEL: "debug" });
    const { baseUrl } = served;
    expect(baseUrl).not.toMatch(/:(0|8080)$/);
    const exited = served.exit.then(({ code }) => code);

    // Bodies are read to the end: an unread response keeps its connection busy.
    const status = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${baseUrl}${path}`, { headers });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await status("/readyz")).toBe(200);
    expect(await status("/schema")).toBe(401);
    expect(await status("/schema", { authorization: `Bearer ${token}` })).toBe(200);

    const ask = await AskTestClient.websocket(`${baseUrl.replace("http://", "ws://")}/rpc`, { headers: { authorization: `Bearer ${token}` } });
    cleanups.push(() => ask.socket.terminate());
    await ask.request("initialize", { client: { name: "serve-tests", version: "1" } });
    const { session } = await ask.request("session/create", {});
    const tau = await TauTestClient.connect(`${baseUrl.replace("http://", "ws://")}/tau?access_token=${token}`);
    cleanups.push(() => tau.close());
    const { sessions } = await tau.call<{ sessions: Array<{ sessionId: string }> }>("session.list", {});
    expect(sessions.map((s) => s.sessionId)).toEqual([session.sessionId]);
    expect((await tau.snapshot(session.sessionId)).attributes["tau-gateway.tenant"]).toBe("default");

    ask.socket.close();
    await tau.close();
    // SIGINT stops serve like SIGTERM does (the other tests of serve send SIGTERM).
    served.child.kill("SIGINT");
    expect(await exited).toBe(0);
    const stderr = served.stderr();
    expect(stderr).toContain('"reqId"');
    expect(stderr).not.toContain(token);
  }, 60_000);
});
