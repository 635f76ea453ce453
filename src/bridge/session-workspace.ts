import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { invalidParams } from "./ask-errors.js";

/**
 * Where Ask sessions may work. `session/create`'s `workspace.workspacePath` may be absolute,
 * relative (to the default working directory; "." is that directory) or null/absent (the default).
 * With workspace roots — the operator's `--workspace-root`, or a tenant's own in the tokens file —
 * the resolved directory must be a root or lie under one, or the create is -32602. Without roots
 * nothing is confined.
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

const FIELD = "workspace.workspacePath";

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

  /** The absolute working directory for a requested path; -32602 naming the field when it lies outside the roots. */
  resolve(requested: string | null | undefined, tenant: string | undefined): string {
    const base = this.defaultFor(tenant);
    const path = requested === null || requested === undefined ? base : resolve(base, requested);
    const roots = this.rootsOf(tenant);
    if (roots.length === 0) return path;
    const shown = JSON.stringify(requested ?? path);
    if (!roots.some((root) => isWithin(path, root))) {
      throw invalidParams(FIELD, `${shown} is outside the workspace roots (${roots.join(", ")})`);
    }
    const real = realPath(path);
    if (real !== undefined && !roots.some((root) => isWithin(real, realPath(root) ?? root))) {
      throw invalidParams(FIELD, `${shown} leads outside the workspace roots (${roots.join(", ")}) through a symbolic link`);
    }
    return path;
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
