import { type CountryCode } from "libphonenumber-js/max";
import type { Detector } from "./Detector.ts";
export declare const makePhoneDetector: (regions: ReadonlyArray<CountryCode>) => Detector;
export declare const DEFAULT_PHONE_REGIONS: ReadonlyArray<CountryCode>;
