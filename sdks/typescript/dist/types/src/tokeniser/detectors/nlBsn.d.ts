import { type Detector } from "./Detector.ts";
/** Dutch citizen service number: 9 digits passing the "11-proof" (9*d1 + 8*d2 + ... + 2*d8 - d9 ≡ 0 mod 11). */
export declare const isValidBsn: (digits: string) => boolean;
export declare const nlBsnDetector: Detector;
