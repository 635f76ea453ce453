import type { Log } from "../../shared/log.js";
import type { SessionSettings, SessionSettingsStore } from "../../store/session-settings.js";
import { approvalModeFor, type ApprovalModeName } from "./approval-modes.js";
import { errorText } from "../../shared/unknown-values.js";

/**
 * How one session's command tools are gated: its approval mode now, and the tools granted for the
 * whole session. With replicas sharing a store, both are kept there too, because they change on
 * whichever replica a client talks to, while the calls are decided on the replica that owns the
 * session's host (and by the next owner after it): a change is written to the store before it is
 * answered, and the owner reads the store while it acks each call, before deciding.
 */
export interface ToolGatingOptions {
  sessionId: string;
  /** The mode recorded on the Tau session when it was created. */
  createdWith: ApprovalModeName;
  /** With replicas sharing a store: where changes are shared, and what it held when the session was opened here. */
  settings?: { store: SessionSettingsStore; stored: SessionSettings };
  /** Called with the new mode whenever it changes, whichever way the change came (set here, announced, or read from the store). */
  changed?: (mode: ApprovalModeName) => void;
  log?: Log;
}

export class ToolGating {
  private modeName: ApprovalModeName;
  private readonly grants = new Set<string>();
  private readonly store: SessionSettingsStore | undefined;

  constructor(private readonly options: ToolGatingOptions) {
    this.modeName = options.createdWith;
    this.store = options.settings?.store;
    if (options.settings) this.apply(options.settings.stored);
  }

  get mode(): ApprovalModeName {
    return this.modeName;
  }

  /** Gates the command tools by `mode` from the next call on: here at once, on every replica once this resolves. */
  async setMode(mode: ApprovalModeName): Promise<void> {
    this.become(mode);
    await this.store?.setMode(this.options.sessionId, mode);
  }

  granted(toolName: string): boolean {
    return this.grants.has(toolName);
  }

  /**
   * Whether a call of the command tool `toolName` may ask a person, as far as this replica knows
   * now: not when the mode runs command tools without asking, nor once the tool is granted for the
   * session (grants are never taken back). Mode `plan` may ask (once a plan is approved, which
   * only the replica holding the calls knows).
   */
  mayAsk(toolName: string): boolean {
    return (this.modeName === "on_request" || this.modeName === "plan") && !this.granted(toolName);
  }

  /**
   * The tool runs without asking for the rest of the session. Shared once the store has it; should
   * writing fail, only this replica remembers it (the next call elsewhere asks again, which is safe).
   */
  grant(toolName: string): void {
    this.grants.add(toolName);
    const { sessionId, log } = this.options;
    this.store?.grant(sessionId, toolName).catch((error: unknown) => {
      log?.("warn", "a session-wide grant could not be shared with the other replicas", { sessionId, toolName, error: errorText(error) });
    });
  }

  /** Takes in what other replicas changed. A store that cannot be read leaves what is known here (logged). */
  async refresh(): Promise<void> {
    if (!this.store) return;
    const { sessionId, log } = this.options;
    try {
      this.apply(await this.store.read(sessionId));
    } catch (error) {
      log?.("warn", "reading the session's mode and grants from the store failed; deciding with what this replica knows", { sessionId, error: errorText(error) });
    }
  }

  /** A mode the store says was set through another replica. */
  takeMode(mode: string): void {
    this.become(approvalModeFor(mode));
  }

  private apply(stored: SessionSettings): void {
    if (stored.mode !== undefined) this.takeMode(stored.mode);
    for (const toolName of stored.grants) this.grants.add(toolName);
  }

  private become(mode: ApprovalModeName): void {
    if (mode === this.modeName) return;
    this.modeName = mode;
    this.options.changed?.(mode);
  }
}
