export declare const hasValidBech32Checksum: (address: string) => boolean;
