"""Issue 32 item 1: the README's `api_key_file="~/.config/privacy-relay/key"` works as written: `~` and `~/` name
the home directory in every path setting of the SDK (settings given in code never pass through a shell);
`~user` forms are refused with a message that says so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from privacy_relay import ConfigurationError, RelayClient
from privacy_relay.device import client_config_dir, expand_home, read_gateway_key_file

KEY = "svc_" + "a" * 52


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".config" / "privacy-relay").mkdir(parents=True, mode=0o700)
    key = tmp_path / ".config" / "privacy-relay" / "key"
    key.write_text(KEY + "\n")
    key.chmod(0o600)
    return tmp_path


def test_read_gateway_key_file_expands_tilde(home: Path) -> None:
    assert read_gateway_key_file("~/.config/privacy-relay/key") == KEY


def test_client_takes_the_readme_key_file_as_written(home: Path) -> None:
    client = RelayClient("http://127.0.0.1:9", api_key_file="~/.config/privacy-relay/key")
    client.close()


def test_a_missing_file_names_the_expanded_path(home: Path) -> None:
    with pytest.raises(ConfigurationError) as error:
        read_gateway_key_file("~/absent")
    assert str(home / "absent") in str(error.value)
    assert error.value.code == "configuration_error"


def test_config_dir_settings_expand_tilde(home: Path) -> None:
    env = {"HOME": str(home)}
    assert client_config_dir({**env, "PRIVACY_RELAY_CONFIG_DIR": "~/relay"}) == home / "relay"
    assert client_config_dir({**env, "XDG_CONFIG_HOME": "~/cfg"}) == home / "cfg" / "privacy-relay"


def test_tilde_user_is_refused_and_other_paths_are_kept(home: Path) -> None:
    with pytest.raises(ConfigurationError, match="not ~user"):
        read_gateway_key_file("~bob/key")
    assert expand_home("/abs/key", "x") == Path("/abs/key")
    assert expand_home("rel/key", "x") == Path("rel/key")
    assert expand_home("./~/key", "x") == Path("./~/key")
    assert expand_home("~", "x") == home
