/** Throws a ProxyStartError when `path` is missing, not a regular file, or group/world-readable. */
export declare const assertPrivateFile: (path: string, what: string, settingName: string) => void;
