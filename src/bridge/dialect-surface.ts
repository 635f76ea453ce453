import { JSONRPC_ERROR_CODES } from "../registry/error-codes.js";
import type { Dialect } from "../registry/index.js";
import type { Log } from "../shared/log.js";
import type { RpcError } from "../shared/rpc-error.js";
import type { ValidationIssue } from "../validation/issues.js";
import { ProtocolValidators, type BundleValidator, type ValidationResult } from "../validation/validator.js";
import { rpcFailure, type FailureWords } from "./rpc-failures.js";

/**
 * The one JSON-RPC surface every client dialect serves its calls through: look the method up,
 * read a missing `params` as `{}`, hold the connection to the dialect's handshake rule, refuse
 * params past the dialect's bounds on their size, validate params against the registry (-32602 naming the field), let the dialect admit the call, dispatch
 * to the handler the dialect's generated method map types, and turn every failure into the
 * dialect's JSON-RPC error, logging the unexpected ones. A dialect supplies its handler table and
 * its few differences as data (`SurfaceRules`).
 */

/** A method's handler: params already validated against the registry, resolving with the method's result. */
export type Handler<Ctx, Params, Result> = (ctx: Ctx, params: Params) => Promise<Result>;

/** A generated method map (`ClientRequests`): every method's params and result. */
export type MethodMap<M> = { [K in keyof M]: { params: unknown; result: unknown } };

/** One handler per method of the map: a method missing (or one the registry lacks) does not compile. */
export type Handlers<Ctx, M extends MethodMap<M>> = { [K in keyof M]: Handler<Ctx, M[K]["params"], M[K]["result"]> };

/** Notifications a client sends (`ClientNotifications`) as calls answered with nothing. */
export type NotificationsAsCalls<N> = { [K in keyof N]: { params: N[K]; result: void } };

/** A notification's handler: params already validated; nothing is answered. */
export type NotificationHandlers<Ctx, N> = { [K in keyof N]: (ctx: Ctx, params: N[K]) => void };

/** What one validation issue says, for the dialect to word. */
export interface ParamsIssue {
  method: string;
  /** The field, dotted (`input.0.text`), or `params` for the params as a whole. */
  field: string;
  /** The JSON Schema keyword that failed (`required`, `type`, …). */
  keyword: string;
  message: string;
}

/** A dialect's handshake: until it is done, only the registry's `beforeInitialize` methods are served. */
export interface HandshakeRule<Ctx> {
  initialized(ctx: Ctx): boolean;
  /** Methods the registry allows before the handshake (generated `BEFORE_INITIALIZE`). */
  readonly allowed: ReadonlySet<string>;
  /** The refusal of any other method. */
  refusal(method: string): RpcError;
  /** Unknown methods are refused as not initialized too, before they are looked up (ACP); otherwise they are looked up first (Codex). */
  readonly beforeLookup: boolean;
}

/** What one dialect's surface does differently from the others. */
export interface SurfaceRules<Ctx, M, ErrorName extends string> {
  /** The registry whose schemas validate params. */
  readonly dialect: Dialect;
  /** The dialect's words for refusals (see rpc-failures.ts). */
  readonly failures: FailureWords<ErrorName>;
  /** How the dialect words invalid params (the error is its invalid_params; default: `invalidParamsFor`). */
  invalidParams?(issue: ParamsIssue): string;
  /** Absent: a connection may call anything at any time. */
  readonly handshake?: HandshakeRule<Ctx>;
  /**
   * Refuses a call past a bound the dialect sets on how much its params hold (a cheap scan of the
   * params as received), before the validator walks them all; undefined lets it through.
   */
  bound?(method: Extract<keyof M, string>, params: unknown): RpcError | undefined;
  /** Refuses a valid call the connection may not make (e.g. an experimental field without the opt-in), or admits it. */
  admit?(ctx: Ctx, method: Extract<keyof M, string>, params: object): RpcError | undefined;
  /** Whether an internal error of the method is logged (default: every one); the log line names the dialect. */
  logsInternalError?(method: string): boolean;
  readonly log?: Log;
}

/** The wording JSON-RPC dialects share: `invalid params for <method>: <field>: <message>`. */
export const invalidParamsFor = ({ method, field, message }: ParamsIssue) => `invalid params for ${method}: ${field}: ${message}`;

/** Own names only: `in` would also find what every object inherits (constructor, toString, __proto__). */
function isKeyOf<T extends object>(table: T, name: string): name is Extract<keyof T, string> {
  return Object.hasOwn(table, name);
}

