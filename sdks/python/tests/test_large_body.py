"""Issue 32 item 5: a body over the 8 MiB limit gets the clear 413 `payload_too_large`, not a broken connection.
httpx writes the whole body before it reads the answer; the gateway and the local proxy answer on Content-Length,
so they must read (and drop) the rest of the body before closing, or the kernel resets the connection under the
client ("WriteError: Broken pipe"). Both run here as the separate processes users run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from .gateway import NODE, Relay, _Process

BODY = b'{"model":"local-chat","messages":[{"role":"user","content":"' + b"a" * (28 * 1024 * 1024) + b'"}]}'


@pytest.fixture(scope="module")
def proxy_url(relay: Relay, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    api_key, _ = relay.funded_key()
    home = tmp_path_factory.mktemp("proxy")
    key_file = home / "gateway-key"
    key_file.write_text(api_key + "\n")
    key_file.chmod(0o600)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "GATEWAY_URL": relay.url,
        "GATEWAY_KEY_FILE": str(key_file),
        "PROXY_PORT": "0",
        "NAME_MODEL": "off",
        "PRIVACY_RELAY_CONFIG_DIR": str(home / "config"),
    }
    proxy = _Process([NODE, "programs/proxy.ts"], env)
    try:
        yield proxy.wait_for("proxy listening", 60)["annotations"]["url"]
    finally:
        proxy.stop()


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, content=BODY, headers={"content-type": "application/json", **headers}, timeout=60)


@pytest.mark.parametrize("attempt", range(3))
def test_gateway_answers_413_to_a_client_that_writes_the_whole_body_first(relay: Relay, attempt: int) -> None:
    answer = _post(f"{relay.url}/api/v1/self-service/key")
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "payload_too_large"


def test_gateway_answers_401_to_a_bad_key_with_a_large_body(relay: Relay) -> None:
    answer = _post(f"{relay.url}/api/v1/chat/completions", authorization="Bearer svc_" + "a" * 52)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "invalid_key"


@pytest.mark.parametrize("attempt", range(3))
def test_local_proxy_answers_413_to_a_client_that_writes_the_whole_body_first(proxy_url: str, attempt: int) -> None:
    answer = _post(f"{proxy_url}/v1/chat/completions")
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "payload_too_large"


def _write_all_then_read(url: str, path: str, extra_headers: str = "") -> bytes:
    """A client at its plainest: sends the request and its whole body, then reads the answer (what httpx and the
    official SDKs do when the server answers early). A reset connection raises here."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Type: application/json\r\n{extra_headers}Content-Length: {len(BODY)}\r\n\r\n"
        sock.sendall(head.encode() + BODY)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < int(answer.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0]):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer


@pytest.mark.parametrize("attempt", range(3))
def test_gateway_and_proxy_read_the_rest_before_closing(relay: Relay, proxy_url: str, attempt: int) -> None:
    gateway = _write_all_then_read(relay.url, "/api/v1/self-service/key")
    assert gateway.startswith(b"HTTP/1.1 413 ") and b'"payload_too_large"' in gateway
    proxy = _write_all_then_read(proxy_url, "/v1/chat/completions")
    assert proxy.startswith(b"HTTP/1.1 413 ") and b'"payload_too_large"' in proxy
