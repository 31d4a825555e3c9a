"""Files this client keeps on the device, shared with the TypeScript SDK and the local proxy (same names and
formats): the device attester key `attester-key.json` (a P-256 private JWK) and the stable-alias secret
`alias-secret` (32 base64url bytes), in `$PRIVACY_RELAY_CONFIG_DIR`, else `$XDG_CONFIG_HOME/privacy-relay`, else
`~/.config/privacy-relay`. Created with mode 0600 (directory 0700); a group- or world-readable file is refused,
not silently tightened (it may already have been read). The gateway key is read from a file the same way."""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Mapping

from .errors import ConfigurationError
from .wire.base64 import b64url_decode, b64url_encode
from .wire.ecdsa import SigningKey

DEVICE_KEY_FILE_NAME = "attester-key.json"
ALIAS_SECRET_FILE_NAME = "alias-secret"
_GATEWAY_KEY = re.compile(r"svc_[a-z2-7]+")


def _config_error(message: str) -> ConfigurationError:
    return ConfigurationError(message, code="configuration_error")


def expand_home(path: str | os.PathLike, setting: str, env: Mapping[str, str] = os.environ) -> Path:
    """A path setting as given (absolute, or relative to the working directory), with a leading `~` or `~/` as the
    home directory (`$HOME`, else the account's), as a shell would expand it: settings passed in code, from JSON or a
    process manager never go through a shell. `~user/...` is refused with a message (the same rule in every SDK)."""
    text = os.fspath(path)
    if text != "~" and not text.startswith(("~/", "~\\")):
        if text.startswith("~"):
            raise _config_error(f"{setting} {text}: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path.")
        return Path(text)
    home = Path(env.get("HOME") or Path.home())
    return home if text == "~" else home / text[2:]


def client_config_dir(env: Mapping[str, str] = os.environ) -> Path:
    if env.get("PRIVACY_RELAY_CONFIG_DIR"):
        return expand_home(env["PRIVACY_RELAY_CONFIG_DIR"], "PRIVACY_RELAY_CONFIG_DIR", env)
    if env.get("XDG_CONFIG_HOME"):
        return expand_home(env["XDG_CONFIG_HOME"], "XDG_CONFIG_HOME", env) / "privacy-relay"
    return Path(env.get("HOME") or Path.home()) / ".config" / "privacy-relay"


def assert_private_file(path: Path, what: str) -> None:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise _config_error(f"{what} {path} does not exist.") from None
    except OSError as error:
        raise _config_error(f"{what} {path} cannot be read: {error.strerror}.") from None
    if not stat.S_ISREG(st.st_mode):
        raise _config_error(f"{what} {path} is not a regular file.")
    if os.name != "nt" and st.st_mode & 0o077:
        raise _config_error(f"{what} {path} is readable by other users (mode {st.st_mode & 0o777:03o}); refusing to use it. Fix: chmod 600 {path}")


def _create_exclusive(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return  # another process made it first: both use that one
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content)


def load_or_create_device_key(env: Mapping[str, str] = os.environ) -> SigningKey:
    path = client_config_dir(env) / DEVICE_KEY_FILE_NAME
    _create_exclusive(path, json.dumps(SigningKey.generate().private_jwk) + "\n")
    assert_private_file(path, "Device attester key file")
    try:
        return SigningKey.from_private_jwk(json.loads(path.read_text("utf-8")))
    except ValueError:
        raise _config_error(f"Device attester key file {path} is not a P-256 private JWK; move it away to generate a new key.") from None


def load_or_create_alias_secret(env: Mapping[str, str] = os.environ) -> bytes:
    path = client_config_dir(env) / ALIAS_SECRET_FILE_NAME
    _create_exclusive(path, b64url_encode(secrets.token_bytes(32)) + "\n")
    assert_private_file(path, "Stable-alias secret file")
    try:
        secret = b64url_decode(path.read_text("utf-8").strip())
    except ValueError:
        secret = b""
    if len(secret) < 32:
        raise _config_error(f"Stable-alias secret file {path} does not hold 32 base64url bytes; move it away to generate a new one.")
    return secret


def read_gateway_key_file(path: str | os.PathLike) -> str:
    """The gateway key (`svc_...`) from a 0600 file; the key never appears in an error message. The path is absolute,
    relative to the working directory, or starts with `~/` (the home directory)."""
    p = expand_home(path, "api_key_file")
    assert_private_file(p, "Gateway key file")
    key = p.read_text("utf-8").strip()
    if not _GATEWAY_KEY.fullmatch(key):
        raise _config_error(f"Gateway key file {p} does not hold a gateway key (expected one line starting with svc_).")
    return key
