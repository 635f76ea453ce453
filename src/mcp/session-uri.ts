/** The URI of a session's transcript resource. */
export const sessionUri = (sessionId: string) => `tau://session/${encodeURIComponent(sessionId)}`;

/** The session a transcript URI names, or undefined when the URI is no session's. */
export function sessionOfUri(uri: string): string | undefined {
  const match = /^tau:\/\/session\/([^/?#]+)$/.exec(uri);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}
