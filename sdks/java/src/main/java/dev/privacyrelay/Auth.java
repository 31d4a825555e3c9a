package dev.privacyrelay;

/** Which credential a REST call carries. */
public enum Auth {
    /** The gateway key (svc_...). */
    KEY,
    /** The portal token (spt_...): key management, billing, webhooks, stored receipts. */
    PORTAL,
    /** None: public routes (self-service key, online verification, the transparency log). */
    NONE
}
