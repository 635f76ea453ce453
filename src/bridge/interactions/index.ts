/** Tau's client-tool channel turned into Ask interactions (DESIGN §4.4). */
export { approvalModeFor, canonicalApprovalMode, type ApprovalModeName } from "./approval-modes.js";
export { argumentProblems, checkSchemaDocument, compileArgumentSchema } from "./argument-schemas.js";
export { ASK_USER_PARAMETERS } from "./ask-user-tool.js";
export { ClientToolCalls, type ClientToolCallsOptions } from "./client-tool-calls.js";
export { errorReply, textReply, type ToolCall, type ToolReply } from "./tool-call.js";
export { DEADLINE_GRACE_MS, DEFAULT_INTERACTION_DEADLINE_MS, gatewayClientTools, type GatewayClientToolsOptions } from "./client-tools.js";
export { decisionGrant, type DecisionGrant } from "./decisions.js";
export { InteractionError, type InteractionErrorCode } from "./interaction-error.js";
export type { InteractionShare } from "./interaction-share.js";
export { askJoiningClient, type JoinedSession } from "./joiner-asking.js";
export { RemoteAsking } from "./remote-asking.js";
export { firstAnswer, ReverseRequesterSet, type PlanApprovalParams, type PlanApprovalResult, type ReverseRequester } from "./reverse-requester.js";
export { SharedAnswers, type PendingPlan } from "./shared-answers.js";
export { SUBMIT_PLAN_PARAMETERS } from "./submit-plan-tool.js";
export { SessionInteractions, type InteractionEventSink, type SessionInteractionsOptions } from "./session-interactions.js";
export type { GatewayTool } from "./gateway-tool.js";
export { ASK_USER_TOOL, GATEWAY_TOOL_NAMES, SUBMIT_PLAN_TOOL } from "./tool-names.js";
export { DEFAULT_COMMAND_TIMEOUT_MS, loadToolsConfig, parseToolsConfig, TOOL_NAME_PATTERN, type CommandToolConfig } from "./tools-config.js";
