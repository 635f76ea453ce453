import { createHash, timingSafeEqual } from "node:crypto";
import { resolve } from "node:path";
import type { ValidateFunction } from "ajv/dist/2019.js";
import { ajv2019 } from "../../shared/lazy-ajv.js";
import { configFileError, parseConfigJson, readConfigFile } from "../../validation/config-files.js";
import { explain, formatIssue } from "../../validation/issues.js";

/**
 * The gateway's own credentials: bearer tokens, each naming the tenant it acts for. Tokens come
 * from a file (`--tokens-file`, a JSON list of `{id, token | sha256, tenant, workspaceRoots?, operator?, sessionRole?}`;
 * a tenant's `workspaceRoots` confine its sessions' working directories; `operator` lets a token
 * see every tenant's traffic in the inspector, where other tokens see their own tenant's, and grant roles in
 * any session of its tenant; `sessionRole` is the token's role in a session of its tenant it neither created
 * nor was granted a role in: `controller`, the default, or `observer`) or as one token
 * (`--token` / `TAU_GATEWAY_TOKEN`, tenant "default"). Only SHA-256 digests are kept, and every
 * check compares digests in constant time, so neither the token text nor how much of it matched
 * can leak through memory dumps or response timing.
 */

/** Who a request authenticated as. `id` names the token (for logs), never the token itself. */
export interface Principal {
  readonly tokenId: string;
  readonly tenant: string;
  /** Marked `"operator": true` in the tokens file: sees every tenant in the inspector (`serve --inspector`). */
  readonly operator?: boolean;
  /** Its role in its tenant's sessions that it neither created nor was granted a role in (absent: controller). */
  readonly sessionRole?: "controller" | "observer";
}

/** The tenant of the single `--token`. */
export const DEFAULT_TENANT = "default";
/** The principal of the single `--token` (its id, as an approval policy or a role grant names it). */
export const SINGLE_TOKEN_ID = "default";

interface TokenEntry extends Principal {
  readonly digest: Buffer;
}

export class TokenRegistry {
  private readonly entries: readonly TokenEntry[];
  private readonly roots: ReadonlyMap<string, readonly string[]>;

  private constructor(entries: TokenEntry[], roots: ReadonlyMap<string, readonly string[]> = new Map()) {
    this.entries = entries;
    this.roots = roots;
  }

  /** One token acting for tenant "default". */
  static single(token: string): TokenRegistry {
    return new TokenRegistry([{ tokenId: SINGLE_TOKEN_ID, tenant: DEFAULT_TENANT, digest: sha256(token) }]);
  }

  /** Reads and validates a tokens file; errors name the file and the entry. */
  static async fromFile(path: string): Promise<TokenRegistry> {
    return TokenRegistry.parse(await readConfigFile(path, "the tokens file"), path);
  }

  /** Validates the text of a tokens file; `source` names it in errors. */
  static parse(text: string, source: string): TokenRegistry {
    const document = parseConfigJson(text, source);
    const check = checkFile();
    if (!check(document)) throw configFileError(source, explain(check.errors).map((issue) => describeIssue(document, issue)));
    const problems: string[] = [];
    const entries: TokenEntry[] = [];
    const firstById = new Map<string, number>();
    const firstByDigest = new Map<string, number>();
    const roots = new Map<string, { roots: string[] | undefined; index: number }>();
    (document as TokenFileEntry[]).forEach((entry, index) => {
      const at = `entry ${index} (id ${JSON.stringify(entry.id)})`;
      if ((entry.token === undefined) === (entry.sha256 === undefined)) {
        problems.push(`${at}: must have exactly one of "token" and "sha256"`);
        return;
      }
      const earlierId = firstById.get(entry.id);
      if (earlierId !== undefined) problems.push(`${at}: id is already used by entry ${earlierId}`);
      else firstById.set(entry.id, index);
      const digest = entry.token !== undefined ? sha256(entry.token) : Buffer.from(entry.sha256!, "hex");
      // The same secret twice could only mean two tenants at once: refuse rather than pick one.
      const key = digest.toString("hex");
      const earlierDigest = firstByDigest.get(key);
      if (earlierDigest !== undefined) problems.push(`${at}: the same token as entry ${earlierDigest}`);
      else firstByDigest.set(key, index);
      // Roots belong to the tenant (its sessions are shared by all its tokens): every entry of a tenant says the same.
      const entryRoots = entry.workspaceRoots?.map((root) => resolve(root));
      const earlier = roots.get(entry.tenant);
      if (!earlier) roots.set(entry.tenant, { roots: entryRoots, index });
      else if (JSON.stringify(earlier.roots) !== JSON.stringify(entryRoots)) {
        problems.push(`${at}: workspaceRoots differ from those of entry ${earlier.index}, of the same tenant ${JSON.stringify(entry.tenant)}`);
      }
      entries.push({
        tokenId: entry.id,
        tenant: entry.tenant,
        digest,
        ...(entry.operator === true ? { operator: true } : {}),
        ...(entry.sessionRole !== undefined ? { sessionRole: entry.sessionRole } : {}),
      });
    });
    if (problems.length > 0) throw configFileError(source, problems);
    const byTenant = new Map([...roots].flatMap(([tenant, r]) => (r.roots ? [[tenant, r.roots] as const] : [])));
    return new TokenRegistry(entries, byTenant);
  }

