"""The `--verify` child: `python -m bertlint.verify.child`, a JSON request on stdin, one JSON result per line out.

It imports torch and transformers once, then forks one process per probe (a CUDA device-side assert
kills the CUDA context of the process that hit it, and a probe may hang): each gets its own time
limit, its stderr in a file (for the assert message), and is killed when late. Memory probes run
alone, so that one probe's allocations never count in another's peak.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, TextIO

EXCLUSIVE = frozenset({"BL501", "BL502"})


def main() -> None:
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # stray prints of libraries must not corrupt the result stream
    request = json.load(sys.stdin)
    specs = request["probes"]
    try:
        import torch

        from bertlint.verify import probes  # imported once here, inherited by every fork
    except Exception as exc:  # a broken torch/transformers install
        return _emit_all(out, specs, f"importing torch/transformers failed: {type(exc).__name__}: {exc}")
    device = request.get("device", "auto")
    has_cuda = torch.cuda.is_available()  # NVML-based (PYTORCH_NVML_BASED_CUDA_CHECK): does not initialise CUDA before the forks
    if device == "cuda" and not has_cuda:
        return _emit_all(out, specs, "--device cuda was asked for, but torch sees no CUDA device")
    device = "cuda" if device == "cuda" or (device == "auto" and has_cuda) else "cpu"
    probes.prepare(specs)
    Runner(specs, device, float(request["timeout"]), out).run()


def _emit_all(out: TextIO, specs: list[dict], reason: str) -> None:
    for spec in specs:
        _emit(out, spec, {"status": "could_not_run", "evidence": reason})


def _emit(out: TextIO, spec: dict, result: dict[str, Any]) -> None:
    out.write(json.dumps({"id": spec["id"], **result}) + "\n")


class Runner:
    """Runs probe processes, `workers` at a time, exclusive ones alone."""

    def __init__(self, specs: list[dict], device: str, timeout: float, out: TextIO):
        # the short fine-tune (BL301) is the longest probe: start it first; exclusive ones last
        self.pending = sorted(specs, key=lambda s: (s["code"] in EXCLUSIVE, s["code"] != "BL301"))
        self.device, self.timeout, self.out = device, timeout, out
        cores = os.cpu_count() or 1
        self.workers = max(1, min(cores, 4, len(specs)))
        self.threads = max(1, cores // self.workers)
        self.context = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self.scratch = Path(tempfile.mkdtemp(prefix="bertlint-verify-"))
        self.running: dict[Any, tuple[dict, Any, float, Path]] = {}

    def run(self) -> None:
        try:
            while self.pending or self.running:
                self._start_what_fits()
                ready = wait([conn for _, conn, _, _ in self.running.values()] + [p.sentinel for p in self.running], timeout=0.2)
                for process, (spec, conn, started, log) in list(self.running.items()):
                    late = time.monotonic() - started > self.timeout
                    if conn in ready or process.sentinel in ready or late or not process.is_alive():
                        self._finish(process, spec, conn, started, log, late)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)

    def _start_what_fits(self) -> None:
        while self.pending and len(self.running) < self.workers:
            spec = self.pending[0]
            if spec["code"] in EXCLUSIVE and self.running:
                return
            self.pending.pop(0)
            log = self.scratch / f"probe-{spec['id']}.stderr"
            receive, send = self.context.Pipe(duplex=False)
            process = self.context.Process(target=_probe_process, args=(spec, self.device, self.threads, send, str(log), str(self.scratch)), daemon=True)
            process.start()
            send.close()
            self.running[process] = (spec, receive, time.monotonic(), log)
            if spec["code"] in EXCLUSIVE:
                return

    def _finish(self, process, spec: dict, conn, started: float, log: Path, late: bool) -> None:
        result = None
        if conn.poll():
            try:
                result = conn.recv()
            except (EOFError, OSError):
                result = None
        if result is None and not late and process.is_alive():
            return  # the sentinel woke us before the result arrived: wait for it
        if result is None:
            if late:
                process.kill()
                reason = f"timed out after {self.timeout:g} s (--verify-timeout)"
            else:
                process.join(1)
                reason = f"the probe process died ({_exit_text(process.exitcode)})"
            detail = _stderr_tail(log)
            result = {"status": "could_not_run", "evidence": reason + (f": {detail}" if detail else ""), "seconds": round(time.monotonic() - started, 2)}
        process.join(5)
        if process.is_alive():
            process.kill()  # hung in CUDA teardown after an assert: the result is already in
        conn.close()
        del self.running[process]
        _emit(self.out, spec, result)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _stderr_tail(log: Path) -> str:
    """The most telling line of a probe's stderr: a CUDA assertion, else the last line."""
    try:
        lines = [line.strip() for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    asserts = [line for line in lines if "Assertion" in line]
    return (asserts or lines or [""])[-1][:300]


def _probe_process(spec: dict, device: str, threads: int, conn, log: str, scratch: str) -> None:
    """Runs in the forked process: one probe, its verdict sent back with device and seconds."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 1)  # CUDA prints its device-side assertion with printf
    os.dup2(fd, 2)
    import torch

    from bertlint.verify import probes

    torch.set_num_threads(threads)
    workdir = Path(scratch) / f"work-{spec['id']}"
    workdir.mkdir(parents=True, exist_ok=True)
    env = probes.Env(device, workdir)
    started = time.perf_counter()
    try:
        result = probes.PROBES[spec["code"]](spec, env)
    except Exception as exc:  # anything unexpected: the probe could not run, and we say why
        result = {"status": "could_not_run", "evidence": f"the probe failed: {probes.error_text(exc)}"}
    if "device-side assert" in result["evidence"]:
        sys.stderr.flush()
        result["evidence"] += f" ({_stderr_tail(Path(log))})"
    result["seconds"] = round(time.perf_counter() - started, 2)
    try:
        result["device"] = env.label
    except Exception:  # the CUDA context died with an assert: name the device plainly
        result["device"] = device
    conn.send(result)
    conn.close()


if __name__ == "__main__":
    main()
