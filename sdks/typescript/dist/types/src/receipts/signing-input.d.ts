export declare const signingInput: (envelope: object) => Uint8Array;
