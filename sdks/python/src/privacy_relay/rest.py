"""The gateway's REST capability set beside the relay: keys, receipts, transparency, webhooks, billing, the key's
own organisation (self) and self-service/demo keys. Portal routes take the client's `portal_token`; the others the
gateway key, or nothing. Writes carry an Idempotency-Key (generated when none is given) so a retried write is
never applied twice; reads are retried freely.

Every method returns what the client's `call` returns: the parsed JSON for RelayClient, an awaitable of it for
AsyncRelayClient (one definition serves both)."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Optional
from urllib.parse import quote, urlencode

Call = Callable[..., Any]


def _q(value: Any) -> str:
    return quote(str(value), safe="")


def query_string(query: Optional[Mapping[str, Any]]) -> str:
    items = {k: str(v) for k, v in (query or {}).items() if v is not None}
    return "" if not items else "?" + urlencode(items)


class _Section:
    def __init__(self, call: Call) -> None:
        self._call = call


class Keys(_Section):
    def create(self, *, name: Optional[str] = None, permissions: Optional[list[str]] = None, models: Optional[list[str]] = None, rotation_days: Optional[int] = None, org_id: Optional[str] = None, **options: Any) -> Any:
        body = {k: v for k, v in {"name": name, "permissions": permissions, "models": models, "rotation_days": rotation_days, "org_id": org_id}.items() if v is not None}
        return self._call("POST", "/api/keys", "portal", body, **options)

    def list(self, *, org_id: Optional[str] = None, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/keys{query_string({'org_id': org_id})}", "portal", None, **options)

    def update(self, key_id: str, changes: Mapping[str, Any], **options: Any) -> Any:
        return self._call("PATCH", f"/api/keys/{_q(key_id)}", "portal", dict(changes), **options)

    def rotate(self, key_id: str, **options: Any) -> Any:
        return self._call("POST", f"/api/keys/{_q(key_id)}/rotate", "portal", {}, **options)

    def revoke(self, key_id: str, **options: Any) -> Any:
        return self._call("POST", f"/api/keys/{_q(key_id)}/revoke", "portal", {}, **options)

    def scopes(self, key_id: str, **options: Any) -> Any:
        """The permissions and model allowlist of a key as the portal lists it (None for an unknown id)."""

        def pick(listed: Any) -> Any:
            key = next((k for k in listed.get("keys", []) if k.get("id") == key_id), None)
            return None if key is None else {"permissions": key.get("permissions"), "models": key.get("models")}

        result = self._call("GET", "/api/v1/keys", "portal", None, **options)
        if inspect.isawaitable(result):

            async def later() -> Any:
                return pick(await result)

            return later()
        return pick(result)


class Receipts(_Section):
    def __init__(self, call: Call, verify: Callable[[Any], Any]) -> None:
        super().__init__(call)
        self._verify = verify

    def verify(self, header_value_or_envelope: Any) -> Any:
        """Offline, against the gateway's JWKS (fetched once, again on an unknown kid)."""
        return self._verify(header_value_or_envelope)

    def verify_online(self, header_value_or_envelope: Any, **options: Any) -> Any:
        """The gateway's own verify route."""
        from .verify.envelope_input import envelope_or_raw

        return self._call("POST", "/api/v1/receipts/verify", "none", envelope_or_raw(header_value_or_envelope), **options)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None, from_: Optional[str] = None, to: Optional[str] = None, model: Optional[str] = None, **options: Any) -> Any:
        query = {"limit": limit, "cursor": cursor, "from": from_, "to": to, "model": model}
        return self._call("GET", f"/api/v1/receipts{query_string(query)}", "portal", None, **options)

    def get(self, jti: str, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/receipts/{_q(jti)}", "portal", None, **options)

    def countersign(self, body: Mapping[str, Any], **options: Any) -> Any:
        return self._call("POST", "/api/v1/receipts/countersign", "key", dict(body), **options)

    def signed_tree_head(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/transparency/sth", "none", None, **options)

    def inclusion_proof(self, jti: str, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/transparency/proof/{_q(jti)}", "none", None, **options)

    def consistency_proof(self, first: int, second: Optional[int] = None, **options: Any) -> Any:
        """The proof that the log of `first` leaves (a tree head you kept) is a prefix of the log now (or of `second`
        leaves); check it with verify_consistency_proof(proof, kept_head, jwks)."""
        query = query_string({"first": first, "second": second})
        return self._call("GET", f"/api/v1/transparency/consistency{query}", "none", None, **options)


class WebhookEndpoints(_Section):
    def create(self, *, url: str, events: Optional[list[str]] = None, **options: Any) -> Any:
        return self._call("POST", "/api/v1/webhooks/endpoints", "portal", {"url": url, **({} if events is None else {"events": events})}, **options)

    def list(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/webhooks/endpoints", "portal", None, **options)

    def get(self, endpoint_id: Any, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}", "portal", None, **options)

    def update(self, endpoint_id: Any, changes: Mapping[str, Any], **options: Any) -> Any:
        return self._call("PATCH", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}", "portal", dict(changes), **options)

    def delete(self, endpoint_id: Any, **options: Any) -> Any:
        return self._call("DELETE", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}", "portal", None, **options)

    def rotate_secret(self, endpoint_id: Any, **options: Any) -> Any:
        return self._call("POST", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}/rotate", "portal", {}, **options)

    def test(self, endpoint_id: Any, **options: Any) -> Any:
        return self._call("POST", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}/test", "portal", {}, **options)

    def resume(self, endpoint_id: Any, **options: Any) -> Any:
        return self._call("POST", f"/api/v1/webhooks/endpoints/{_q(endpoint_id)}/resume", "portal", {}, **options)


class WebhookDeliveries(_Section):
    def list(self, query: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/webhooks/deliveries{query_string(query)}", "portal", None, **options)

    def get(self, delivery_id: Any, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/webhooks/deliveries/{_q(delivery_id)}", "portal", None, **options)

    def replay(self, delivery_id: Any, **options: Any) -> Any:
        return self._call("POST", f"/api/v1/webhooks/deliveries/{_q(delivery_id)}/replay", "portal", {}, **options)


class Webhooks:
    def __init__(self, call: Call) -> None:
        self.endpoints = WebhookEndpoints(call)
        self.deliveries = WebhookDeliveries(call)


class Billing(_Section):
    def balance(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/billing/balance", "portal", None, **options)

    def top_up(self, *, amount_usd: Any, **options: Any) -> Any:
        """Starts a top-up checkout; answers its `checkout_url`."""
        return self._call("POST", "/api/v1/billing/topup", "portal", {"amount_usd": amount_usd}, **options)

    def complete_dev_checkout(self, checkout_id: str, **options: Any) -> Any:
        """Development payments only: completes a checkout as if it had been paid."""
        return self._call("POST", f"/api/v1/billing/dev/checkouts/{_q(checkout_id)}/complete", "portal", {}, **options)

    def redeem_licence(self, *, code: str, **options: Any) -> Any:
        return self._call("POST", "/api/v1/billing/redeem-license", "portal", {"code": code}, **options)

    def ledger(self, query: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/billing/ledger{query_string(query)}", "portal", None, **options)

    def usage(self, query: Optional[Mapping[str, Any]] = None, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/billing/usage{query_string(query)}", "portal", None, **options)


class Self(_Section):
    """The gateway key's own organisation, read-only, with the gateway key alone."""

    def balance(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/self/balance", "key", None, **options)

    def usage(self, *, from_: Optional[str] = None, to: Optional[str] = None, **options: Any) -> Any:
        return self._call("GET", f"/api/v1/self/usage{query_string({'from': from_, 'to': to})}", "key", None, **options)

    def key(self, **options: Any) -> Any:
        return self._call("GET", "/api/v1/self/key", "key", None, **options)


class RestApi:
    def __init__(self, call: Call, verify: Callable[[Any], Any]) -> None:
        self._call = call
        self.keys = Keys(call)
        self.receipts = Receipts(call, verify)
        self.webhooks = Webhooks(call)
        self.billing = Billing(call)
        self.self = Self(call)

    def self_service_key(self, *, email: Optional[str] = None, name: Optional[str] = None, **options: Any) -> Any:
        """A free-tier key (shown once). No auth."""
        body = {k: v for k, v in {"email": email, "name": name}.items() if v is not None}
        return self._call("POST", "/api/v1/self-service/key", "none", body, **options)

    def demo_key(self, **options: Any) -> Any:
        """An anonymous demo key: $2, 24 hours, relay only, no receipts (shown once). No auth."""
        return self._call("POST", "/api/v1/demo/key", "none", {}, **options)
