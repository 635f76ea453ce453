import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { TauResponseError } from "../tau/upstream-errors.js";

/**
 * Where sessions may work, whichever dialect creates them (Ask `session/create`'s
 * `workspace.workspacePath`, Codex `thread/start`'s `cwd`, ACP `session/new`'s `cwd`). A requested
 * directory may be absolute, relative (to the default working directory; "." is that directory) or
 * null/absent (the default). With workspace roots — the operator's `--workspace-root`, or a
 * tenant's own in the tokens file — the resolved directory must be a root or lie under one, or the
 * dialect refuses the request as invalid params naming its field. Without roots nothing is confined.
 *
 * The check is on paths, after `.` and `..` are resolved. When the directory exists on the
 * gateway's machine (always so with the embedded Tau host) its symbolic links are followed too, so
 * a link inside a root cannot lead out of it. It confines the session's working directory only:
 * Tau's own tools still run commands wherever the host's user may.
 */

export interface WorkspaceRoots {
  /** Roots of every tenant without roots of its own (and of a gateway without tenants); empty = unconfined. */
  readonly shared: readonly string[];
  /** A tenant's own roots, from the tokens file; they replace the shared ones for that tenant. */
  readonly byTenant?: ReadonlyMap<string, readonly string[]>;
}

/** Where a session may start: the absolute directory, or why the request is refused. */
export type Placement = { ok: true; path: string } | { ok: false; reason: string };

export class WorkspacePolicy {
  constructor(
    private readonly defaultCwd: string,
    private readonly roots: WorkspaceRoots = { shared: [] },
  ) {}

  /** The roots that confine `tenant`'s sessions (empty = none). */
  rootsOf(tenant: string | undefined): readonly string[] {
    return (tenant !== undefined ? this.roots.byTenant?.get(tenant) : undefined) ?? this.roots.shared;
  }

  /** The working directory of a session created without a path: the default one, or the first root when that lies outside the roots. */
  defaultFor(tenant: string | undefined): string {
    const roots = this.rootsOf(tenant);
    if (roots.length === 0 || roots.some((root) => isWithin(this.defaultCwd, root))) return this.defaultCwd;
    return roots[0]!;
  }

  /** The absolute working directory for a requested path, or why it is refused (it lies outside the roots). */
  place(requested: string | null | undefined, tenant: string | undefined): Placement {
    const base = this.defaultFor(tenant);
    const path = requested === null || requested === undefined || requested === "" ? base : resolve(base, requested);
    const roots = this.rootsOf(tenant);
    if (roots.length === 0) return { ok: true, path };
    const shown = JSON.stringify(requested ?? path);
    if (!roots.some((root) => isWithin(path, root))) {
      return { ok: false, reason: `${shown} is outside the workspace roots (${roots.join(", ")})` };
    }
    const real = realPath(path);
    if (real !== undefined && !roots.some((root) => isWithin(real, realPath(root) ?? root))) {
      return { ok: false, reason: `${shown} leads outside the workspace roots (${roots.join(", ")}) through a symbolic link` };
    }
    return { ok: true, path };
  }
}

/** `path` is `root` or lies under it (both absolute and normalised). */
function isWithin(path: string, root: string): boolean {
  const rest = relative(root, path);
  return rest === "" || (rest !== ".." && !rest.startsWith(`..${sep}`) && !isAbsolute(rest));
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * Why the Tau host refused to create a session in `path`, in words a client on another machine
 * understands; undefined for any other failure. The host checks the directory on its own file
 * system: an editor relaying to a gateway in a container or on another machine sends a folder of
 * its own machine, which the host answers only with its `invalid_params` (the working directory is
 * the one value of session.create a client chooses).
 */
export function workingDirectoryRefused(err: unknown, path: string): string | undefined {
  if (!(err instanceof TauResponseError) || err.method !== "session.create" || err.code !== "invalid_params") return undefined;
  return (
    `${JSON.stringify(path)} is not a directory the Tau host can work in (it answered: ${err.message}). ` +
    "The host sees its own file system: a client on another machine than the host, or a gateway or host in a container, " +
    "needs that directory under the same path there (a mounted volume), or a path of the host's own (docs/remote.md)"
  );
}