export class DialectSurface<Ctx, M extends MethodMap<M>, ErrorName extends string, N = Record<never, never>> {
  private readonly schema: BundleValidator;
  /** The methods served, in table order. */
  readonly methods: readonly string[];

  constructor(
    private readonly handlers: Handlers<Ctx, M>,
    private readonly rules: SurfaceRules<Ctx, M, ErrorName>,
    private readonly notifications?: NotificationHandlers<Ctx, N>,
  ) {
    this.schema = ProtocolValidators.shared().get(rules.dialect);
    this.methods = Object.keys(handlers);
  }

  isMethod(method: string): method is Extract<keyof M, string> {
    return isKeyOf(this.handlers, method);
  }

  /** Why a call is refused whatever its method (its connection has not done the handshake), or undefined. */
  refusal(ctx: Ctx, method: string): RpcError | undefined {
    const handshake = this.rules.handshake;
    if (!handshake || handshake.allowed.has(method) || handshake.initialized(ctx)) return undefined;
    return handshake.refusal(method);
  }

  /** Runs one call; resolves with the result or rejects with the dialect's RpcError. */
  async call(ctx: Ctx, method: string, params: unknown): Promise<unknown> {
    const { failures } = this.rules;
    if (this.rules.handshake?.beforeLookup) this.refuseUninitialized(ctx, method);
    if (!this.isMethod(method)) throw failures.error("method_not_found", `Method not found: ${method}`);
    this.refuseUninitialized(ctx, method);
    const over = this.rules.bound?.(method, params);
    if (over) throw over;
    const value = this.checked(method, params);
    const refused = this.rules.admit?.(ctx, method, value as object);
    if (refused) throw refused;
    try {
      return await this.dispatch(ctx, method, value);
    } catch (err) {
      const error = rpcFailure(err, failures);
      if (error.code === JSONRPC_ERROR_CODES.internal_error && (this.rules.logsInternalError?.(method) ?? true)) {
        this.rules.log?.("error", `${this.rules.dialect} method failed`, { method, error: String(err) });
      }
      throw error;
    }
  }

  /** Handles one notification; an unknown or invalid one, or one before the handshake, is ignored: notifications get no answer. */
  notify(ctx: Ctx, method: string, params: unknown): void {
    const handlers = this.notifications;
    if (!handlers || !isKeyOf(handlers, method) || this.refusal(ctx, method)) return;
    const value = params ?? {};
    const checked = this.schema.params(method, value);
    if (this.fits<N[typeof method]>(value, checked)) return this.deliver(handlers, ctx, method, value);
    const message = this.invalidParamsMessage(method, checked.issues[0]!);
    this.rules.log?.("info", `invalid ${this.rules.dialect} notification ignored`, { method, error: message });
  }

  private refuseUninitialized(ctx: Ctx, method: string): void {
    const refused = this.refusal(ctx, method);
    if (refused) throw refused;
  }

  /** The params of a call, `{}` when missing, once they fit the registry; else the dialect's invalid_params naming the field. */
  private checked<K extends Extract<keyof M, string>>(method: K, params: unknown): M[K]["params"] {
    const value = params ?? {};
    const checked = this.schema.params(method, value);
    if (this.fits<M[K]["params"]>(value, checked)) return value;
    const first = checked.issues[0]!;
    throw this.rules.failures.error("invalid_params", this.invalidParamsMessage(method, first), { issues: checked.issues });
  }

  private invalidParamsMessage(method: string, issue: ValidationIssue): string {
    const field = issue.pointer.replace(/^\//, "").replace(/\//g, ".") || "params";
    return (this.rules.invalidParams ?? invalidParamsFor)({ method, field, keyword: issue.keyword, message: issue.message });
  }

  /** Params the registry's schema accepted are of the type generated from that schema. */
  private fits<T>(_value: unknown, checked: ValidationResult): _value is T {
    return checked.ok;
  }

  private deliver<K extends keyof N>(handlers: NotificationHandlers<Ctx, N>, ctx: Ctx, method: K, params: N[K]): void {
    handlers[method](ctx, params);
  }

  private dispatch<K extends keyof M>(ctx: Ctx, method: K, params: M[K]["params"]): Promise<M[K]["result"]> {
    const handler: Handler<Ctx, M[K]["params"], M[K]["result"]> = this.handlers[method];
    return handler(ctx, params);
  }
}
