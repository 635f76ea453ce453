// The frames filter of the inspector page, with no DOM: parsed once per edit, matched per frame.
//
//   dialect:acp dir:out invalid session:ID method:turn/* conn:codex-2 status:unpaired id:7 -method:*/delta text
//
// Terms are ANDed; a leading "-" negates one. `dir:in` (or client) is what clients sent, `dir:out`
// (or server) what the gateway sent them. `invalid` is any verdict but valid (`valid` the reverse);
// `status:` names one verdict. `method:` and `session:` take * wildcards. A bare word matches
// anywhere in the frame's text.

const KEYS = new Set(["dialect", "dir", "session", "method", "conn", "status", "id", "kind"]);
const DIALECTS = new Set(["ask", "codex", "acp", "tau"]);
const DIRECTIONS = { in: "client", client: "client", out: "server", server: "server" };
const STATUSES = new Set(["valid", "invalid", "unknown-method", "unpaired", "duplicate-id", "not-json", "sequence-gap"]);

/**
 * @typedef {{ key: string, value: string, negated: boolean, test: (frame: FilterableFrame) => boolean }} FilterTerm
 * @typedef {{ dialect: string, direction: "client" | "server", session?: string, method?: string, connection: string, id?: string | number, kind: string, verdict: { status: string }, message?: string, raw?: string }} FilterableFrame
 */

/** Parses filter text into terms; words it cannot read are reported, not dropped silently. */
export function parseFilter(text) {
  /** @type {FilterTerm[]} */
  const terms = [];
  /** @type {string[]} */
  const errors = [];
  for (const word of text.trim().split(/\s+/).filter((w) => w !== "")) {
    const negated = word.startsWith("-") && word.length > 1;
    const body = negated ? word.slice(1) : word;
    const colon = body.indexOf(":");
    const key = colon > 0 ? body.slice(0, colon).toLowerCase() : "";
    if (colon > 0 && KEYS.has(key)) {
      const value = body.slice(colon + 1);
      const test = termTest(key, value);
      if (typeof test === "string") errors.push(`${word}: ${test}`);
      else terms.push({ key, value, negated, test });
    } else if (body === "invalid" || body === "valid") {
      const wantValid = body === "valid";
      terms.push({ key: "status", value: body, negated, test: (f) => (f.verdict.status === "valid") === wantValid });
    } else {
      const needle = body.toLowerCase();
      terms.push({ key: "text", value: body, negated, test: (f) => (f.message ?? f.raw ?? "").toLowerCase().includes(needle) });
    }
  }
  return { terms, errors };
}

/** @returns {((frame: FilterableFrame) => boolean) | string} the test, or why the value is not one */
function termTest(key, value) {
  if (value === "") return "needs a value";
  switch (key) {
    case "dialect":
      return DIALECTS.has(value) ? (f) => f.dialect === value : "dialect is ask, codex, acp or tau";
    case "dir": {
      const direction = DIRECTIONS[/** @type {keyof typeof DIRECTIONS} */ (value.toLowerCase())];
      return direction ? (f) => f.direction === direction : "dir is in, out, client or server";
    }
    case "status":
      return STATUSES.has(value) ? (f) => (value === "invalid" ? f.verdict.status !== "valid" : f.verdict.status === value) : `status is one of ${[...STATUSES].join(", ")}`;
    case "session": {
      const match = wildcard(value);
      return (f) => f.session !== undefined && match(f.session);
    }
    case "method": {
      const match = wildcard(value);
      return (f) => f.method !== undefined && match(f.method);
    }
    case "conn":
      return (f) => f.connection === value;
    case "kind":
      return (f) => f.kind === value;
    case "id":
      return (f) => f.id !== undefined && String(f.id) === value;
  }
  return "unknown key";
}

/** `turn/*` → a test of the whole string, `*` standing for any run of characters. */
export function wildcard(pattern) {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  const regex = new RegExp(`^${source}$`);
  return (/** @type {string} */ text) => regex.test(text);
}

/** Whether a frame passes every term (a negated one: fails it). */
export function matchesFilter(filter, frame) {
  return filter.terms.every((term) => term.test(frame) !== term.negated);
}
