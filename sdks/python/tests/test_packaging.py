"""The package as users get it: a wheel built from pyproject.toml (pip, setuptools, no network) carries the typing
marker and the engine's data tables, declares its real dependencies, and works installed on its own."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_and_its_engine_runs_from_the_installed_copy(tmp_path: Path) -> None:
    # Built from a copy: setuptools writes build/ and *.egg-info next to the sources it builds.
    source = tmp_path / "source"
    shutil.copytree(PROJECT, source, ignore=shutil.ignore_patterns("tests", "build", "*.egg-info", "__pycache__", ".pytest_cache"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True,
    )
    assert build.returncode == 0, build.stderr
    [wheel] = list((tmp_path / "dist").glob("privacy_relay-0.1.0-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for member in ("privacy_relay/py.typed", "privacy_relay/tokeniser/data/iban_countries.json", "privacy_relay/tokeniser/data/name-model.json", "privacy_relay/wire/data/egress-policy.json"):
        assert member in names
    metadata = zipfile.ZipFile(wheel).read("privacy_relay-0.1.0.dist-info/METADATA").decode()
    # setuptools writes "name (spec)" before 70.1 and "name spec" since (PEP 508 both): compare without the brackets.
    declared = {
        line.removeprefix("Requires-Dist: ").replace(" (", "").replace(")", "").replace(" ", "")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    }
    assert declared == {"cryptography>=38.0.4", "httpx<1,>=0.23.3", "phonenumbers<10,>=8.12.57", "regex>=2022.10.31"}
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(tmp_path / "site"), str(wheel)], capture_output=True, text=True
    )
    assert install.returncode == 0, install.stderr
    probe = (
        "import privacy_relay, sys\n"
        "from privacy_relay.engine import Engine, name_model_of\n"
        "from privacy_relay.wire.ecdsa import SigningKey\n"
        "key = SigningKey.generate()\n"
        "p = Engine(names=name_model_of('builtin'), device_key=lambda: key).prepare('chat.completions', "
        "{'model': 'm', 'messages': [{'role': 'user', 'content': 'Dear Anna, IBAN DE89 3704 0044 0532 0130 00'}]})\n"
        "print(privacy_relay.__file__, sorted(p.detectors_fired.items()))\n"
    )
    run = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(tmp_path / 'site')!r}); exec({probe!r})"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(str(tmp_path / "site")) and "[('IBAN', 1), ('PERSON', 1)]" in run.stdout
