"""The autofix guarantees, through the real command line: fixes remove what they fix, keep the file
parsing and everything else byte for byte, converge in one `--fix` run, and never write half a file."""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import fixer, runner
from bertlint.cli import main
from bertlint.rules import Replacement, Rule, all_rules
from conftest import PINNED_VERSION, ROOT, options_in

TA_SCRIPT = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', no_cuda=True)\n"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str | Path, cwd: Path | None = None) -> Run:
    """`bertlint --isolated ARGS`, the real command, run in-process (a subprocess per call costs seconds)."""
    previous = os.getcwd()
    os.chdir(cwd or previous)
    try:
        result = CliRunner().invoke(main, ["--isolated", *map(str, args)], catch_exceptions=False)
    finally:
        os.chdir(previous)
    return Run(result.exit_code, result.stdout, result.stderr)


def snapshot(root: Path) -> dict[str, bytes]:
    """The scripts and notebooks under `root` (not the result cache beside them)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.suffix in (".py", ".ipynb")}


# --------------------------------------------------------------------------- every fixture, all topics


def _fixture_groups(tree: Path) -> dict[tuple[tuple[str, str], ...], list[Path]]:
    """Fixture scripts and notebooks grouped by their `# bertlint-test:` options (the CLI takes them as flags)."""
    groups: dict[tuple[tuple[str, str], ...], list[Path]] = {}
    for path in sorted(tree.rglob("*")):
        if path.suffix not in (".py", ".ipynb") or "verify" in path.relative_to(tree).parts:
            continue
        options = {"transformers_version": PINNED_VERSION, **options_in(path.read_text(encoding="utf-8"))}
        groups.setdefault(tuple(sorted(options.items())), []).append(path)
    return groups


def _flags(options: tuple[tuple[str, str], ...]) -> list[str]:
    return [part for key, value in options for part in (f"--{key.replace('_', '-')}", value)]


def test_fix_every_fixture(tmp_path):
    """`--fix --unsafe-fixes` on a copy of the whole fixture tree: every script still parses (as
    `fixer.parses` reads it: a cell script with its IPython syntax masked, a newer Python's syntax); a second run
    changes no byte and finds nothing fixable left."""
    tree = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", tree)
    before = snapshot(tree)
    groups = _fixture_groups(tree)
    for options, paths in groups.items():
        run = cli("--fix", "--unsafe-fixes", "--exit-zero", "--quiet", *_flags(options), *paths)
        assert run.returncode == 0, run.stderr
    after_first = snapshot(tree)
    changed = [name for name in before if before[name] != after_first[name]]
    assert len(changed) >= 10, changed  # the fixtures hold fixable findings of many rules
    for name in changed:
        if name.endswith(".py"):
            assert fixer.parses(after_first[name].decode("utf-8")), name  # as bertlint reads it: newer syntax, a cell script's IPython lines
        else:
            json.loads(after_first[name])

    left = []
    for options, paths in groups.items():
        run = cli("--fix", "--unsafe-fixes", "--format", "json", "--exit-zero", *_flags(options), *paths)
        left += [f"{f['path']}:{f['line']}:{f['column']} {f['code']}" for f in json.loads(run.stdout) if f["fix"]]
    assert left == []
    assert snapshot(tree) == after_first


# --------------------------------------------------------------------------- the command line's fix modes


def test_diff_prints_and_writes_nothing(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TA_SCRIPT, encoding="utf-8")
    run = cli("--diff", "--transformers-version", "5.0", script, cwd=tmp_path)
    assert run.returncode == 1
    assert "-args = TrainingArguments(output_dir='o', no_cuda=True)\n+args = TrainingArguments(output_dir='o', use_cpu=True)\n" in run.stdout
    assert run.stdout.startswith(f"--- {script}\n+++ {script}\n")  # the path as given, no a/ b/ prefixes glued to an absolute path
    assert script.read_text(encoding="utf-8") == TA_SCRIPT

    clean = cli("--diff", "--transformers-version", "4.31", script, cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")


def test_show_fixes(tmp_path):
    (tmp_path / "train.py").write_text(TA_SCRIPT, encoding="utf-8")
    run = cli("--show-fixes", "--transformers-version", "5.0", "train.py", cwd=tmp_path)
    assert "train.py:2:42: BL601 [*] `no_cuda` was removed in 5.0" in run.stdout
    assert "  = fix (safe): rename `no_cuda` to `use_cpu`\n      2:42-2:49 -> 'use_cpu'" in run.stdout
    assert "(1 fixable with `--fix`)" in run.stdout


def test_json_fix_has_applicability_and_one_based_edits(tmp_path):
    (tmp_path / "train.py").write_text(TA_SCRIPT, encoding="utf-8")
    run = cli("--format", "json", "--transformers-version", "5.0", "train.py", cwd=tmp_path)
    [finding] = json.loads(run.stdout)
    assert finding["fix"] == {
        "applicability": "safe",
        "message": "rename `no_cuda` to `use_cpu`",
        "edits": [{"line": 2, "column": 42, "end_line": 2, "end_column": 49, "content": "use_cpu"}],
    }
    line = TA_SCRIPT.splitlines()[1]
    assert line[42 - 1 : 49 - 1] == "no_cuda"


def test_fix_keeps_comments_and_formatting(tmp_path):
    source = (
        "import transformers as hf  # the usual alias\n"
        "\n"
        "args = hf.TrainingArguments(\n"
        "    output_dir = 'o',   # odd spacing stays\n"
        "    no_cuda  =  True,   # smoke run on CPU\n"
        "    # a comment between arguments\n"
        "    per_gpu_train_batch_size=8,\n"
        ")\n"
        "trainer = hf.Trainer(model=None, args=args, tokenizer=None)  # tokenizer for saving\n"
    )
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    run = cli("--fix", "--transformers-version", "4.46", script, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    expected = (
        source.replace("no_cuda  =", "use_cpu  =")
        .replace("per_gpu_train_batch_size", "per_device_train_batch_size")
        .replace("tokenizer=None)", "processing_class=None)")
    )
    assert script.read_text(encoding="utf-8") == expected
    assert "Fixed 3 findings." in run.stdout


# --------------------------------------------------------------------------- bytes outside the edit


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bom", "\ufeff# café\n".encode("utf-8") + TA_SCRIPT.encode("utf-8")),
        ("crlf", TA_SCRIPT.replace("\n", "\r\n").encode("utf-8")),
        ("latin1", "# -*- coding: latin-1 -*-\n# déjà vu\n".encode("latin-1") + TA_SCRIPT.replace("'o'", "'é'").encode("latin-1")),
        ("mixed", b"# one\r\n# two\n" + TA_SCRIPT.replace("\n", "\r\n", 1).encode("ascii")),
        ("formfeed", b"# page one\n\x0c\n# page two \xe2\x80\xa8 still two\n" + TA_SCRIPT.encode("ascii")),
    ],
)
def test_encoding_bom_and_line_endings_survive_byte_for_byte(tmp_path, name, data):
    script = tmp_path / f"{name}.py"
    script.write_bytes(data)
    run = cli("--fix", "--transformers-version", "5.0", script, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert script.read_bytes() == data.replace(b"no_cuda", b"use_cpu")


@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_inserted_lines_follow_the_file_s_line_endings(tmp_path, newline):
    source = "import torch\nfrom transformers import AdamW, get_scheduler\nopt = AdamW(params, lr=1e-3, eps=1e-6, weight_decay=0.0)\n"
    script = tmp_path / "train.py"
    script.write_bytes(source.replace("\n", newline).encode("utf-8"))
    cli("--fix", "--transformers-version", "5.0", script, cwd=tmp_path)
    expected = source.replace("AdamW, get_scheduler", "get_scheduler\nfrom torch.optim import AdamW")
    assert script.read_bytes() == expected.replace("\n", newline).encode("utf-8")


# --------------------------------------------------------------------------- writes


def test_fix_keeps_the_file_mode_and_inode(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TA_SCRIPT, encoding="utf-8")
    script.chmod(0o755)
    inode = script.stat().st_ino
    cli("--fix", "--transformers-version", "5.0", script, cwd=tmp_path)
    assert "use_cpu=True" in script.read_text(encoding="utf-8")
    assert (stat.S_IMODE(script.stat().st_mode), script.stat().st_ino) == (0o755, inode)


def test_a_fix_that_would_not_parse_leaves_the_file_untouched(tmp_path, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(TA_SCRIPT, encoding="utf-8")
    real = fixer.apply_edits

    def broken(text, findings, allowed):
        out, applied = real(text, findings, allowed)
        return out.replace("use_cpu=True", "use_cpu=True))"), applied

    monkeypatch.setattr(fixer, "apply_edits", broken)
    outcome = runner.run([script], isolated=True, overrides={"transformers_version": "5.0"}, fix="safe", use_cache=False)
    assert script.read_text(encoding="utf-8") == TA_SCRIPT
    assert outcome.fixed == 0
    assert [f.code for f in outcome.findings] == ["BL601"]


def test_a_write_that_fails_half_way_puts_the_original_back(tmp_path, monkeypatch):
    """The disk fills after the first bytes of the fixed text: the original bytes are written back."""
    script = tmp_path / "train.py"
    script.write_text(TA_SCRIPT, encoding="utf-8")
    real_write, calls = os.write, []

    def full_disk(fd, data):
        calls.append(len(data))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real_write(fd, bytes(data[:5]))

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(fixer.NotWritten, match="^No space left on device: not fixed$"):
        fixer.write_in_place(script, TA_SCRIPT.encode(), b"fixed " * 20)
    monkeypatch.undo()
    assert script.read_text(encoding="utf-8") == TA_SCRIPT


# --------------------------------------------------------------------------- overlapping fixes


@pytest.fixture
def overlapping_rule():
    """A throw-away rule whose fix rewrites the whole `TrainingArguments(...)` call, overlapping BL601's."""

    class AddReportTo(Rule):
        code = "BL998"
        name = "test-add-report-to"
        severity = "info"
        summary = "test only"
        fix = "safe"
        fix_title = "add report_to"

        def check(self, ctx):
            for call in ctx.facts.training_args:
                if "report_to" not in call.kwargs:
                    text = ctx.facts.text(call.node)
                    ctx.report(call.node, "no report_to", fix=[Replacement(call.node, text[:-1] + ", report_to='none')")])

    all_rules.cache_clear()
    try:
        yield AddReportTo
    finally:
        Rule.registry.pop("BL998", None)
        all_rules.cache_clear()


def test_overlapping_fixes_apply_one_per_pass(tmp_path, monkeypatch, overlapping_rule):
    script = tmp_path / "train.py"
    script.write_text(TA_SCRIPT, encoding="utf-8")
    passes = []
    real = fixer.apply_edits

    def spy(text, findings, allowed):
        out, applied = real(text, findings, allowed)
        passes.append(sorted(f.code for f in applied))
        return out, applied

    monkeypatch.setattr(fixer, "apply_edits", spy)
    # BL998 is no measured rule, hence a preview one.
    outcome = runner.run([script], isolated=True, overrides={"transformers_version": "5.0", "preview": True}, fix="safe", use_cache=False)
    assert passes == [["BL998"], ["BL601"], []]  # BL601 overlapped BL998's edit: deferred, then applied
    assert outcome.fixed == 2 and outcome.findings == []
    assert script.read_text(encoding="utf-8") == (
        "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', use_cpu=True, report_to='none')\n"
    )


@pytest.fixture
def chained_rule():
    """A throw-away rule whose fix brings about a new finding of its own: `num_train_epochs=1` becomes 2,
    which it then wants to be 3."""

    class MoreEpochs(Rule):
        code = "BL998"
        name = "test-more-epochs"
        severity = "info"
        summary = "test only"
        fix = "safe"
        fix_title = "one more epoch"

        def check(self, ctx):
            for call in ctx.facts.training_args:
                text = ctx.facts.text(call.node)
                for epochs in ("1", "2"):
                    if f"num_train_epochs={epochs})" in text:
                        ctx.report(call.node, f"{epochs} epochs", fix=[Replacement(call.node, text.replace(f"={epochs})", f"={int(epochs) + 1})"))])

    all_rules.cache_clear()
    try:
        yield MoreEpochs
    finally:
        Rule.registry.pop("BL998", None)
        all_rules.cache_clear()


def test_the_fixed_count_is_the_findings_fixed_not_the_fixes_applied(tmp_path, chained_rule):
    """A finding that one fix brings about and a later pass fixes is not counted: the run showed one
    fixable finding, so one is fixed ("1 fixable" never becomes "Fixed 2 findings")."""
    script = tmp_path / "train.py"
    script.write_text("from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', num_train_epochs=1)\n", encoding="utf-8")
    check = cli("--preview", "--select", "BL998", script, cwd=tmp_path)  # an unmeasured rule is a preview rule
    assert "Found 1 info (1 fixable with `--fix`)." in check.stdout
    fixed = cli("--fix", "--preview", "--select", "BL998", script, cwd=tmp_path)
    assert fixed.returncode == 0 and "Fixed 1 finding." in fixed.stdout
    assert script.read_text(encoding="utf-8").endswith("num_train_epochs=3)\n")  # both passes ran
