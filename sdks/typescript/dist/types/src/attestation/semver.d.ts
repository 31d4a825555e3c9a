export interface SemVer {
    readonly major: number;
    readonly minor: number;
    readonly patch: number;
    readonly prerelease: ReadonlyArray<string>;
}
/** Parses a strict semver string (no leading `v`); undefined when it is not one. */
export declare const parseSemVer: (text: string) => SemVer | undefined;
/** Precedence: negative when a < b, zero when equal, positive when a > b. */
export declare const compareSemVer: (a: SemVer, b: SemVer) => number;
