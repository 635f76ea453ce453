/**
 * A JSON-RPC error a client receives (`code`, `message`, optional `data`), whatever the dialect:
 * each dialect makes them from its own registry codes with `rpcErrors`, so one class carries them
 * all and a transport or gate needs no dialect to tell an answer from a failure.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** Makes the error a dialect answers with, by the registry name of its code. */
export type RpcErrorMaker<Name extends string> = (name: Name, message: string, data?: unknown) => RpcError;

export function rpcErrors<Codes extends Readonly<Record<string, number>>>(codes: Codes): RpcErrorMaker<Extract<keyof Codes, string>> {
  return (name, message, data) => new RpcError(codes[name], message, data);
}
