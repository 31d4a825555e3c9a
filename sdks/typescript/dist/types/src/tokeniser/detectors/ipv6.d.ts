import { type Detector } from "./Detector.ts";
/** Full validation of a textual IPv6 address (RFC 4291 section 2.2), with optional embedded IPv4 tail. */
export declare const isValidIpv6: (value: string) => boolean;
export declare const ipv6Detector: Detector;
