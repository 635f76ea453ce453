import * as fs from "node:fs";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { LogLevel } from "../../../src/shared/log.js";
import { RecordingFolder, type RecordingFs } from "../../../src/transports/recording/recording-folder.js";
import { cleanupsAfterEach } from "../../support/cleanups.js";
import { runCliProcess } from "../../support/cli.js";

/**
 * `--record` fails loudly and keeps its files whole: a folder no file can be made in is refused at
 * start by every command (as root, /proc/1 is such a folder: it exists and takes no new file); a
 * full disk is logged once, however many connections it stops, and leaves no line cut in the
 * middle (a disk that fills up mid-write is injected through the stream's file system calls, as
 * node:fs lets one; /dev/full, which accepts no byte, shows the same through a real process).
 */

const cleanups = cleanupsAfterEach();
const UNWRITABLE_DIR = "/proc/1";

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "record-failures-")));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });

/**
 * node:fs, but the disk holds `room` bytes: the write that passes it is written in part, then
 * fails with ENOSPC. `written()` resolves once a write has succeeded.
 */
function fillingFs(room: number): { fs: RecordingFs; written(): Promise<void> } {
  let left = room;
  let succeeded: () => void = () => undefined;
  const write = (fd: number, data: Buffer, done: (err: Error | null, written?: number) => void) => {
    if (data.length <= left) {
      left -= data.length;
      return fs.write(fd, data, 0, data.length, null, (err, written) => {
        done(err, written);
        if (!err) succeeded();
      });
    }
    fs.writeSync(fd, data, 0, left);
    left = 0;
    done(enospc());
  };
  const filling = {
    ...fs,
    write: (fd: number, buffer: Buffer, offset: number, length: number, _position: unknown, done: (err: Error | null, written?: number) => void) =>
      write(fd, buffer.subarray(offset, offset + length), done),
    writev: (fd: number, buffers: Buffer[], _position: unknown, done: (err: Error | null, written?: number) => void) => write(fd, Buffer.concat(buffers), done),
  } as unknown as RecordingFs;
  return { fs: filling, written: () => new Promise((resolve) => (succeeded = resolve)) };
}

/** node:fs, but no write completes until `release()`: a disk far slower than the traffic. */
function heldFs(): { fs: RecordingFs; release(): void } {
  const held: Array<() => void> = [];
  let releasing = false;
  const later = (run: () => void) => (releasing ? run() : void held.push(run));
  const slow = {
    ...fs,
    write: (fd: number, buffer: Buffer, offset: number, length: number, position: unknown, done: (err: Error | null, written?: number) => void) =>
      later(() => fs.write(fd, buffer, offset, length, position as null, done)),
    writev: (fd: number, buffers: Buffer[], position: unknown, done: (err: Error | null, written?: number) => void) => later(() => fs.writev(fd, buffers, position as null, done)),
  } as unknown as RecordingFs;
  return {
    fs: slow,
    release: () => {
      releasing = true;
      for (const run of held.splice(0)) run();
    },
  };
}