  /** Each tenant's own workspace roots (tenants without are not listed). */
  tenantWorkspaceRoots(): ReadonlyMap<string, readonly string[]> {
    return this.roots;
  }

  get size(): number {
    return this.entries.length;
  }

  /** The principals the tokens are for (each entry's id), as an approval policy names them. */
  principalIds(): readonly string[] {
    return this.entries.map((entry) => entry.tokenId);
  }

  /** How many tenants the tokens act for. */
  get tenantCount(): number {
    return new Set(this.entries.map((entry) => entry.tenant)).size;
  }

  /**
   * The principal a presented token belongs to, or undefined. Every entry is compared (no early
   * exit), each comparison in constant time over fixed-length digests.
   */
  authenticate(presented: string): Principal | undefined {
    const digest = sha256(presented);
    let match: TokenEntry | undefined;
    for (const entry of this.entries) {
      if (timingSafeEqual(entry.digest, digest)) match = entry;
    }
    return (
      match && {
        tokenId: match.tokenId,
        tenant: match.tenant,
        ...(match.operator ? { operator: true } : {}),
        ...(match.sessionRole ? { sessionRole: match.sessionRole } : {}),
      }
    );
  }
}

/** Rules for a token's text: something an `Authorization: Bearer` header and a query string can carry. */
export function checkTokenText(token: string): string {
  if (token.length === 0) throw new Error("must not be empty");
  if (/[\s\u0000-\u001f\u007f]/.test(token)) throw new Error("must not contain whitespace or control characters");
  return token;
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

interface TokenFileEntry {
  id: string;
  token?: string;
  sha256?: string;
  tenant: string;
  workspaceRoots?: string[];
  operator?: boolean;
  sessionRole?: "controller" | "observer";
}

const NAME = { type: "string", minLength: 1, maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]+$" } as const;

const TOKENS_FILE_SCHEMA = {
  type: "array",
  minItems: 1,
  items: {
    type: "object",
    required: ["id", "tenant"],
    additionalProperties: false,
    properties: {
      id: NAME,
      tenant: NAME,
      token: { type: "string", minLength: 1, pattern: "^[^\\s\\u0000-\\u001f\\u007f]+$" },
      sha256: { type: "string", pattern: "^[0-9a-fA-F]{64}$" },
      workspaceRoots: { type: "array", minItems: 1, uniqueItems: true, items: { type: "string", pattern: "^/" } },
      operator: { type: "boolean" },
      sessionRole: { enum: ["controller", "observer"] },
    },
  },
} as const;

let compiledCheck: ValidateFunction | undefined;

/** Compiled on first use: a gateway without such a file never pays for the compile (ajv checks the schema first, against a meta-schema it compiles too). */
const checkFile = (): ValidateFunction => (compiledCheck ??= new (ajv2019())({ strict: true, allErrors: true, verbose: true }).compile(TOKENS_FILE_SCHEMA));

/** Plain words for the patterns above (ajv would quote the regex). */
const PATTERN_TEXT: Record<string, string> = {
  token: "must not contain whitespace or control characters",
  sha256: "must be 64 hexadecimal digits (the SHA-256 of the token)",
  id: "must not contain control characters",
  tenant: "must not contain control characters",
  workspaceRoots: "must be an absolute path (start with /)",
};

/** "entry 2 (id "ci") /token: …" — the entry by position and id, so a long file is easy to fix. */
function describeIssue(document: unknown, issue: ReturnType<typeof explain>[number]): string {
  if (issue.pointer === "") return issue.keyword === "minItems" ? "lists no tokens" : "must be a JSON list of {id, token or sha256, tenant} entries";
  const match = /^\/(\d+)(\/(.*))?$/.exec(issue.pointer);
  if (!match || !Array.isArray(document)) return formatIssue(issue);
  const index = Number(match[1]);
  const entry = document[index] as Record<string, unknown> | undefined;
  const id = typeof entry?.id === "string" ? ` (id ${JSON.stringify(entry.id)})` : "";
  const field = match[3];
  const pattern = field ? PATTERN_TEXT[field.split("/")[0]!] : undefined;
  const message =
    issue.keyword === "pattern" && pattern
      ? pattern
      : field === "sessionRole" && issue.keyword === "enum"
        ? `must be "controller" or "observer" (the token's role in its tenant's sessions it did not create), not ${JSON.stringify(entry?.sessionRole)}`
        : issue.message;
  return `entry ${index}${id}${field ? ` /${field}` : ""}: ${message}`;
}
