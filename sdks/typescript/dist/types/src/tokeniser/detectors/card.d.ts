import type { Detector } from "./Detector.ts";
export declare const cardScheme: (digits: string) => string | undefined;
export declare const isValidCardNumber: (digits: string) => boolean;
export declare const cardDetector: Detector;
