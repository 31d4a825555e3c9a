export declare const ALIAS_SECRET_FILE_NAME = "alias-secret";
export declare const aliasSecretPath: (env: Readonly<Record<string, string | undefined>>) => string;
/** Loads the secret, generating and storing it (0600) the first time. */
export declare const loadOrCreateAliasSecret: (env: Readonly<Record<string, string | undefined>>) => Uint8Array;
