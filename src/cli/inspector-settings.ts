import { parseHostList } from "../gateway/auth/hosts.js";
import { envName, yesNo, type SettingSpec } from "./settings.js";

/** `serve --inspector`: the live inspector page, off unless asked for. */
export const inspectorSettings = {
  inspector: { flag: "inspector", default: false, parse: yesNo, switch: true },
  inspectorHosts: { flag: "inspector-hosts", default: [] as string[], parse: parseHostList },
} satisfies Record<string, SettingSpec<unknown>>;

export const INSPECTOR_USAGE = `  --inspector                   serve the live inspector at /inspector: every client connection and
                                frame with its validation verdict; with tokens an operator's
                                ("operator": true in the tokens file) sees every tenant, any other
                                token its own tenant's; without tokens only from loopback
                                (default off) ${envName("inspector")}
  --inspector-hosts A,B         host names the inspector also answers to besides the loopback names
                                and the listen address, e.g. the name a proxy serves it under ${envName("inspector-hosts")}`;
