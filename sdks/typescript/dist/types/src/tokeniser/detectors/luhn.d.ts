/** Luhn (mod 10) check over a string of digits. */
export declare const passesLuhn: (digits: string) => boolean;
