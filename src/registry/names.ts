/**
 * Definition names derived from wire names, so every generated type has a predictable name:
 * `session.clientTool.ack` → `SessionClientToolAck`, `interaction/approve-all` →
 * `InteractionApproveAll`, `model.streaming` → `ModelStreaming`, `$/cancel_request` → `CancelRequest`
 * (what is not a letter or digit separates words).
 */
export function pascalName(wireName: string): string {
  return wireName
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join("");
}

export const paramsName = (method: string) => `${pascalName(method)}Params`;
export const resultName = (method: string) => `${pascalName(method)}Result`;
export const requestName = (method: string) => `${pascalName(method)}Request`;
export const responseName = (method: string) => `${pascalName(method)}Response`;
export const notificationName = (method: string) => `${pascalName(method)}Notification`;
export const messageName = (type: string) => `${pascalName(type)}Message`;
export const payloadName = (eventType: string) => `${pascalName(eventType)}Payload`;
export const eventName = (eventType: string) => `${pascalName(eventType)}Event`;

/** The name generated definitions of a method are derived from (its wire name unless it says otherwise). */
export const methodTypeBase = (method: { name: string; typeName?: string }) => method.typeName ?? method.name;
