import fc from "fast-check";

/** One `GET /rpc/events` case: which session, which cursor, and whether to reconnect midway. */
export interface SseCase {
  /** "live": the session with events; otherwise the sessionId query value as sent (undefined: left out). */
  session: "live" | string | undefined;
  afterSeq: string | undefined;
  /** The Last-Event-ID header (undefined: not sent). */
  lastEventId: string | undefined;
  /** Reconnect after this many events (undefined: read the whole replay on one connection). */
  reconnectAfter: number | undefined;
}

/** Values a client might put where an event seq goes. */
const cursor = (newestSeq: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: newestSeq + 2 }).map(String) },
    {
      weight: 3,
      arbitrary: fc.constantFrom("", "0", "-1", "1.5", "1e1", "+1", "0x1", "00", "01", " 2", "2 ", "9007199254740991", "9007199254740992", "99999999999999999999", "１", "NaN", "null", "\t3"),
    },
    { weight: 1, arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 12 }) },
  );

/** Lone surrogates as U+FFFD (a URL component must be well-formed UTF-16 to be percent-encoded). */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** What an HTTP header value can carry (node refuses to send anything else). */
const headerSafe = (s: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(s);

const sessionQuery = (): fc.Arbitrary<SseCase["session"]> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant("live") },
    { weight: 1, arbitrary: fc.constantFrom<string | undefined>(undefined, "", " ", "\t", "00000000-0000-4000-8000-000000000000", "⟦session⟧", "live ") },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map(wellFormed) },
  );

/** Cases against a session whose newest event is `newestSeq`. */
export function sseCases(newestSeq: number): fc.Arbitrary<SseCase> {
  return fc.record({
    session: sessionQuery(),
    afterSeq: fc.option(cursor(newestSeq), { nil: undefined }),
    lastEventId: fc.option(cursor(newestSeq).filter(headerSafe), { nil: undefined, freq: 3 }),
    reconnectAfter: fc.option(fc.integer({ min: 1, max: Math.max(1, newestSeq - 1) }), { nil: undefined }),
  });
}
