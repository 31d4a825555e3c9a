import { type Detector } from "./Detector.ts";
export declare const urlCredentialsDetector: Detector;
