import { type NameModel } from "./NameModel.ts";
export interface HttpNameModelOptions {
    /** The model endpoint, e.g. `http://127.0.0.1:9000/v1/entities`. */
    readonly url: string;
    /** Milliseconds before the call counts as unavailable. Default 5000. */
    readonly timeoutMs?: number;
    /** Extra request headers (e.g. an authorization header for the model service). */
    readonly headers?: Readonly<Record<string, string>>;
    readonly fetch?: typeof globalThis.fetch;
}
/**
 * HTTP name model. Contract (docs/tokeniser.md):
 *   POST <url>  Content-Type: application/json   body {"text": "<plain text>"}
 *   200         {"entities": [{"start": <int>, "end": <int>, "type": "PERSON"}, ...]}
 * Offsets are UTF-16 code unit indices into `text`, `end` exclusive. Entities of other types are
 * ignored. Any network error, timeout, non-2xx status or malformed body rejects with
 * NameModelUnavailable.
 */
export declare const httpNameModel: (options: HttpNameModelOptions) => NameModel;
