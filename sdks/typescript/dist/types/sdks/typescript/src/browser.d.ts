import { RelayClientCore, type RelayClientOptions } from "./RelayClient.ts";
export declare class RelayClient extends RelayClientCore {
    constructor(options: RelayClientOptions);
}
export type { CallOptions, RelayClientOptions, RelayMeta, RelayStream, WithMeta } from "./RelayClient.ts";
export type { NameModelSetting } from "./engine.ts";
export * from "./errors.ts";
export { decodeReceipt } from "./rest.ts";
