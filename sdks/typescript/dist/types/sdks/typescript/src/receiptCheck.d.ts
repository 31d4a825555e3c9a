import { type VerificationResult } from "../../../src/receipts/verify.ts";
export interface Jwks {
    readonly keys: ReadonlyArray<Record<string, unknown>>;
}
export interface ReceiptChecker {
    readonly verify: (envelope: unknown) => Promise<VerificationResult>;
}
export declare const createReceiptChecker: (loadJwks: () => Promise<Jwks>, initial?: Jwks) => ReceiptChecker;
