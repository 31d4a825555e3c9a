export declare const DEVICE_KEY_FILE_NAME = "attester-key.json";
/** The config directory of this client on this machine. */
export declare const clientConfigDir: (env: Readonly<Record<string, string | undefined>>) => string;
export declare const deviceKeyPath: (env: Readonly<Record<string, string | undefined>>) => string;
/** Loads the device key pair, generating and storing it (0600) the first time. */
export declare const loadOrCreateDeviceKey: (env: Readonly<Record<string, string | undefined>>) => Promise<CryptoKeyPair>;
