import { describe, expect, it } from "vitest";
import { runCommand } from "../../support/cli.js";
import { freePort } from "../../support/free-port.js";

/** The --store setting of the commands that host sessions: a bad URL is a usage error, an unreachable store a start-up failure. */

describe("the --store setting", () => {
  it("refuses a store URL it cannot use with exit 2, naming the setting, on every command that hosts sessions", async () => {
    for (const command of ["serve", "stdio", "app-server", "acp"]) {
      const bad = await runCommand([command, "--store", "redis://localhost"]);
      expect(bad.code, command).toBe(2);
      expect(bad.stderr, command).toContain('invalid --store "redis://localhost": must be memory or redis://HOST:PORT[/DB]: the port is missing');
    }
    const fromVariable = await runCommand(["serve"], { env: { TAU_GATEWAY_STORE: "postgres://db:5432" } });
    expect(fromVariable.code).toBe(2);
    expect(fromVariable.stderr).toContain('invalid TAU_GATEWAY_STORE "postgres://db:5432"');
    const database = await runCommand(["serve", "--store", "redis://127.0.0.1:6379/99"]);
    expect(database.stderr).toContain("DB must be a database number from 0 to 15");
    const credentials = await runCommand(["serve", "--store", "redis://user:secret@127.0.0.1:6379"]);
    expect(credentials.stderr).toContain("takes no credentials");
  });

  it("does not start when the store cannot be reached (exit 1)", async () => {
    const port = await freePort();
    const result = await runCommand(["serve", "--port", "0", "--store", `redis://127.0.0.1:${port}`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`cannot reach the store at redis://127.0.0.1:${port}/0`);
  }, 60_000);

  it("lists the setting in every command's usage", async () => {
    for (const command of ["serve", "stdio", "app-server", "acp"]) {
      const help = await runCommand([command, "--help"]);
      expect(help.stdout, command).toContain("--store memory|redis://HOST:PORT[/DB]");
      expect(help.stdout, command).toContain("TAU_GATEWAY_STORE");
    }
  });
});
