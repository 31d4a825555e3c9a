import { type Detector } from "./Detector.ts";
export declare const ukNinoDetector: Detector;
