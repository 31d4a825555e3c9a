import { type Detector } from "./Detector.ts";
/** DNI: 8 digits + letter; NIE: X/Y/Z + 7 digits + letter (X=0, Y=1, Z=2). Letter = table[n mod 23]. */
export declare const isValidEsDni: (value: string) => boolean;
export declare const esDniDetector: Detector;
