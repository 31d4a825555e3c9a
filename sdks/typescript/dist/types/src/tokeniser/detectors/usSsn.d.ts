import { type Detector } from "./Detector.ts";
/** SSA rules: area not 000, 666 or 900-999; group not 00; serial not 0000. */
export declare const isValidSsn: (area: string, group: string, serial: string) => boolean;
export declare const usSsnDetector: Detector;
