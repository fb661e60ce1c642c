"""`bertlint --verify`: confirm findings by running a probe for each in a child process.

The lint process never imports torch or transformers: this module lifts each finding's values into
a JSON spec (lift.py), hands the specs to `python -m bertlint.verify.child`, and reads one verdict per
probe back. The child runs offline (no hub access) and every probe has a time limit; a child that
crashes or hangs turns its probes into "could not run", never into a hang of bertlint.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from typing import Any, Iterable

from bertlint.config import Settings
from bertlint.report import Finding

PROBED = frozenset({"BL101", "BL102", "BL104", "BL201", "BL202", "BL204", "BL205", "BL206", "BL209", "BL210", "BL301", "BL306", "BL401", "BL402",
                    "BL404", "BL501", "BL502", "BL603", "BL311", "BL312", "BL405", "BL505"})  # fmt: skip
DEFAULT_TIMEOUT = 120.0
INSTALL = "pip install '.[verify]' in a clone of bertlint (not on PyPI yet)"
IMPORT_ALLOWANCE = 120.0  # seconds for the child to import torch and transformers
CHILD_ENV = {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
    "CUDA_LAUNCH_BLOCKING": "1",  # a device-side assert surfaces at the kernel that caused it
    "PYTORCH_NVML_BASED_CUDA_CHECK": "1",  # is_available() without initialising CUDA before the forks
    "TOKENIZERS_PARALLELISM": "false",
}  # fmt: skip


def missing_requirements() -> str | None:
    """Why --verify cannot run here (torch or transformers not installed), without importing them."""
    missing = [name for name in ("torch", "transformers") if importlib.util.find_spec(name) is None]
    return f"--verify needs {' and '.join(missing)}: {INSTALL}" if missing else None


def could_not_run(reason: str) -> dict[str, Any]:
    return {"status": "could_not_run", "device": None, "evidence": reason, "measurements": {}, "seconds": None}


def verify(findings: Iterable[Finding], settings: Settings, *, codes: Iterable[str] | None = None,
           device: str = "auto", timeout: float = DEFAULT_TIMEOUT) -> None:
    """Set `verification` on every finding that has a probe (and whose code is in `codes`, if given)."""
    from bertlint.verify import lift, sites

    wanted = PROBED & set(codes) if codes is not None else PROBED
    jobs: list[tuple[dict[str, Any], Finding]] = []
    found = sites.Sites(settings)
    for finding in (f for f in findings if f.code in wanted):
        try:
            spec = lift.spec_for(*found.of(finding), settings)
        except sites.CannotLift as exc:
            finding.verification = could_not_run(str(exc))
            continue
        jobs.append(({"id": len(jobs), **spec}, finding))
    if not jobs:
        return
    results = run_child([spec for spec, _ in jobs], device, timeout)
    for spec, finding in jobs:
        finding.verification = _shaped(results.get(spec["id"]) or could_not_run("the verify child returned no result for this probe"))


def _shaped(result: dict[str, Any]) -> dict[str, Any]:
    """The `verification` object every output format renders."""
    return {"status": result["status"], "device": result.get("device"), "evidence": result.get("evidence", ""),
            "measurements": result.get("measurements") or {}, "seconds": result.get("seconds"),
            **({"setup": result["setup"]} if result.get("setup") else {})}  # fmt: skip


def run_child(specs: list[dict[str, Any]], device: str, timeout: float) -> dict[int, dict[str, Any]]:
    """Run the probes in `python -m bertlint.verify.child`; id -> raw result. Never raises, never hangs."""
    request = json.dumps({"device": device, "timeout": timeout, "probes": specs})
    env = {**os.environ, **CHILD_ENV}
    if device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    limit = IMPORT_ALLOWANCE + timeout * len(specs)
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen([sys.executable, "-m", "bertlint.verify.child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=stderr, env=env, start_new_session=True)  # fmt: skip
        try:
            out, _ = process.communicate(request.encode(), timeout=limit)
            failure = f"the verify child exited with code {process.returncode}" if process.returncode else ""
        except subprocess.TimeoutExpired:
            _kill_group(process)
            out, _ = process.communicate()
            failure = f"the verify child ran past {limit:g} s and was stopped"
        stderr.seek(0)
        tail = stderr.read().decode(errors="replace").strip().splitlines()[-1:]
    results = {}
    for line in out.decode(errors="replace").splitlines():
        try:
            result = json.loads(line)
            results[result.pop("id")] = result
        except (ValueError, KeyError, AttributeError):
            continue
    if failure:
        reason = failure + (f": {tail[0][:300]}" if tail else "")
        results = {s["id"]: results.get(s["id"]) or could_not_run(reason) for s in specs}
    return results


def _kill_group(process: subprocess.Popen) -> None:
    """Stop the child and the probe processes it forked (they share the session started for it)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (AttributeError, ProcessLookupError, PermissionError):
        process.kill()
