// Injected into the command line's CommonJS bundle (scripts/bundle-cli.mjs): what the sources read
// as import.meta.url, the bundle's own file URL (__filename is the bundle's, as the launcher runs it).
export const __tauGatewayImportMetaUrl = require("node:url").pathToFileURL(__filename).href;
