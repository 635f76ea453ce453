import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

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
