import { randomUUID } from "node:crypto";
import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import type { SessionCreateParams } from "../../generated/tau-v18.js";
import { applyChanges, checkSnapshotInvariants } from "../tau/delta-applier.js";
import type { BundleValidator } from "../validation/validator.js";
import { DEFAULT_PERSONA_ID, personaById } from "./catalog.js";
import { newSessionSnapshot } from "./new-session.js";
import type { PersistedSession } from "./persistence.js";
import { invalidParams } from "./protocol-error.js";
import { recoveryChanges } from "./recovery.js";
import { SessionRuntime, type RuntimeDependencies } from "./session-runtime.js";
import { unknownPersona } from "./session-mutations.js";

/** Every session this host serves, created here or restored from the state directory. */
export class SessionRegistry {
  private readonly sessions = new Map<string, SessionRuntime>();

  constructor(
    private readonly deps: RuntimeDependencies,
    private readonly schema: BundleValidator,
  ) {}

  /**
   * Loads persisted sessions and applies recovery (spec §9): they come back idle, unfinished turns
   * aborted, running operations cancelled. Sessions the host cannot serve are skipped.
   */
  async restore(): Promise<void> {
    for (const stored of await this.deps.store.loadAll()) {
      const id = stored.snapshot.sessionId;
      try {
        const checked = this.schema.check("Snapshot", stored.snapshot);
        if (!checked.ok) throw new Error(`invalid snapshot: ${checked.issues.map((i) => `${i.pointer} ${i.message}`).join("; ")}`);
        checkSnapshotInvariants(stored.snapshot);
        if (stored.snapshot.executionEnvironment.kind !== "local") throw new Error("only local execution environments can be restored");
        this.sessions.set(id, new SessionRuntime(recover(stored), this.deps));
      } catch (err) {
        this.deps.log(`state: cannot restore session ${id}: ${(err as Error).message}`);
      }
    }
  }

  async create(params: SessionCreateParams): Promise<SessionRuntime> {
    const environment = params.executionEnvironment;
    if (environment.kind !== "local") {
      throw invalidParams(
        `session.create params.executionEnvironment.kind ${JSON.stringify(environment.kind)} is not supported by this host; only "local" execution environments are available`,
      );
    }
    const isDirectory = await stat(environment.cwd).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDirectory) throw invalidParams(`session.create params.executionEnvironment.cwd is not an existing directory: ${environment.cwd}`);
    const personaId = params.personaId ?? DEFAULT_PERSONA_ID;
    if (!personaById(personaId)) throw unknownPersona(personaId);
    const snapshot = newSessionSnapshot({
      sessionId: randomUUID(),
      attributes: params.attributes,
      executionEnvironment: {
        kind: "local",
        cwd: environment.cwd,
        home: process.env.HOME || homedir(),
        ...(environment.env === undefined ? {} : { env: environment.env }),
      },
      personaId,
      reasoning: params.reasoning ?? "medium",
      autoCompactThresholdTokens: params.autoCompactThresholdTokens ?? null,
    });
    const session = new SessionRuntime({ format: 1, snapshot, historyEntryIds: [] }, this.deps);
    this.sessions.set(session.id, session);
    return session;
  }

  get(sessionId: string): SessionRuntime | undefined {
    return this.sessions.get(sessionId);
  }

  list(): SessionRuntime[] {
    return [...this.sessions.values()].sort((a, b) => a.snapshot.createdAt - b.snapshot.createdAt);
  }

  /** Interrupts all work and waits for it to settle; then the store can be flushed. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.shutdown()));
  }
}

function recover(stored: PersistedSession): PersistedSession {
  const changes = recoveryChanges(stored.snapshot);
  if (!changes.length) return stored;
  const snapshot = applyChanges(stored.snapshot, changes);
  snapshot.revision = stored.snapshot.revision + 1;
  return { ...stored, snapshot };
}
