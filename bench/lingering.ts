/**
 * What keeps the bench's process alive once its results are out. `npm run bench` was seen to stay
 * up after its last row in some runs, and not in the runs made to find out why (every section
 * alone and a whole run ended at once), so the cause is not known. Should a run stay up again,
 * this names what it waits on: if the process is still running `afterMs` after the results, the
 * handles and resources its event loop holds are logged (sockets with their addresses, servers
 * with theirs, child processes with their command lines). The timer is unref'd: it never keeps the
 * process alive itself, and a run that ends as it should logs nothing.
 */
export function reportLingeringHandles(log: (line: string) => void, afterMs = 10_000): void {
  setTimeout(() => {
    log(`still running ${afterMs / 1000} s after the results; the event loop waits on: ${process.getActiveResourcesInfo().join(", ")}`);
    // Node's own list of handles (undocumented, but the only one that says which socket or child).
    const handles = (process as unknown as { _getActiveHandles?: () => unknown[] })._getActiveHandles?.() ?? [];
    for (const handle of handles) log(`  ${describe(handle)}`);
  }, afterMs).unref();
}

function describe(handle: unknown): string {
  const kind = (handle as { constructor?: { name?: string } }).constructor?.name ?? typeof handle;
  const h = handle as Record<string, unknown> & { address?: () => unknown };
  if (kind === "ChildProcess") return `child process ${String(h.pid)}: ${(h.spawnargs as string[] | undefined)?.join(" ") ?? ""}`;
  if (kind === "Server") return `server ${JSON.stringify(h.address?.())}`;
  if (kind === "Socket") {
    const fd = (h._handle as { fd?: number } | null | undefined)?.fd;
    return h.remoteAddress === undefined ? `pipe or stdio stream, fd ${String(fd)}` : `socket ${String(h.localAddress)}:${String(h.localPort)} → ${String(h.remoteAddress)}:${String(h.remotePort)}`;
  }
  return kind;
}
