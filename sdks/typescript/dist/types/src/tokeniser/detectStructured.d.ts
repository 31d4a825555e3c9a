import type { CountryCode } from "libphonenumber-js/max";
import type { Detector } from "./detectors/Detector.ts";
import type { EntityType, Span } from "./types.ts";
/**
 * When two detections overlap, the earlier type in this list wins: the most specific, strongest
 * validated shapes first (a URL with credentials contains an e-mail-like "user:pass@host"; a card or
 * an IBAN is also a long digit run that a phone parser may accept); names come last so a model never
 * overrides a validated identifier.
 */
export declare const PRIORITY: ReadonlyArray<EntityType>;
export interface StructuredOptions {
    /** Regions whose national phone formats are recognised (international "+" numbers always are). */
    readonly phoneRegions?: ReadonlyArray<CountryCode>;
}
export declare const structuredDetectors: (options?: StructuredOptions) => ReadonlyArray<Detector>;
/** Keeps a non-overlapping subset: higher priority first, then the longer span, then the earlier one. */
export declare const resolveOverlaps: (spans: ReadonlyArray<Span>) => Array<Span>;
/**
 * Runs the detectors. The phone parser runs last, on the text with every other detection masked:
 * it reads digit runs greedily, so "(212) 555-0187 250-57-7909" would otherwise be read as one
 * invalid number and the phone next to the SSN would be missed.
 */
export declare const detectStructured: (text: string, detectors?: ReadonlyArray<Detector>) => Array<Span>;
