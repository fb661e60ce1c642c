"""Throwaway installs of a transformers release, side by side, for the network tests that run real library code.

The wheel comes from `benchmarks/drift/tables.py`'s `fetch` (cached in $BERTLINT_WHEELS); pip installs it with its
dependencies and pandas into $BERTLINT_RELEASES/transformers-X (default: bertlint-releases in the temporary folder),
once: a folder with its `.complete` marker is reused. Scripts run there with the test interpreter (torch and
accelerate come from the test environment, everything the release needs from its folder first). `Unavailable`,
with pip's reason, where the index cannot be reached: the callers skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import ROOT

RELEASES = Path(os.environ.get("BERTLINT_RELEASES") or Path(tempfile.gettempdir()) / "bertlint-releases")
PROBE = Path(__file__).with_name("fix_probe.py")

_spec = importlib.util.spec_from_file_location("drift_tables", ROOT / "benchmarks" / "drift" / "tables.py")
tables = sys.modules.get("drift_tables") or importlib.util.module_from_spec(_spec)
if "drift_tables" not in sys.modules:
    sys.modules["drift_tables"] = tables
    _spec.loader.exec_module(tables)


class Unavailable(Exception):
    """The release could not be installed (offline, or no wheel for this interpreter)."""


def release(version: str) -> Path:
    """The folder holding transformers==`version` and its dependencies, installed on first use."""
    folder = RELEASES / f"transformers-{version}"
    if (folder / ".complete").exists():
        return folder
    try:
        wheel = tables.fetch("transformers", version)
    except RuntimeError as exc:
        raise Unavailable(str(exc)) from None
    command = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:",
               "--target", str(folder), "--find-links", str(wheel.parent), str(wheel), "pandas"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"pip install transformers=={version}: {exc}") from None
    if done.returncode:
        raise Unavailable(f"pip install transformers=={version} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    (folder / ".complete").write_text(version)
    return folder


def run(version: str, tokenizer: str, cases: list[str]) -> list[dict]:
    """Each case's body run on `version` with a tokenizer built from a tiny vocabulary (`fast` or `slow`):
    `{"ok": True, "out": ...}` (what the body left in `out`, as plain lists and values) or `{"ok": False, "error": ...}`."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(release(version))
    env["TRANSFORMERS_OFFLINE"] = env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run([sys.executable, str(PROBE), tokenizer], input=json.dumps(cases), capture_output=True, text=True, env=env, timeout=600,
                          cwd=tempfile.gettempdir())
    if done.returncode:
        raise AssertionError(f"the probe failed on transformers {version}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])
