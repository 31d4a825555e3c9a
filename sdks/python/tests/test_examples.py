"""The examples run as a user runs them (a subprocess with the documented environment) against the test gateway."""

from __future__ import annotations

import json
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


def test_receipts_archive_verifies_receipts_chain_inclusion_and_consistency(relay: Relay, tmp_path: Path) -> None:
    api_key, _ = relay.funded_key()
    key_file = tmp_path / "gateway-key"
    key_file.write_text(api_key + "\n")
    key_file.chmod(0o600)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(SRC),
        "GATEWAY_URL": relay.url,
        "GATEWAY_KEY_FILE": str(key_file),
        "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config"),
    }
    run = subprocess.run([sys.executable, str(EXAMPLES / "receipts_archive.py")], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert [line.split(" verified: ")[1] for line in lines[:3]] == ["True", "True", "True"]
    assert lines[3] == "chain verified: True (3 receipts)"
    assert lines[4:7] == ["in the transparency log: True"] * 3
    assert lines[7].startswith("log consistent since the kept head (") and lines[7].endswith("leaves): True")


def test_conversation_example_keeps_the_history_here_and_sends_aliases_only(relay: Relay, tmp_path: Path) -> None:
    api_key, _ = relay.funded_key()
    key_file = tmp_path / "gateway-key"
    key_file.write_text(api_key + "\n")
    key_file.chmod(0o600)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), "GATEWAY_URL": relay.url, "GATEWAY_KEY_FILE": str(key_file), "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config")}
    relay.reset_provider()
    run = subprocess.run([sys.executable, str(EXAMPLES / "conversation.py")], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(": ", 1) for line in run.stdout.strip().splitlines())
    assert lines["turn 1"] == "Echo: My name is Dr. Ada Lovelace, write to ada@example.org."
    assert lines["turn 2"] == "Echo: Send the invoice to ada@example.org."
    assert lines["turns kept on this device"].startswith("4 aliases: ")
    sent = json.loads(lines["what left this device on turn 2"])
    assert len(sent) == 3 and "ada@example.org" not in json.dumps(sent) and "<EMAIL_1_" in json.dumps(sent)
    bodies = [r["body"] for r in relay.received()]
    assert len(bodies) == 2 and all("ada@example.org" not in body and "Lovelace" not in body for body in bodies)


def _readme_block(section: str) -> str:
    """The first ```python block under `## <section>` of the SDK's README: what a user copies."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text("utf-8")
    start = readme.index(f"\n## {section}\n")
    end = readme.find("\n## ", start + 1)
    body = readme[start:end if end != -1 else None]
    return body.split("```python\n", 1)[1].split("```", 1)[0]


def test_readme_conversation_runs_as_written(relay: Relay, tmp_path: Path) -> None:
    """The README's Conversations block, pasted into a file: two turns, the second answered with the originals, the
    history kept on the device, the provider given aliases only."""
    block = _readme_block("Conversations (`client.conversations`)")
    api_key, _ = relay.funded_key()
    key_dir = tmp_path / ".config" / "privacy-relay"
    key_dir.mkdir(parents=True, mode=0o700)
    (key_dir / "gateway-key").write_text(api_key + "\n")
    (key_dir / "gateway-key").chmod(0o600)
    script = tmp_path / "main.py"
    script.write_text(block.replace("http://127.0.0.1:8080", relay.url))
    relay.reset_provider()
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), "HOME": str(tmp_path), "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config")}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["Echo: Copy jane.doe@example.com in as well.", "4 items kept on this device"]
    bodies = [r["body"] for r in relay.received()]
    assert len(bodies) == 2 and all("jane.doe" not in body for body in bodies)


def test_readme_quickstart_runs_as_written(relay: Relay, tmp_path: Path) -> None:
    """The README's Quickstart, pasted into a file: its local gateway URL (here the test gateway's), its key file under
    ~/.config/privacy-relay (the SDK expands ~), its model one the development gateway serves."""
    block = _readme_block("Quickstart")
    assert 'RelayClient("http://127.0.0.1:8080", api_key_file="~/.config/privacy-relay/gateway-key")' in block
    api_key, _ = relay.funded_key()
    key_dir = tmp_path / ".config" / "privacy-relay"
    key_dir.mkdir(parents=True, mode=0o700)
    (key_dir / "gateway-key").write_text(api_key + "\n")
    (key_dir / "gateway-key").chmod(0o600)
    script = tmp_path / "main.py"
    script.write_text(block.replace("http://127.0.0.1:8080", relay.url))
    relay.reset_provider()
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), "HOME": str(tmp_path), "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config")}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Echo: Write to jane.doe@example.com about IBAN DE89 3704 0044 0532 0130 00" in run.stdout
    assert "<EMAIL_1_" in run.stdout and run.stdout.rstrip().endswith("True")
    assert all("jane.doe" not in r["body"] for r in relay.received())


def test_readme_receipts_block_runs_as_written(relay: Relay, tmp_path: Path) -> None:
    """The README's Receipts block: receipts from answers, kept as JSON, verified later with create_jwks_cache (the JWKS
    fetched from the gateway), one by one, linked, and as a chain."""
    block = _readme_block("Receipts")
    assert "create_jwks_cache(" in block and "answer" in block
    api_key, _ = relay.funded_key()
    key_dir = tmp_path / ".config" / "privacy-relay"
    key_dir.mkdir(parents=True, mode=0o700)
    (key_dir / "gateway-key").write_text(api_key + "\n")
    (key_dir / "gateway-key").chmod(0o600)
    script = tmp_path / "receipts.py"
    script.write_text(block.replace("http://127.0.0.1:8080", relay.url))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(SRC), "HOME": str(tmp_path), "PRIVACY_RELAY_CONFIG_DIR": str(tmp_path / "config")}
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert lines[0].startswith("True None [")
    assert lines[1:] == ["True", "True"]


def test_fetch_jwks_is_gateway_locked(relay: Relay) -> None:
    from privacy_relay import ConfigurationError, fetch_jwks

    assert all(k["kty"] == "EC" for k in fetch_jwks(relay.url)["keys"])
    try:
        fetch_jwks("http://relay.example")
    except ConfigurationError as error:
        assert "https" in str(error)
    else:
        raise AssertionError("plain http to a non-loopback host must be refused")
