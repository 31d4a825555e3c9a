import { type Detector } from "./Detector.ts";
/**
 * French social security number (NIR): sex (1/2), year, month (01-12, or 20-42 / 50-99 for
 * unknown months), department (2 digits or 2A/2B for Corsica), commune (3), order (3), then a
 * 2-digit key = 97 - (13-digit number mod 97). Corsica: 2A counts as 19, 2B as 18 for the key.
 */
export declare const isValidFrNir: (value: string) => boolean;
export declare const frNirDetector: Detector;
