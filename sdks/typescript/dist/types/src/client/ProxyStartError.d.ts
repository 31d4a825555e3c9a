/**
 * A problem that stops the local proxy from starting (bad setting, unsafe key file, port taken, not a
 * gateway). Its message is shown to the user as is, so it says what is wrong and how to fix it, and it
 * never contains a secret.
 */
export declare class ProxyStartError extends Error {
    readonly _tag = "ProxyStartError";
    constructor(message: string);
}
