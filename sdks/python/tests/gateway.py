"""A real gateway (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the fake provider
(programs/fake-provider.ts, streaming replies in 5-character pieces so aliases are cut across SSE frames), started
as subprocesses on ephemeral loopback ports, stopped by PID at the end of the session."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import httpx

REPO = Path(__file__).resolve().parents[3]
NODE = str(REPO / "node_modules" / ".bin" / "node")


class _Process:
    """A child process whose output is drained in a thread; `wait_for` finds the first JSON log line with `msg`."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cv:
                self.lines.append(line)
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def wait_for(self, needle: str, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for line in self.lines:
                    if needle in line:
                        try:
                            return json.loads(line)
                        except ValueError:
                            continue
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.proc.args} exited ({self.proc.returncode}):\n{''.join(self.lines)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{self.proc.args} did not log {needle!r} in {timeout} s:\n{''.join(self.lines)}")
                self._cv.wait(left)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Relay:
    url: str
    provider_url: str
    data_dir: str
    env: dict[str, str]
    processes: list[_Process] = field(default_factory=list)
    keys_issued: int = 0

    def received(self) -> list[dict[str, Any]]:
        """What the fake provider received since the last reset: method, path, headers, body (UTF-8)."""
        return httpx.get(f"{self.provider_url}/_fake/received").json()["requests"]

    def reset_provider(self) -> None:
        httpx.post(f"{self.provider_url}/_fake/reset").raise_for_status()

    def cli(self, *args: str) -> dict[str, Any]:
        """`node programs/cli.ts ...` against this gateway (through its admin API, as an operator runs it)."""
        out = subprocess.run([NODE, "programs/cli.ts", *args], cwd=REPO, env={**self.env, "LOG_LEVEL": "error"}, capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError(f"cli {args[:2]} failed: {out.stderr}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    def admin(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The gateway's admin API (what `programs/cli.ts` calls for a running gateway), authorised by the admin
        token the gateway keeps in its DATA_DIR."""
        token = (Path(self.data_dir) / "admin-token").read_text("utf-8").strip()
        res = httpx.post(f"{self.url}{path}", json=body, headers={"authorization": f"Bearer {token}"})
        assert res.status_code < 300, res.text
        return res.json()

    def portal_token(self, key_prefix: str, abilities: list[str]) -> str:
        return self.admin("/api/admin/portal-tokens", {"key_prefix": key_prefix, "abilities": ",".join(abilities)})["token"]

    def funded_key(self, usd: str = "10") -> tuple[str, str]:
        """A self-service key whose wallet holds `usd`; answers (api_key, key_prefix)."""
        # Each key from its own test network (the gateway trusts X-Forwarded-For from loopback here), so the
        # per-network issuance limit does not throttle the suite.
        self.keys_issued += 1
        network = f"198.18.{self.keys_issued // 250}.{self.keys_issued % 250}"
        res = httpx.post(f"{self.url}/api/v1/self-service/key", json={}, headers={"x-forwarded-for": network})
        assert res.status_code == 201, res.text
        key = res.json()
        if usd != "0":
            self.admin("/api/admin/wallets/credit", {"key_prefix": key["key_prefix"], "usd": usd})
        return key["api_key"], key["key_prefix"]

    def stop(self) -> None:
        for p in reversed(self.processes):
            p.stop()


def start_relay(extra_env: Optional[dict[str, str]] = None) -> Relay:
    data_dir = tempfile.mkdtemp(prefix="pr-python-sdk-")
    base_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    provider = _Process([NODE, "programs/fake-provider.ts", "--host", "127.0.0.1", "--port", "0", "--stream-piece-chars", "5"], base_env)
    relay: Optional[Relay] = None
    try:
        provider_url = provider.wait_for("fake provider listening", 30)["url"]
        env = {
            **base_env,
            "DATA_DIR": data_dir,
            "PORT": "0",
            "HOST": "127.0.0.1",
            "LOCAL_PROVIDER_URL": provider_url,
            "PAYMENTS_PROVIDER": "dev",
            "WEBHOOK_ALLOW_LOOPBACK": "1",
            "TRUSTED_PROXIES": "127.0.0.1",
            "LOG_LEVEL": "info",
            **(extra_env or {}),
        }
        gateway = _Process([NODE, "programs/gateway.ts"], env)
        relay = Relay("", provider_url, data_dir, env, [provider, gateway])
        listening = gateway.wait_for("gateway listening", 150)
        relay.url = listening["annotations"]["url"].replace("0.0.0.0", "127.0.0.1")
        return relay
    except BaseException:
        if relay is not None:
            relay.stop()
        else:
            provider.stop()
        raise
