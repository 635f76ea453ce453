import { PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { LineSplitter, OVERSIZED_LINE } from "../../src/transports/ndjson-lines.js";
import { MESSAGES_IN_FLIGHT_BOUND, READ_ON_IN_FLIGHT } from "../../src/transports/in-flight-bound.js";
import { NdjsonStream, type NdjsonConnection } from "../../src/transports/ndjson-stream.js";

/**
 * The NDJSON stream every line-oriented transport shares (stdin/stdout, Unix-socket clients):
 * framing with a bound on a line, backpressure from output to input, the slow-consumer rule and
 * its lifecycle, on real Node streams with a small dialect that answers each line.
 */

const bytes = (text: string) => Buffer.from(text, "utf8");

describe("LineSplitter", () => {
  it("splits on newlines across chunks, keeps multi-byte characters cut by a chunk boundary, drops CR and blank lines", () => {
    const splitter = new LineSplitter(1024);
    const euro = bytes("€"); // three bytes
    expect(splitter.push(Buffer.concat([bytes('{"a":"'), euro.subarray(0, 1)]))).toEqual([]);
    expect(splitter.push(Buffer.concat([euro.subarray(1), bytes('"}\r\n\n  \n{"b":1}\n{"c"')]))).toEqual(['{"a":"€"}', '{"b":1}']);
    expect(splitter.push(bytes(":2}"))).toEqual([]);
    expect(splitter.end()).toEqual(['{"c":2}']);
  });

  it("skips a line over the bound, says so as soon as it is known, and reads the next line normally", () => {
    const splitter = new LineSplitter(10);
    expect(splitter.push(bytes("0123456789\n"))).toEqual(["0123456789"]);
    // Known to be too long before its newline arrives: nothing of it is kept meanwhile.
    expect(splitter.push(bytes("01234567"))).toEqual([]);
    expect(splitter.push(bytes("89abc"))).toEqual([OVERSIZED_LINE]);
    expect(splitter.push(bytes("x".repeat(100_000)))).toEqual([]);
    expect(splitter.push(bytes("tail\nnext\n"))).toEqual(["next"]);
    // Too long within one chunk.
    expect(splitter.push(bytes(`${"y".repeat(11)}\nlast\n`))).toEqual([OVERSIZED_LINE, "last"]);
    expect(splitter.end()).toEqual([]);
  });

  it("takes a CRLF line of exactly the bound however the chunks fall, the CR not counting against it", () => {
    const line = "0123456789";
    // Cut between CR and LF: the CR waits in the partial line without making it too long.
    const cut = new LineSplitter(10);
    expect(cut.push(bytes(`${line}\r`))).toEqual([]);
    expect(cut.push(bytes("\nnext\n"))).toEqual([line, "next"]);
    // The same line whole, and cut before its CR.
    expect(new LineSplitter(10).push(bytes(`${line}\r\n`))).toEqual([line]);
    const early = new LineSplitter(10);
    expect(early.push(bytes(line))).toEqual([]);
    expect(early.push(bytes("\r\n"))).toEqual([line]);
    // One byte more than the bound is still too long, CR or not.
    const over = new LineSplitter(10);
    expect(over.push(bytes(`${line}x\r`))).toEqual([OVERSIZED_LINE]);
    expect(over.push(bytes("\nlast\n"))).toEqual(["last"]);
    // A partial line that ends in CR at the end of input is still one line.
    const atEnd = new LineSplitter(10);
    expect(atEnd.push(bytes(`${line}\r`))).toEqual([]);
    expect(atEnd.end()).toEqual([line]);
  });
});

/** A writable that takes writes only when told to: a peer that does not read. */
class StalledPeer extends Writable {
  readonly lines: string[] = [];
  private held: Array<() => void> = [];
  private reading = false;

  constructor(highWaterMark = 64) {
    super({ highWaterMark });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const take = () => {
      this.lines.push(...chunk.toString("utf8").split("\n").filter((l) => l !== ""));
      done();
    };
    if (this.reading) take();
    else this.held.push(take);
  }

  startReading(): void {
    this.reading = true;
    for (const take of this.held.splice(0)) take();
  }
}

/** A dialect for the tests: answers every line with `got:<line>`, after `delayMs` when set. */
function echo(options: { delayMs?: number } = {}) {
  const received: string[] = [];
  const state = { received, oversized: 0, closed: false };
  const connect = (send: (line: string) => void): NdjsonConnection => ({
    async receive(line) {
      received.push(line);
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      send(`got:${line}`);
    },
    oversized: () => {
      state.oversized++;
      send("oversized");
    },
    close: () => void (state.closed = true),
  });
  return { state, connect };
}

const lines = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `line-${from + i}`);

