/**
 * Which definition of the official Codex bundle is a request's result. The bundle says it nowhere:
 * `ClientRequest` and `ServerRequest` list each request with its params, and the responses are
 * free-standing definitions named after the Rust type that carries them. The names follow three
 * habits, tried in this order:
 * 1. named after the params: `ThreadStartParams` → `ThreadStartResponse`;
 * 2. named after the method: `configRequirements/read` → `ConfigRequirementsReadResponse`;
 * 3. the same words in another order or with a verb of the same meaning, and possibly a word more
 *    or less: `account/logout` → `LogoutAccountResponse`, `account/rateLimits/read` →
 *    `GetAccountRateLimitsResponse`, `config/value/write` → `ConfigWriteResponse`,
 *    `accountSession/list` → `AccountSessionsResponse`. Only responses
 *    no request claimed by habit 1 or 2 are candidates, and one must fit best.
 * A request none of them matches is left without a result, for the comparison to warn about.
 */

export interface CodexRequest {
  method: string;
  /** The params definition's name (through a nullable or `allOf` wrapper), if it has one. */
  paramsName?: string;
}

export interface CodexResults {
  /** Request method → the name of its result definition. */
  results: Map<string, string>;
  /** Requests whose result more than one definition fits equally well. */
  ambiguous: Map<string, string[]>;
}

const RESPONSE = "Response";
/** Verbs the Rust names and the method names use for the same thing. */
const SYNONYMS: Record<string, string> = { get: "read", reload: "refresh" };

export function matchCodexResults(requests: CodexRequest[], definitionNames: Iterable<string>): CodexResults {
  const defined = new Set(definitionNames);
  const results = new Map<string, string>();
  const ambiguous = new Map<string, string[]>();
  for (const { method, paramsName } of requests) {
    const byParams = paramsName?.endsWith("Params") ? `${paramsName.slice(0, -"Params".length)}${RESPONSE}` : undefined;
    const byMethod = `${method.split("/").map(capitalise).join("")}${RESPONSE}`;
    const found = [byParams, byMethod].find((name) => name !== undefined && defined.has(name));
    if (found) results.set(method, found);
  }
  const claimed = new Set(results.values());
  const candidates = [...defined].filter((name) => name.endsWith(RESPONSE) && name !== RESPONSE && !claimed.has(name) && !name.startsWith("JSONRPC"));
  for (const { method } of requests) {
    if (results.has(method)) continue;
    const words = wordsOf(method.split("/").join(" "));
    let best: string[] = [];
    let bestScore = 0;
    for (const name of candidates) {
      const score = fit(words, wordsOf(name.slice(0, -RESPONSE.length)));
      if (score > bestScore) [best, bestScore] = [[name], score];
      else if (score === bestScore && score > 0) best.push(name);
    }
    if (best.length === 1) results.set(method, best[0]!);
    else if (best.length > 1) ambiguous.set(method, best);
  }
  return { results, ambiguous };
}

const capitalise = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** The words of a name, lower case, synonyms made one: "account/rateLimits/read" and "GetAccountRateLimits" give the same set. */
function wordsOf(name: string): Set<string> {
  const words = name.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g) ?? [];
  return new Set(words.map((w) => w.toLowerCase()).map((w) => SYNONYMS[w] ?? singular(w)));
}

/** A plural made singular, the same way on both sides (`AccountSessionsResponse` is `accountSession/list`'s). */
const singular = (word: string) => (word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word);

/**
 * How well a response's words fit a method's: 0 unless one set holds the other and they share at
 * least two words, else the share of words in common (1 for the same words).
 */
function fit(method: Set<string>, response: Set<string>): number {
  const common = [...method].filter((w) => response.has(w)).length;
  if (common < 2 || (common !== method.size && common !== response.size)) return 0;
  return common / (method.size + response.size - common);
}
