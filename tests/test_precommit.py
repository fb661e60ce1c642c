"""The pre-commit hook, run for real: `pre-commit try-repo <this checkout> bertlint --all-files`.

Slow-ish (about a minute the first time: pre-commit builds bertlint from the copy into its own
environment, fetching the dependencies from PyPI), so both cases share one pre-commit cache.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from checkout import copy_checkout, readme_block

PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
pytestmark = pytest.mark.skipif(not PRE_COMMIT.exists() or shutil.which("git") is None, reason="needs pre-commit and git")

BAD = 'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\nenc = tok("a", max_length=8, truncation=True, pad_to_max_length=True)\n'
CLEAN = BAD.replace("pad_to_max_length=True", 'padding="max_length"')


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This checkout as it is on disk (uncommitted and untracked files included, ignored ones not), committed to a fresh repository."""
    repo = copy_checkout(tmp_path_factory.mktemp("hook-repo"))
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "snapshot", cwd=repo)
    return repo


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(hook_repo: Path, cache: Path, tmp_path: Path, script: str) -> subprocess.CompletedProcess:
    """The project holds `train.py` and, under an excluded folder, a file with findings that pre-commit
    names too: the hook must leave it alone (--force-exclude)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\nextend-exclude = ["legacy/"]\n')
    (project / "train.py").write_text(script)
    (project / "legacy").mkdir()
    (project / "legacy" / "old.py").write_text(BAD)
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(cache), "NO_COLOR": "1"}
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(hook_repo), "bertlint", "--all-files", "--color", "never"],
        cwd=project, env=env, capture_output=True, text=True, timeout=600,
    )


def test_hook_manifest_matches_the_package():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    for line in ("- id: bertlint", "entry: bertlint --force-exclude", "language: python", "types_or: [python, jupyter]", "require_serial: false"):
        assert line in text


def test_hook_fails_on_a_script_with_findings(hook_repo, cache, tmp_path):
    result = try_repo(hook_repo, cache, tmp_path, BAD)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bertlint" in result.stdout and "Failed" in result.stdout
    assert "train.py:3:47: BL101" in result.stdout and "legacy" not in result.stdout


def test_hook_passes_on_a_clean_script(hook_repo, cache, tmp_path):
    result = try_repo(hook_repo, cache, tmp_path, CLEAN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed" in result.stdout


DRIFT = 'from transformers import TrainingArguments\nargs = TrainingArguments("out", evaluation_strategy="epoch", no_cuda=True)\n'
FINDING = re.compile(r"^(\S+:\d+:\d+: BL\d{3})", re.MULTILINE)


def test_hook_and_terminal_agree_on_one_tree(hook_repo, cache, tmp_path):
    """No pin in the configuration: both find the release the project runs with (its .venv; the hook's
    own environment has no transformers, the terminal's has another) and say so."""
    project = tmp_path / "project"
    (project / ".venv" / "lib" / "python3.11" / "site-packages" / "transformers-4.46.3.dist-info").mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (project / ".gitignore").write_text(".venv/\n")
    (project / "train.py").write_text(DRIFT)
    (project / "tok.py").write_text(BAD)
    (project / "bertlint.toml").write_text("preview = true\n")  # no version pin
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(cache), "NO_COLOR": "1"}
    hook = subprocess.run([str(PRE_COMMIT), "try-repo", str(hook_repo), "bertlint", "--all-files", "--color", "never"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)
    terminal = subprocess.run([str(Path(sys.executable).parent / "bertlint"), "--no-cache", "."], cwd=project, env=env, capture_output=True, text=True)
    said = "Target: transformers 4.46.3 (the transformers installed in the project's environment .venv/)."
    assert said in hook.stdout and said in terminal.stdout, hook.stdout + terminal.stdout
    assert sorted(FINDING.findall(hook.stdout)) == sorted(FINDING.findall(terminal.stdout)) == [
        "train.py:2:33: BL601", "train.py:2:62: BL601"]  # BL101 is silent on 4.46: `pad_to_max_length` still pads there


def test_readme_config_as_printed(hook_repo, cache, tmp_path):
    """The README's `.pre-commit-config.yaml`, verbatim, with a clone of bertlint beside the project:
    `pre-commit autoupdate` pins `rev` to the clone's commit, then the hook runs with its `args`."""
    clone = tmp_path / "bertlint"
    git("clone", "-q", str(hook_repo), str(clone), cwd=tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(readme_block("### pre-commit", "yaml"))
    (project / "bertlint.toml").write_text('transformers-version = "5.0"\npreview = true\n')
    (project / "train.py").write_text(BAD + 'enc = tok(["a", "bb"], padding="max_length")\n')  # BL101; BL106 is in the args' --ignore
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    env = {**os.environ, "PRE_COMMIT_HOME": str(cache), "NO_COLOR": "1"}
    update = subprocess.run([str(PRE_COMMIT), "autoupdate", "--color", "never"], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert update.returncode == 0, update.stdout + update.stderr
    commit = git("rev-parse", "HEAD", cwd=clone).strip()
    assert f"rev: {commit}" in (project / ".pre-commit-config.yaml").read_text()
    git("add", "-A", cwd=project)
    run = subprocess.run([str(PRE_COMMIT), "run", "--all-files", "--color", "never"], cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1 and "mutable reference" not in run.stdout + run.stderr, run.stdout + run.stderr
    assert FINDING.findall(run.stdout) == ["train.py:3:47: BL101"], run.stdout
    assert "BL106" not in run.stdout
