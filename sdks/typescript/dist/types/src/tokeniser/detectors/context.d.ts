/**
 * Context helpers shared by detectors: the words right before a candidate decide whether a number is
 * an identifier or, say, an order number.
 */
/** The text of the same line before `index`, at most `width` characters. */
export declare const textBefore: (text: string, index: number, width: number) => string;
export declare const followsNonPersonalLabel: (text: string, index: number) => boolean;
/** True when the characters just outside [start, end) are not letters or digits (a whole-token match). */
export declare const isDelimited: (text: string, start: number, end: number) => boolean;
export declare const digitsOnly: (value: string) => string;