describe("NdjsonStream", () => {
  it("stops reading while the peer leaves the output unread, and answers everything once it reads", async () => {
    const input = new PassThrough();
    const output = new StalledPeer();
    const dialect = echo();
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 1024 });

    input.write(`${lines(5000).join("\n")}\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The output backed up after a handful of answers: the rest waits unread.
    expect(dialect.state.received.length).toBeGreaterThan(0);
    expect(dialect.state.received.length).toBeLessThan(100);
    expect(input.isPaused()).toBe(true);

    output.startReading();
    input.end();
    expect(await stream.ended).toBe("input ended");
    await stream.whenSettled();
    expect(output.lines).toEqual(lines(5000).map((l) => `got:${l}`));
    expect(dialect.state.received).toEqual(lines(5000));
  });

  it("stops reading while MESSAGES_IN_FLIGHT_BOUND lines wait for their answers, and reads on once READ_ON_IN_FLIGHT are left", async () => {
    const input = new PassThrough();
    const output = new StalledPeer(1 << 20);
    output.startReading();
    // A dialect whose answers wait until the test lets them go (a slow first request holding the rest in order).
    const received: string[] = [];
    const waiting: Array<() => void> = [];
    const connect = (send: (line: string) => void): NdjsonConnection => ({
      receive: (line) => {
        received.push(line);
        return new Promise<void>((resolve) =>
          waiting.push(() => {
            send(`got:${line}`);
            resolve();
          }),
        );
      },
      oversized: () => undefined,
      close: () => undefined,
    });
    const stream = new NdjsonStream(input, output, connect, { maxLineBytes: 1024 });
    const total = MESSAGES_IN_FLIGHT_BOUND * 3;
    input.write(`${lines(total).join("\n")}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(MESSAGES_IN_FLIGHT_BOUND);
    expect(input.isPaused()).toBe(true);

    // Answering all but one of enough to read on leaves it waiting; that one reads on, up to the bound again.
    for (const answer of waiting.splice(0, MESSAGES_IN_FLIGHT_BOUND - READ_ON_IN_FLIGHT - 1)) answer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(MESSAGES_IN_FLIGHT_BOUND);
    waiting.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(received).toHaveLength(READ_ON_IN_FLIGHT + MESSAGES_IN_FLIGHT_BOUND);

    // Everything is handled, each line once and in order, as the answers keep coming.
    input.end();
    while (received.length < total || waiting.length > 0) {
      for (const answer of waiting.splice(0)) answer();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await stream.ended).toBe("input ended");
    expect(received).toEqual(lines(total));
    expect(output.lines).toEqual(lines(total).map((l) => `got:${l}`));
  });

  it("answers an oversized line through the dialect and goes on with the next one", async () => {
    const input = new PassThrough();
    const output = new StalledPeer();
    output.startReading();
    const dialect = echo();
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 16 });
    input.end(`short\n${"z".repeat(1000)}\nafter\n`);
    expect(await stream.ended).toBe("input ended");
    await stream.close();
    expect(output.lines).toEqual(["got:short", "oversized", "got:after"]);
  });

  it("disconnects a peer with more than maxBufferedBytes unread when there is more to send, once", async () => {
    const input = new PassThrough();
    const output = new StalledPeer(1024 * 1024);
    const dialect = echo();
    let dropped = 0;
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 1 << 20, maxBufferedBytes: 10_000, onSlowConsumer: () => dropped++ });
    // Each answer is ~5 kB; the output's own buffer is larger than the bound, so only the bound stops it.
    // The lines come tick after tick: the answers of earlier ticks are still unread when more are sent.
    for (let i = 0; i < 10 && !output.destroyed; i++) {
      input.write(`${"a".repeat(5000)}${i}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await stream.ended).toBe("slow consumer");
    expect(dropped).toBe(1);
    expect(output.destroyed).toBe(true);
  });

  it("lets a burst written in one tick through, however large, to a peer that has read everything before it", async () => {
    const input = new PassThrough();
    const output = new StalledPeer(1024 * 1024);
    const dialect = echo();
    let dropped = 0;
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 1 << 20, maxBufferedBytes: 10_000, onSlowConsumer: () => dropped++ });
    input.write(`${lines(10).map((l) => `${l}${"a".repeat(5000)}`).join("\n")}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(dialect.state.received).toHaveLength(10);
    expect(dropped).toBe(0);
    output.startReading();
    input.end();
    expect(await stream.ended).toBe("input ended");
    expect(output.lines).toHaveLength(10);
  });

  it("close() lets the lines in flight answer, closes the connection, then ends the output", async () => {
    const input = new PassThrough();
    const output = new StalledPeer();
    output.startReading();
    const dialect = echo({ delayMs: 100 });
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 1024 });
    input.write("slow-1\nslow-2\n");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stream.inFlight).toBe(2);
    expect(await stream.close(5000)).toEqual({ flushed: true });
    expect(output.lines).toEqual(["got:slow-1", "got:slow-2"]);
    expect(dialect.state.closed).toBe(true);
    expect(output.writableFinished).toBe(true);
    // Nothing more is read once closed.
    input.write("late\n");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(dialect.state.received).toEqual(["slow-1", "slow-2"]);
  });

  it("ends with 'output closed' when the peer stops reading for good (EPIPE), and stops reading", async () => {
    const input = new PassThrough();
    const output = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    const dialect = echo();
    const stream = new NdjsonStream(input, output, dialect.connect, { maxLineBytes: 1024 });
    input.write("one\n");
    expect(await stream.ended).toBe("output closed");
    input.write("two\n");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(dialect.state.received).toEqual(["one"]);
    expect(await stream.close(100)).toEqual({ flushed: false });
  });
});