describe("--record failures", () => {
  it.each([
    ["serve", ["serve", "--port", "0", "--record", UNWRITABLE_DIR], `cannot record to ${UNWRITABLE_DIR}: no file can be made in it`],
    ["stdio", ["stdio", "--record", `${UNWRITABLE_DIR}/run.jsonl`], "cannot record to"],
    ["app-server", ["app-server", "--record", `${UNWRITABLE_DIR}/run.jsonl`], "cannot record to"],
    ["acp", ["acp", "--record", `${UNWRITABLE_DIR}/run.jsonl`], "cannot record to"],
    ["mcp", ["mcp", "--record", `${UNWRITABLE_DIR}/run.jsonl`], "cannot record to"],
  ])("%s refuses to start when it cannot record", async (_command, args, said) => {
    const result = await runCliProcess(args);
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr).toContain(said);
  }, 60_000);

  it("a full disk stops the recordings, is logged once, and leaves only whole lines", async () => {
    const dir = tempDir();
    const logged: Array<{ level: LogLevel; message: string }> = [];
    // Room for the first connection's first lines, and a part of the second's.
    const disk = fillingFs(1_500);
    const folder = await RecordingFolder.create(dir, { maxFileBytes: 1 << 20, maxFolderBytes: 1 << 30 }, (level, message) => void logged.push({ level, message }), disk.fs);
    const line = (i: number) => JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping", params: { pad: "x".repeat(100) } });
    const first = folder.connection("ask", "websocket /rpc");
    const firstWritten = disk.written();
    for (let i = 1; i <= 4; i++) first.client(line(i));
    await firstWritten;
    const second = folder.connection("codex", "websocket /");
    for (let i = 1; i <= 20; i++) for (const recording of [first, second]) recording.client(line(i));
    await folder.close();
    const failures = logged.filter((l) => l.message.startsWith("recording failed"));
    expect(failures.filter((l) => l.level === "warn")).toHaveLength(1);
    expect(failures[0]!.message).toContain("keeps the lines written whole");
    const files = readdirSync(dir);
    // The first kept its header and first lines; the second, cut inside its first write, was removed.
    expect(files.map((name) => name.split("-")[0])).toEqual(["ask"]);
    expect(readFileSync(join(dir, files[0]!), "utf8").trimEnd().split("\n").length).toBeGreaterThanOrEqual(5);
    for (const name of files) {
      const text = readFileSync(join(dir, name), "utf8");
      expect(text.endsWith("\n"), name).toBe(true);
      for (const l of text.trimEnd().split("\n")) expect(() => JSON.parse(l), `${name}: ${l.slice(0, 80)}`).not.toThrow();
    }
  });

  it("stdio says once that it cannot write its recording", async () => {
    const result = await runCliProcess(["stdio", "--record", "/dev/full"], { stdin: '{"jsonrpc":"2.0","id":1,"method":"ping"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n' });
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split("\n").map((l) => JSON.parse(l).id)).toEqual([1, 2]);
    expect(result.stderr.match(/recording failed/g)).toHaveLength(1);
    expect(result.stderr).toContain("ENOSPC");
  }, 60_000);

  it("a disk slower than the traffic: what waits for it is bounded over every connection, cuts and skips are logged once, files stay whole", async () => {
    const dir = tempDir();
    const logged: Array<{ level: LogLevel; message: string }> = [];
    const disk = heldFs();
    const maxPendingBytes = 64 * 1024;
    const folder = await RecordingFolder.create(dir, { maxFileBytes: 1 << 30, maxFolderBytes: 1 << 30, maxPendingBytes }, (level, message) => void logged.push({ level, message }), disk.fs);
    const line = (i: number) => JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping", params: { pad: "x".repeat(1000) } });
    // Ten connections of 1 MB each: without the bound all of it would wait in memory.
    const recordings = Array.from({ length: 10 }, (_, i) => folder.connection("ask", `websocket /rpc ${i}`));
    let mostPending = 0;
    for (let i = 1; i <= 1_000; i++) {
      for (const recording of recordings) recording.client(line(i));
      mostPending = Math.max(mostPending, folder.pendingBytes);
    }
    expect(mostPending).toBeLessThanOrEqual(maxPendingBytes);
    // While the disk is behind, a new connection is not recorded (and leaves no file).
    folder.connection("codex", "websocket /").client(line(1));
    const warnings = logged.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings).toEqual(["recording cut: the disk is slower than the traffic; this connection's later messages are not recorded"]);
    disk.release();
    await folder.close();
    expect(folder.pendingBytes).toBe(0);
    expect(logged.map((l) => l.message)).toContain("recording resumed: the disk caught up; new connections are recorded again");
    const files = readdirSync(dir);
    expect(files.every((name) => name.startsWith("ask-"))).toBe(true);
    for (const name of files) {
      const text = readFileSync(join(dir, name), "utf8");
      expect(text.endsWith("\n"), name).toBe(true);
      for (const l of text.trimEnd().split("\n")) expect(() => JSON.parse(l), `${name}: ${l.slice(0, 80)}`).not.toThrow();
    }
  });
});
