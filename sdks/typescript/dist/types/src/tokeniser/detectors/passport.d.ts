import { type Detector } from "./Detector.ts";
export declare const passportDetector: Detector;
