// `Settings` of `@privacy-relay/sdk/wire`: the settings machinery every program reads its environment with
// (setting.ts) and the setting rules the client programs share, GATEWAY_URL (gatewayUrl.ts) and `~` in paths
// (homePath.ts). The starter kit's server (starter-kit/settings.ts) takes them from here, so a fork has the same rules
// as the SDK's own programs.
export * from "./gatewayUrl.ts"
export * from "./homePath.ts"
export * from "./setting.ts"
