from __future__ import annotations

import os
from typing import Iterator

import pytest

from privacy_relay.wire.ecdsa import SigningKey

from .gateway import Relay, start_relay


@pytest.fixture(scope="session")
def relay() -> Iterator[Relay]:
    started = start_relay()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(autouse=True)
def _config_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The device key and alias secret go to a temp config dir, never the user's."""
    monkeypatch.setenv("PRIVACY_RELAY_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(scope="session")
def device_key() -> SigningKey:
    return SigningKey.generate()
