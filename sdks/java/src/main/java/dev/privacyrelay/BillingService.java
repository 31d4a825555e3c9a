package dev.privacyrelay;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/** {@code client.rest().billing()}: the organisation's wallet (portal token with billing.read / billing.write). */
public final class BillingService {
    private final RestService rest;

    BillingService(RestService rest) {
        this.rest = rest;
    }

    /** {"balance_micros","balance_usd"}. */
    public JsonNode balance() {
        return rest.get("/api/v1/billing/balance", Auth.PORTAL);
    }

    /** A checkout for {@code amountUsd} (a decimal string): {checkout_id, status "pending", ...}. */
    public JsonNode topUp(String amountUsd, CallOptions options) {
        return rest.request("POST", "/api/v1/billing/topup", Auth.PORTAL, Map.of("amount_usd", amountUsd), options);
    }

    /** Completes a checkout of the gateway's dev payments provider (PAYMENTS_PROVIDER=dev; tests and demos). */
    public JsonNode completeDevCheckout(String checkoutId) {
        return rest.request("POST", "/api/v1/billing/dev/checkouts/" + RestService.seg(checkoutId) + "/complete", Auth.PORTAL, Map.of(), CallOptions.NONE);
    }

    public JsonNode redeemLicence(String code) {
        return rest.request("POST", "/api/v1/billing/redeem-license", Auth.PORTAL, Map.of("code", code), CallOptions.NONE);
    }

    /** {"entries":[...]}; params limit, cursor. */
    public JsonNode ledger(Map<String, ?> params) {
        return rest.get("/api/v1/billing/ledger" + RestService.query(params), Auth.PORTAL);
    }

    /** {"summary":[...]}; params from, to. */
    public JsonNode usage(Map<String, ?> params) {
        return rest.get("/api/v1/billing/usage" + RestService.query(params), Auth.PORTAL);
    }
}
