"""The examples run as a user runs them (a subprocess with the documented environment) against the test gateway."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .gateway import Relay

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SRC = Path(__file__).resolve().parents[1] / "src"


def test_quickstart_shows_only_aliases_leaving_and_the_originals_coming_back(relay: Relay, tmp_path: Path) -> None:
    api_key, _ = relay.funded_key()
    key_file = tmp_path / "gateway-key"
    key_file.write_text(api_key + "\n")
    key_file.chmod(0o600)
    relay.reset_provider()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(SRC),
        "GATEWAY_URL": relay.url,
        "GATEWAY_KEY_FILE": str(key_file),
        "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config"),
    }
    run = subprocess.run([sys.executable, str(EXAMPLES / "quickstart.py")], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(": ", 1) for line in run.stdout.strip().splitlines())
    assert "jane.doe@example.com" not in lines["left this device"] and "<EMAIL_1_" in lines["left this device"]
    assert "<IBAN_1_" in lines["left this device"]
    assert lines["answer"] == "Echo: Draft a reply to jane.doe@example.com confirming the refund to IBAN DE89 3704 0044 0532 0130 00."
    assert lines["streamed"] == lines["answer"]
    assert lines["receipt verified offline"] == "True" and lines["stream receipt verified offline"] == "True"
    assert api_key not in run.stdout + run.stderr
    assert all("jane.doe" not in r["body"] for r in relay.received())
    assert (tmp_path / "config" / "attester-key.json").stat().st_mode & 0o077 == 0
