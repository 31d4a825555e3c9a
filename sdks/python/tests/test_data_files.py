"""The package's data files are generated from the repository's sources by tools/generate-data.ts and must not drift:
the egress policy the engine walks with is sdks/vectors/egress-policy.json byte for byte (the installed package
cannot read the repository, so it carries a copy), so is the portable name model (sdks/vectors/name-model.json), and
the IBAN table is what the generator writes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from privacy_relay.tokeniser.names import model_data
from privacy_relay.wire import egress_policy

from .gateway import NODE, REPO

SOURCE_COPY = REPO / "sdks" / "python" / "src" / "privacy_relay" / "wire" / "data" / "egress-policy.json"
VECTORS_POLICY = REPO / "sdks" / "vectors" / "egress-policy.json"
NAME_MODEL_COPY = REPO / "sdks" / "python" / "src" / "privacy_relay" / "tokeniser" / "data" / "name-model.json"
VECTORS_NAME_MODEL = REPO / "sdks" / "vectors" / "name-model.json"


def test_the_egress_policy_copy_equals_the_vectors_policy_byte_for_byte() -> None:
    source = VECTORS_POLICY.read_bytes()
    assert SOURCE_COPY.read_bytes() == source, "run: node_modules/.bin/node sdks/python/tools/generate-data.ts"
    # The copy the imported package reads (the installed one when the tests run against an installed wheel).
    assert egress_policy.POLICY_PATH.read_bytes() == source


def test_the_name_model_copy_equals_the_vectors_name_model_byte_for_byte() -> None:
    source = VECTORS_NAME_MODEL.read_bytes()
    assert NAME_MODEL_COPY.read_bytes() == source, "run: node_modules/.bin/node sdks/python/tools/generate-data.ts"
    # The copy the imported package reads.
    assert (Path(model_data.__file__).resolve().parent.parent / "data" / "name-model.json").read_bytes() == source


@pytest.mark.skipif(not Path(NODE).exists(), reason="the repository's node_modules are not installed")
def test_generate_data_check_finds_every_file_up_to_date() -> None:
    out = subprocess.run([NODE, "sdks/python/tools/generate-data.ts", "--check"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "up to date: 3 files" in out.stdout
