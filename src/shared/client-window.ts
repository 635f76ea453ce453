/**
 * The client version window: for each client family the gateway is tested with, the oldest and the
 * newest release the tests run (interop/ installs both where they differ), and how a connection of
 * that family names itself in `initialize`. A client outside the window is served as any other;
 * the gateway only says in its log that it was never tested with that release (window-check in
 * clientOutsideWindow). docs/testing.md#the-client-version-window lists the same data.
 *
 * Clients move weekly: widening the window is installing the new release beside the pinned one in
 * interop/package.json, running the interop suite on it, and moving `newest` here.
 */

export interface ClientFamily {
  /** How people call it. */
  readonly family: string;
  /** The npm package a release is installed from. */
  readonly package: string;
  /** The dialect it speaks to the gateway. */
  readonly dialect: "codex" | "acp";
  readonly oldest: string;
  readonly newest: string;
  /**
   * The `clientInfo.name` values it initializes with. Empty when the family is a library whose
   * clientInfo is the application's own (the ACP SDK): its release cannot be told on the wire.
   */
  readonly clientNames: readonly string[];
  /**
   * What it sends as `clientInfo.version` when that is not its release: the AI SDK provider sends
   * "1.0.0" from every release, so a connection of it can be checked only against that.
   */
  readonly reportsVersion?: string;
}

export const CLIENT_WINDOW: readonly ClientFamily[] = [
  { family: "Codex CLI (terminal UI)", package: "@openai/codex", dialect: "codex", oldest: "0.169.0", newest: "0.171.0", clientNames: ["codex-tui"] },
  {
    family: "AI SDK Codex app-server provider",
    package: "ai-sdk-provider-codex-app-server",
    dialect: "codex",
    oldest: "1.1.7",
    newest: "1.1.7",
    clientNames: ["ai-sdk-provider-codex-app-server"],
    reportsVersion: "1.0.0",
  },
  // codex-acp passes on the clientInfo of the editor that spawned it; its own only when the editor sends none.
  { family: "codex-acp", package: "@agentclientprotocol/codex-acp", dialect: "codex", oldest: "2.6.0", newest: "2.6.0", clientNames: ["@agentclientprotocol/codex-acp"] },
  { family: "ACP TypeScript SDK", package: "@agentclientprotocol/sdk", dialect: "acp", oldest: "2.4.0", newest: "2.4.0", clientNames: [] },
  { family: "acpx", package: "acpx", dialect: "acp", oldest: "0.19.1", newest: "0.19.1", clientNames: ["acpx"] },
];

/** The family of the Codex terminal UI, whose newest release is the Codex version the gateway answers as. */
const CODEX_CLI = CLIENT_WINDOW.find((f) => f.package === "@openai/codex")!;

/**
 * The Codex release whose app-server surface the gateway serves (the newest tested): the Codex UIs
 * compare their own version with the one `userAgent` names and warn about an older server.
 */
export const CODEX_COMPATIBLE_VERSION = CODEX_CLI.newest;

/** What the log says of a client outside the window. */
export interface OutsideWindow {
  readonly family: string;
  readonly version: string;
  readonly oldest: string;
  readonly newest: string;
  /** older or newer than every tested release. */
  readonly side: "older" | "newer";
}

/**
 * The family and side when a client of a known family names a version outside its window;
 * undefined for a version inside it, an unknown client, or a version that is not x.y.z.
 */
export function clientOutsideWindow(dialect: ClientFamily["dialect"], clientInfo: { name?: string; version?: string } | null | undefined): OutsideWindow | undefined {
  if (!clientInfo?.name || !clientInfo.version) return undefined;
  const family = CLIENT_WINDOW.find((f) => f.dialect === dialect && f.clientNames.includes(clientInfo.name!));
  if (!family) return undefined;
  const version = clientInfo.version;
  const [oldest, newest] = family.reportsVersion ? [family.reportsVersion, family.reportsVersion] : [family.oldest, family.newest];
  const below = compareVersions(version, oldest);
  const above = compareVersions(version, newest);
  if (below === undefined || above === undefined) return undefined;
  if (below >= 0 && above <= 0) return undefined;
  return { family: family.family, version, oldest: family.oldest, newest: family.newest, side: below < 0 ? "older" : "newer" };
}

/**
 * Orders two release versions (x.y.z, an optional -pre-release sorting before its release);
 * undefined when either is not one.
 */
export function compareVersions(a: string, b: string): number | undefined {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa || !pb) return undefined;
  for (let i = 0; i < 3; i++) if (pa.core[i] !== pb.core[i]) return pa.core[i]! - pb.core[i]!;
  if (pa.pre === pb.pre) return 0;
  if (pa.pre === undefined) return 1;
  if (pb.pre === undefined) return -1;
  return pa.pre < pb.pre ? -1 : 1;
}

function parseVersion(text: string): { core: number[]; pre?: string } | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(text.trim());
  if (!match) return undefined;
  return { core: [Number(match[1]), Number(match[2]), Number(match[3])], pre: match[4] };
}

/** The log line's words for a client outside the window. */
export function outsideWindowMessage(outside: OutsideWindow): string {
  return `${outside.family} ${outside.version} is ${outside.side} than every release tested with this gateway (${outside.oldest} to ${outside.newest}); it is served, but untested`;
}
