export declare const readGatewayKeyFile: (path: string | undefined) => string;
