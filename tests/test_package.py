"""Install as the README says: its Quick start and Install blocks run as printed in a copy of the
clone, `python -m build` makes an sdist and a wheel that `twine check --strict` accepts, and the
wheel, installed in a fresh venv, runs outside the clone (`--version`, `rule`, a lint).

pip fetches build, twine and bertlint's dependencies from the package index: offline, leave this
module out with `-m "not network"`. About 40 s.
"""

from __future__ import annotations

import os
import re
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from checkout import copy_checkout, readme_block
from conftest import ROOT

pytestmark = pytest.mark.network

VERSION = re.search(r'__version__ = "([^"]+)"', (ROOT / "src" / "bertlint" / "__init__.py").read_text()).group(1)
BUGGY = 'from transformers import TrainingArguments\nargs = TrainingArguments("out", evaluation_strategy="epoch")\n'
CLEAN = BUGGY.replace("evaluation_strategy", "eval_strategy")
# Neither this checkout's src/ nor the test environment's venv may stand in for what was installed.
ENV = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-eo", "pipefail", "-c", command], cwd=cwd, env=ENV, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the clone after the README's Install blocks ran in it, as printed."""
    clone = copy_checkout(tmp_path_factory.mktemp("home") / "bertlint")
    for block in (readme_block("## Install", "sh"), readme_block("To install bertlint into another project", "sh")):
        result = sh(block, clone)
        assert result.returncode == 0, block + result.stdout + result.stderr
    return clone


def test_install_block_gives_bertlint_and_its_server(clone: Path):
    assert sh(".venv/bin/bertlint --version", clone).stdout == f"bertlint {VERSION}\n"
    assert sh(".venv/bin/python -c 'import pygls, lsprotocol'", clone).returncode == 0


def test_quick_start_as_printed(clone: Path):
    result = sh(readme_block("## Quick start", "sh"), clone)
    # without --preview, in a venv without transformers: what the README shows under it, byte for byte
    shown = readme_block("The default rule set finds", "text")
    assert result.returncode == (1 if "\nFound " in shown else 0) and result.stdout == shown, result.stdout + result.stderr


def test_build_makes_an_sdist_and_a_wheel_that_twine_accepts(clone: Path):
    dist = sorted(path.name for path in (clone / "dist").iterdir())
    assert dist == [f"bertlint-{VERSION}-py3-none-any.whl", f"bertlint-{VERSION}.tar.gz"]
    assert sh(".venv/bin/pip install -q twine", clone).returncode == 0
    result = sh(".venv/bin/python -m twine check --strict dist/*", clone)
    assert result.returncode == 0 and result.stdout.count("PASSED") == 2, result.stdout + result.stderr


def test_wheel_carries_the_data_and_the_rule_pages(clone: Path):
    names = zipfile.ZipFile(clone / "dist" / f"bertlint-{VERSION}-py3-none-any.whl").namelist()
    assert {n.removeprefix("bertlint/data/") for n in names if n.startswith("bertlint/data/")} == {
        p.name for p in (ROOT / "src" / "bertlint" / "data").iterdir() if p.is_file()}
    assert {n.removeprefix("bertlint/pages/") for n in names if n.startswith("bertlint/pages/")} == {p.name for p in (ROOT / "rules").glob("*.md")}
    assert {n.split("/")[0] for n in names} == {"bertlint", f"bertlint-{VERSION}.dist-info"}
    assert not any("__pycache__" in n for n in names)


def test_sdist_holds_the_sources_and_nothing_local(clone: Path):
    with tarfile.open(clone / "dist" / f"bertlint-{VERSION}.tar.gz") as sdist:
        top = {name.split("/")[1] for name in sdist.getnames() if name.count("/")}
    assert top == {"PKG-INFO", "pyproject.toml", "README.md", ".gitignore", "src", "rules", "tests", "fixtures"}


def test_installed_wheel_runs_outside_the_clone(clone: Path, tmp_path: Path):
    other = clone.parent / "other-env" / "bin"  # where the README's second block installed the wheel
    (tmp_path / "bertlint.toml").write_text('transformers-version = "5.0"\n')
    (tmp_path / "buggy.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    where = sh(f"{other}/python -c 'import bertlint; print(bertlint.__file__)'", tmp_path).stdout
    assert where.startswith(str(other.parent / "lib")), where
    assert sh(f"{other}/bertlint --version", tmp_path).stdout == f"bertlint {VERSION}\n"
    page = sh(f"{other}/bertlint rule BL101", tmp_path)
    assert page.returncode == 0 and page.stdout.startswith("# BL101 pad-to-max-length-deprecated"), page.stdout + page.stderr
    buggy = sh(f"{other}/bertlint --no-cache --format concise buggy.py", tmp_path)
    assert buggy.returncode == 1 and buggy.stdout.startswith("buggy.py:2:33: BL601 "), buggy.stdout + buggy.stderr
    assert sh(f"{other}/bertlint --no-cache clean.py", tmp_path).returncode == 0
