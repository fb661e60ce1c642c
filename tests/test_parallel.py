"""The process pool: same results as one process, chosen by file count, failures kept per file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bertlint import engine, runner

BAD = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)
"""
BROKEN = "def f(:\n"
forked = pytest.mark.skipif(sys.platform != "linux", reason="the workers inherit the test's monkeypatching only when forked")


@pytest.fixture
def project(tmp_path: Path, monkeypatch) -> Path:
    """A dozen small files; the pool is used for them whatever their bytes, unless a test says otherwise."""
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    for i in range(runner.POOL_MIN_FILES + 4):
        (tmp_path / f"s{i:02}.py").write_text(BAD + "\n" * i if i % 3 else (BROKEN if i % 2 else "x = 1\n"))
    return tmp_path


def as_rows(outcome: runner.Outcome) -> list[tuple]:
    return [(f.path, f.line, f.column, f.code, f.message, f.fix) for f in outcome.findings]


@pytest.fixture
def no_pool(monkeypatch):
    """Make any attempt to start a process pool fail the test."""
    import concurrent.futures

    def refuse(*args, **kwargs):
        raise AssertionError("a pool was started")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", refuse)


def test_pool_gives_the_serial_results_in_the_serial_order(project):
    serial = runner.run([project], jobs=1, use_cache=False)
    pooled = runner.run([project], jobs=2, use_cache=False)
    assert as_rows(pooled) == as_rows(serial)
    assert {f.code for f in serial.findings} == {"BL101", "BL901"}
    assert pooled.files == serial.files == runner.POOL_MIN_FILES + 4


def test_a_single_file_never_pays_for_a_pool(project, no_pool):
    outcome = runner.run([project / "s01.py"], jobs=8, use_cache=False)
    assert [f.code for f in outcome.findings] == ["BL101"]


def test_a_few_small_files_never_pay_for_a_pool(project, monkeypatch, no_pool):
    """Under POOL_MIN_BYTES of source, forking the workers costs more than linting it all in-process."""
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 32 * 1024)
    outcome = runner.run([project], jobs=8, use_cache=False)
    assert outcome.files == runner.POOL_MIN_FILES + 4 and {f.code for f in outcome.findings} == {"BL101", "BL901"}


def test_batches_are_few_even_and_largest_first(tmp_path):
    sizes = [5000, 300, 200, 100] + [10] * 100
    sized = [(size, tmp_path / f"f{i}.py") for i, size in enumerate(sizes)]
    batches = runner._batches(sized, 8)
    assert batches[0] == [tmp_path / "f0.py"]  # larger than a batch's share: alone
    assert len(batches) <= 8 and sorted(p for batch in batches for p in batch) == sorted(p for _, p in sized)


def test_a_warm_run_needs_no_pool(project, monkeypatch):
    runner.run([project], jobs=2)
    import concurrent.futures

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", lambda *a, **k: pytest.fail("a pool was started"))
    assert runner.run([project], jobs=2).findings


def test_jobs_default_to_the_cores_we_may_use():
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert runner._cores() == expected


@forked
def test_internal_error_in_a_worker_keeps_the_other_files_findings(project, monkeypatch):
    real = engine.lint_source

    def flaky(source, path, settings, *args, **kwargs):
        if path.name == "s01.py":
            raise KeyError("boom")
        return real(source, path, settings, *args, **kwargs)

    monkeypatch.setattr(engine, "lint_source", flaky)  # the forked workers inherit it
    outcome = runner.run([project], jobs=2, use_cache=False)
    assert len(outcome.internal_errors) == 1 and "s01.py" in outcome.internal_errors[0]
    assert {Path(f.path).name for f in outcome.findings} >= {"s02.py", "s04.py"}


@forked
def test_a_dead_worker_is_an_internal_error_not_a_crash(project, monkeypatch):
    real = engine.lint_source

    def dies(source, path, settings, *args, **kwargs):
        if path.name == "s01.py":
            os._exit(3)
        return real(source, path, settings, *args, **kwargs)

    monkeypatch.setattr(engine, "lint_source", dies)
    outcome = runner.run([project], jobs=2, use_cache=False)
    assert outcome.internal_errors
    assert all("terminated abruptly" in error for error in outcome.internal_errors)


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_counts_up_to_the_total(project, jobs):
    runner.run([project / "s01.py"], jobs=1)  # one cache hit among the files
    calls: list[tuple[int, int]] = []
    runner.run([project], jobs=jobs, progress=lambda done, total: calls.append((done, total)))
    total = runner.POOL_MIN_FILES + 4
    assert calls[0] == (1, total) and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_no_progress_bar_when_output_is_not_a_terminal(project):
    result = subprocess.run(
        [sys.executable, "-m", "bertlint", "--no-cache", "--jobs", "2", str(project)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1
    assert "\r" not in result.stderr and "linting" not in result.stderr


def test_progress_bar_waits_for_a_long_run(monkeypatch):
    from bertlint import cli

    shown = cli._Progress()
    shown(0, 10)
    assert shown.bar is None  # a run that just started shows nothing
    monkeypatch.setattr(cli._Progress, "DELAY", 0.0)
    try:
        shown(5, 10)
        assert shown.bar is not None and shown.bar.tasks[0].completed == 5
    finally:
        shown.close()


def test_jobs_option_is_validated(project):
    result = subprocess.run([sys.executable, "-m", "bertlint", "--jobs", "0", str(project)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--jobs" in result.stderr


@pytest.mark.parametrize(("fmt", "shown"), [("full", True), ("concise", True), ("json", False), ("sarif", False), ("github", False)])
def test_progress_bar_only_for_human_formats_on_a_terminal(project, monkeypatch, fmt, shown):
    import click.testing

    from bertlint import cli

    made = []

    class Recorder(cli._Progress):
        def __init__(self):
            super().__init__()
            made.append(self)

    monkeypatch.setattr(cli, "_Progress", Recorder)
    monkeypatch.setattr(click.testing._NamedTextIOWrapper, "isatty", lambda self: True)  # CliRunner's stderr
    click.testing.CliRunner().invoke(cli.main, ["--no-cache", "--format", fmt, str(project)])
    assert bool(made) is shown
