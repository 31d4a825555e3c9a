import { type Detector } from "./Detector.ts";
export declare const ipv4Detector: Detector;
