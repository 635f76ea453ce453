import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot, runCliProcess, runCommand } from "../../support/cli.js";

/**
 * The `tau-gateway` executable: command dispatch (in-process), and the one real process that shows
 * the binary's exit statuses and what it writes to stdout and to stderr.
 */

describe("tau-gateway", () => {
  it("prints the command list on stdout with help, --help or no command, and exits 0", async () => {
    for (const argv of [[], ["help"], ["--help"], ["-h"]]) {
      const result = await runCommand(argv);
      expect(result, argv.join(" ")).toMatchObject({ code: 0, stderr: "" });
      expect(result.stdout).toMatch(/^usage: tau-gateway <command> \[options\]\n/);
      for (const command of ["host", "serve", "stdio", "validate"]) expect(result.stdout).toContain(`\n  ${command} `);
    }
  });

  it("prints the package's version with --version, -v or version, and exits 0", async () => {
    const { version } = JSON.parse(await readFile(join(repoRoot, "package.json"), "utf8")) as { version: string };
    for (const argv of [["--version"], ["-v"], ["version"]]) expect(await runCommand(argv), argv[0]).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    // The bundle finds the package.json above it too, as an installed package does.
    expect(await runCliProcess(["--version"])).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    expect((await runCommand([])).stdout).toContain("\n  --version  ");
  });

  it("refuses an unknown command on stderr with exit 2", async () => {
    const result = await runCommand(["serv"]);
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toMatch(/^tau-gateway: unknown command "serv"\nusage: tau-gateway <command>/);
  });

  it("as a process: the command's status is the exit status, its report on stdout, its errors on stderr", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tau-gateway-main-"));
    try {
      const transcript = join(dir, "one-bad-line.jsonl");
      await writeFile(transcript, `${JSON.stringify({ version: 18, type: "request", id: "r1", method: "session.list", params: 42 })}\n`);
      // The first file gets reported, then the second cannot be read: exit 2 (a crash would be 1).
      const result = await runCliProcess(["validate", transcript, join(dir, "missing.jsonl")]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe(`${transcript}:1: tau session.list: /params: must be of type object\n`);
      expect(result.stderr).toBe(`tau-gateway validate: cannot read ${join(dir, "missing.jsonl")}: ENOENT\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
