import type { Span, StructuredType } from "../types.ts";
/** A deterministic detector: finds candidates by shape and keeps only those that pass validation. */
export interface Detector {
    readonly type: StructuredType;
    readonly detect: (text: string) => ReadonlyArray<Span>;
}
/** Runs a global regex and turns each validated match into a span of `type`. */
export declare const spansFromRegex: (text: string, pattern: RegExp, type: StructuredType, accept: (match: RegExpExecArray) => {
    start: number;
    end: number;
} | undefined) => Array<Span>;
