import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { SINGLE_TOKEN_ID } from "../../../src/gateway/auth/tokens.js";
import { runCommand, serveCli } from "../../support/cli.js";

/** A bad --approval-policy is refused before anything starts, with the file, the line, the column and the reason. */

const dir = mkdtempSync(join(tmpdir(), "cli-policy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cleanups = cleanupsAfterEach();

describe("--approval-policy", () => {
  it("refuses a bad YAML file at start of serve and of a stdio command, naming its line and reason (exit 2)", async () => {
    const file = join(dir, "policy.yaml");
    writeFileSync(file, "version: 1\nrules:\n  - name: pushes\n    match: { command: 'git push*' }\n    action: ask\n");
    for (const command of ["serve", "acp"]) {
      const result = await runCommand([command, "--approval-policy", file]);
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toContain(`invalid --approval-policy ${JSON.stringify(file)}:\n${file}:5:13: /rules/0/action: must be one of "allow", "deny", "require"`);
    }
  });

  it("refuses a JSON file whose rule sets approvers on a deny, naming its line", async () => {
    const file = join(dir, "policy.json");
    writeFileSync(file, '{\n  "version": "2026-01",\n  "rules": [\n    { "name": "no", "action": "deny",\n      "approvers": "any" }\n  ]\n}\n');
    const result = await runCommand(["serve", "--approval-policy", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:5:20: /rules/0/approvers: only a rule whose action is "require" takes approvers`);
  });

  it("refuses a rule naming a role that is not a deciding session role, by the schema's enum, naming its line", async () => {
    const file = join(dir, "roles.yaml");
    writeFileSync(file, "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers:\n      roles: [controller, lead]\n");
    const result = await runCommand(["serve", "--approval-policy", file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}:6:27: /rules/0/approvers/roles/1: must be one of "owner", "controller"`);
  });

  it("refuses a rule only callers with a token can decide where none has one: serve without tokens, a stdio command", async () => {
    const file = join(dir, "leads.yaml");
    writeFileSync(file, "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers: { principals: [lead-ana] }\n");
    const serve = await runCommand(["serve", "--approval-policy", file]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(
      `${file}:5:16: /rules/0/approvers: it is decided by principals lead-ana: only callers with a token can decide it, and this gateway has no tokens (give it --tokens-file), so its calls could never be approved`,
    );
    const acp = await runCommand(["acp", "--approval-policy", file]);
    expect(acp.code).toBe(2);
    expect(acp.stderr).toContain("and the client of `tau-gateway acp` has no token (serve the policy with `tau-gateway serve --tokens-file`), so its calls could never be approved");
  });

  it("refuses a rule needing more distinct approvers than the tokens are for: a count of 2 with a single --token", async () => {
    const file = join(dir, "two.yaml");
    writeFileSync(file, "version: 1\nrules:\n  - name: two-people\n    action: require\n    count: 2\n");
    const serve = await runCommand(["serve", "--approval-policy", file, "--token", "the-one-secret"]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain(`${file}:5:12: /rules/0/count: it needs 2 distinct approvers, and the tokens are for only 1 (${SINGLE_TOKEN_ID}), so its calls could never be approved`);
  });

  it("serves that policy with a tokens file", async () => {
    const file = join(dir, "leads-served.yaml");
    writeFileSync(file, "version: 1\nrules:\n  - name: leads\n    action: require\n    approvers: { principals: [lead-ana] }\n");
    const tokens = join(dir, "tokens.json");
    writeFileSync(tokens, JSON.stringify([{ id: "lead-ana", token: "lead-ana-secret", tenant: "team" }]));
    const served = await serveCli(["--port", "0", "--approval-policy", file, "--tokens-file", tokens], cleanups);
    expect((await fetch(`${served.baseUrl}/healthz`)).status).toBe(200);
  });
});
