import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_INTERACTION_DEADLINE_MS,
  gatewayClientTools,
  loadToolsConfig,
  parseToolsConfig,
  type CommandToolConfig,
} from "../../src/bridge/interactions/index.js";
import { DEADLINE_GRACE_MS } from "../../src/bridge/interactions/client-tools.js";
import { ProtocolValidators } from "../../src/validation/validator.js";

/**
 * The operator's tools file (`--tools-config`) and the client tools the bridge connection
 * advertises to Tau. Every rejection must name the file and the field so an operator can fix it.
 */

const tau = ProtocolValidators.shared().get("tau", 18);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tools-config-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const echoArgs: CommandToolConfig = {
  name: "echo-args",
  description: "Prints its arguments.",
  parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"] },
  command: "cat",
};

function writeTools(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

/** The loader's error message for a file with `content`. */
async function loadError(content: unknown, name = "tools.json"): Promise<string> {
  const path = writeTools(name, content);
  const error = await loadToolsConfig(path).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(error, "the file should have been rejected").toBeInstanceOf(Error);
  return error!.message.replaceAll(path, name);
}

describe("loadToolsConfig", () => {
  it("loads command tools with their optional args and timeout", async () => {
    const git = { name: "git_log", description: "Recent commits.", parameters: { type: "object" }, command: "git", args: ["log", "-5"], timeoutMs: 2000 };
    const path = writeTools("ok.json", { $schema: "./tools.schema.json", tools: [echoArgs, git] });
    expect(await loadToolsConfig(path)).toEqual([echoArgs, git]);
  });

  it("accepts an empty tool list", async () => {
    expect(await loadToolsConfig(writeTools("empty.json", { tools: [] }))).toEqual([]);
  });

  it("names the file and the missing field", async () => {
    const { command: _command, ...withoutCommand } = echoArgs;
    expect(await loadError({ tools: [withoutCommand] })).toBe("tools.json: /tools/0/command: is required");
  });

  it("names every problem of a file, one per line", async () => {
    const message = await loadError({ tools: [{ ...echoArgs, timeoutMs: 0, extra: true }, { ...echoArgs, name: "has space" }] });
    expect(message.split("\n").sort()).toEqual(
      [
        "tools.json: /tools/0/extra: is not an allowed field",
        "tools.json: /tools/0/timeoutMs: must be >= 1",
        "tools.json: /tools/1/name: must match ^[A-Za-z0-9_-]{1,64}$",
      ].sort(),
    );
  });

  it("rejects a missing tools list, a non-object root and broken JSON", async () => {
    expect(await loadError({})).toBe("tools.json: /tools: is required");
    expect(await loadError([])).toBe("tools.json: /: must be of type object");
    expect(await loadError("{ tools: [")).toMatch(/^tools\.json: not valid JSON: /);
  });

  it("rejects an unreadable file, naming it", async () => {
    const missing = join(dir, "missing.json");
    await expect(loadToolsConfig(missing)).rejects.toThrow(`${missing}: cannot read the tools config`);
  });

  it("rejects commands and args containing NUL characters", async () => {
    expect(await loadError({ tools: [{ ...echoArgs, command: "" }] })).toBe("tools.json: /tools/0/command: must not be empty");
    expect(await loadError({ tools: [{ ...echoArgs, args: ["ok", "a\u0000b"] }] })).toBe(
      "tools.json: /tools/0/args/1: must not contain NUL characters",
    );
  });

  it("requires parameters to be a JSON Schema with an object root that ajv can compile", async () => {
    expect(await loadError({ tools: [{ ...echoArgs, parameters: { type: "string" } }] })).toBe('tools.json: /tools/0/parameters/type: must be "object"');
    expect(await loadError({ tools: [{ ...echoArgs, parameters: {} }] })).toBe("tools.json: /tools/0/parameters/type: is required");
    const broken = await loadError({ tools: [{ ...echoArgs, parameters: { type: "object", properties: { a: { type: "nonsense" } } } }] });
    expect(broken).toMatch(/^tools\.json: \/tools\/0\/parameters: not a usable JSON Schema: /);
  });

  it("refuses duplicate names, the gateway's own tools and Tau host tools", async () => {
    const message = await loadError({
      tools: [echoArgs, { ...echoArgs }, { ...echoArgs, name: "ask_user" }, { ...echoArgs, name: "submit_plan" }, { ...echoArgs, name: "bash" }],
    });
    expect(message.split("\n")).toEqual([
      'tools.json: /tools/1/name: "echo-args" is already used by /tools/0',
      'tools.json: /tools/2/name: "ask_user" is reserved for the gateway\'s own tool',
      'tools.json: /tools/3/name: "submit_plan" is reserved for the gateway\'s own tool',
      'tools.json: /tools/4/name: "bash" is a Tau host tool name',
    ]);
  });

  it("parses text directly with the source named in errors", () => {
    expect(() => parseToolsConfig('{"tools": 1}', "inline")).toThrow("inline: /tools: must be of type array");
  });
});

describe("gatewayClientTools", () => {
  it("advertises ask_user, submit_plan and the command tools, each a valid Tau client tool", () => {
    const tools = gatewayClientTools([echoArgs, { ...echoArgs, name: "slow", timeoutMs: 120_000 }], { deadlineMs: 1000 });
    expect(tools.map((t) => t.name)).toEqual(["ask_user", "submit_plan", "echo-args", "slow"]);
    for (const tool of tools) expect(tau.check("ClientToolDefinition", tool).issues).toEqual([]);
    expect(tau.params("initialize", { client: { name: "tau-gateway", version: "1", tools } }).issues).toEqual([]);
    // Tau's execution deadline covers the wait for a person plus the command's own limit.
    const deadline = Object.fromEntries(tools.map((t) => [t.name, t.executionTimeoutMs]));
    expect(deadline).toEqual({
      ask_user: 1000 + DEADLINE_GRACE_MS,
      submit_plan: 1000 + DEADLINE_GRACE_MS,
      "echo-args": 1000 + DEADLINE_GRACE_MS + DEFAULT_COMMAND_TIMEOUT_MS,
      slow: 1000 + DEADLINE_GRACE_MS + 120_000,
    });
    expect(tools[2]).toMatchObject({ description: echoArgs.description, parameters: echoArgs.parameters });
  });

  it("uses the default interaction deadline when none is given", () => {
    const [askUser] = gatewayClientTools([]);
    expect(askUser!.executionTimeoutMs).toBe(DEFAULT_INTERACTION_DEADLINE_MS + DEADLINE_GRACE_MS);
  });
});
