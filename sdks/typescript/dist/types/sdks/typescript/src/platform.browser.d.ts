import type { Platform } from "./platform.ts";
export declare const browserPlatform: Platform;
