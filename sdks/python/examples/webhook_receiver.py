"""A webhook receiver for Privacy Relay deliveries, on plain WSGI (standard library only besides the SDK).

    WEBHOOK_SECRET_FILE=./webhook-secret python examples/webhook_receiver.py   # listens on 127.0.0.1:8099

It authenticates each delivery with `verify_webhook` (v1 signature, v0 fallback, 300 s replay window) BEFORE
parsing the body, drops duplicates by event id with `WebhookDeduper` (answering 200 so the sender stops
retrying), and hands each new event to `handle_event`. A bad delivery gets 400 with the failure's code.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Iterable
from wsgiref.simple_server import make_server

from privacy_relay import WebhookDeduper, WebhookVerificationError, verify_webhook

MAX_BODY_BYTES = 1 << 20  # deliveries are small; a larger body is refused unread


def make_app(secret: str, handle_event: Callable[[dict], None], deduper: WebhookDeduper | None = None) -> Callable:
    seen = deduper or WebhookDeduper()

    def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        def answer(status: str, body: dict) -> Iterable[bytes]:
            data = json.dumps(body).encode()
            start_response(status, [("content-type", "application/json"), ("content-length", str(len(data)))])
            return [data]

        if environ.get("REQUEST_METHOD") != "POST":
            return answer("405 Method Not Allowed", {"error": "method_not_allowed"})
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            return answer("413 Payload Too Large", {"error": "payload_too_large"})
        body = environ["wsgi.input"].read(length)
        # WSGI names headers HTTP_X_SERVICE_SIGNATURE; verify_webhook wants their HTTP names.
        headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}
        try:
            verify_webhook(body, headers, secret)
        except WebhookVerificationError as error:
            return answer("400 Bad Request", {"error": error.code})
        event_id = WebhookDeduper.event_id_of(body, headers)
        if event_id is not None and seen.seen(event_id):
            return answer("200 OK", {"duplicate": True})
        handle_event(json.loads(body))
        return answer("200 OK", {"ok": True})

    return app


def _print_event(event: dict[str, Any]) -> None:
    print(json.dumps({"event": event.get("event"), "event_id": event.get("event_id")}), flush=True)


if __name__ == "__main__":
    secret_file = os.environ.get("WEBHOOK_SECRET_FILE")
    if not secret_file:
        sys.exit("Set WEBHOOK_SECRET_FILE to a file holding the endpoint's signing secret (never pass it on the command line).")
    with open(os.path.expanduser(secret_file), encoding="utf-8") as handle:  # ~/ as in a shell
        endpoint_secret = handle.read().strip()
    port = int(os.environ.get("PORT", "8099"))
    with make_server("127.0.0.1", port, make_app(endpoint_secret, _print_event)) as server:
        print(f"listening on http://127.0.0.1:{port}", flush=True)
        server.serve_forever()
