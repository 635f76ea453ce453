/** The client tools the gateway always advertises, whatever the operator configures. */
export const ASK_USER_TOOL = "ask_user";
export const SUBMIT_PLAN_TOOL = "submit_plan";
export const GATEWAY_TOOL_NAMES: readonly string[] = [ASK_USER_TOOL, SUBMIT_PLAN_TOOL];
