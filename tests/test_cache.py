"""The result cache: what a second run reuses, and exactly what invalidates it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bertlint import cache, engine, runner

BAD = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)
"""
CLEAN = "import transformers\nprint(transformers.__version__)\n"
IMBALANCED = """\
import pandas as pd
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments

frame = pd.read_csv("data/tickets.csv")
tokenizer = AutoTokenizer.from_pretrained("roberta-base")
dataset = Dataset.from_pandas(frame[["body", "label"]])
model = AutoModelForSequenceClassification.from_pretrained("roberta-base", num_labels=3)
args = TrainingArguments(output_dir="out", learning_rate=3e-5)
trainer = Trainer(model=model, args=args, train_dataset=dataset, processing_class=tokenizer)
trainer.train()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    return tmp_path


@pytest.fixture
def linted(monkeypatch) -> list[str]:
    """Names of the files actually linted (not served from the cache) during the test."""
    seen: list[str] = []
    real = runner.lint_path

    def spy(path, *args, **kwargs):
        seen.append(path.name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(runner, "lint_path", spy)
    return seen


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def lint(root: Path, **options) -> runner.Outcome:
    return runner.run([root], jobs=1, **options)


def summary(outcome: runner.Outcome) -> list[tuple]:
    return [(Path(f.path).name, f.line, f.column, f.code, f.message) for f in outcome.findings]


def test_second_run_reuses_every_result(project, linted):
    write(project, "a.py", BAD)
    write(project, "b.py", CLEAN)
    first = lint(project)
    assert sorted(linted) == ["a.py", "b.py"]
    linted.clear()
    second = lint(project)
    assert linted == []
    assert summary(second) == summary(first) and any(f.code == "BL101" for f in second.findings)
    assert second.findings[0].fix == first.findings[0].fix  # fixes survive the round trip


def test_cache_folder_is_ignored_by_git_and_tagged(project):
    write(project, "a.py", BAD)
    lint(project)
    folder = project / cache.CACHE_DIR
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_changed_file_is_linted_again_and_only_it(project, linted):
    write(project, "a.py", BAD)
    write(project, "b.py", CLEAN)
    lint(project)
    linted.clear()
    write(project, "a.py", CLEAN)
    outcome = lint(project)
    assert linted == ["a.py"]
    assert outcome.findings == []


def test_changed_configuration_invalidates_but_discovery_options_do_not(project, linted):
    write(project, "a.py", BAD)
    lint(project)
    linted.clear()
    lint(project, overrides={"extend_exclude": ["nothing_here"]})
    assert linted == []
    assert lint(project, overrides={"ignore": ["BL101"]}).findings == []
    assert linted == ["a.py"]


def test_changed_pin_invalidates_only_the_files_under_it(tmp_path, linted):
    write(tmp_path, "old/requirements.txt", "transformers==4.30\n")
    write(tmp_path, "old/a.py", BAD)
    write(tmp_path, "new/b.py", BAD)
    lint(tmp_path, isolated=True)
    linted.clear()
    write(tmp_path, "old/requirements.txt", "transformers==5.2\n")
    lint(tmp_path, isolated=True)
    assert linted == ["a.py"]


def test_changed_data_file_invalidates_the_script_that_reads_it(project, linted):
    write(project, "train.py", IMBALANCED)
    write(project, "data/tickets.csv", "body,label\n" + "x,0\n" * 90 + "y,1\n" * 5 + "z,2\n" * 5)
    assert "BL401" in {f.code for f in lint(project).findings}
    linted.clear()
    write(project, "data/tickets.csv", "body,label\n" + "x,0\n" * 30 + "y,1\n" * 30 + "z,2\n" * 30)
    assert "BL401" not in {f.code for f in lint(project).findings}
    assert linted == ["train.py"]


def test_a_hit_reports_the_path_as_given_this_time(project, monkeypatch):
    write(project, "a.py", BAD)
    monkeypatch.chdir(project)
    lint(Path("a.py"))
    assert {f.path for f in runner.run([Path("./a.py")], jobs=1).findings} == {"a.py"}
    assert {f.path for f in runner.run([project / "a.py"], jobs=1).findings} == {str(project / "a.py")}


def test_no_cache_reads_and_writes_nothing(project, linted):
    write(project, "a.py", BAD)
    lint(project, use_cache=False)
    assert not (project / cache.CACHE_DIR).exists()
    lint(project)
    linted.clear()
    lint(project, use_cache=False)
    assert linted == ["a.py"]


def test_cache_dir_option_moves_the_cache(project, tmp_path_factory, linted):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "cache"
    write(project, "a.py", BAD)
    lint(project, cache_dir=elsewhere)
    assert not (project / cache.CACHE_DIR).exists() and (elsewhere / "CACHEDIR.TAG").is_file()
    linted.clear()
    lint(project, cache_dir=elsewhere)
    assert linted == []


def test_damaged_pack_is_an_empty_one(project, linted):
    write(project, "a.py", BAD)
    first = lint(project)
    (pack,) = (project / cache.CACHE_DIR).glob("*.jsonl")
    pack.write_bytes(pack.read_bytes()[:40] + b"\xff\x00garbage\n")
    linted.clear()
    assert summary(lint(project)) == summary(first)
    assert linted == ["a.py"]
    linted.clear()
    lint(project)
    assert linted == []


def test_internal_errors_and_fixed_files_are_not_cached(project, linted, monkeypatch):
    write(project, "a.py", BAD)
    real = engine.lint_source
    monkeypatch.setattr(engine, "lint_source", lambda *a, **k: 1 / 0)
    assert lint(project).internal_errors
    monkeypatch.setattr(engine, "lint_source", real)
    linted.clear()
    assert lint(project, fix="safe").fixed == 1
    lint(project)
    assert linted == ["a.py", "a.py"]  # the fixed text is new bytes: linted again, then cached
    linted.clear()
    lint(project)
    assert linted == []


def test_fix_relints_a_cached_file_that_has_fixes(project, linted):
    write(project, "a.py", BAD)
    write(project, "b.py", CLEAN)
    lint(project)
    linted.clear()
    assert lint(project, fix="safe").fixed == 1
    assert linted == ["a.py"]
    assert "pad_to_max_length" not in (project / "a.py").read_text()


def test_saves_of_two_runs_merge(project):
    a, b = write(project, "a.py", BAD), write(project, "b.py", CLEAN)
    settings = runner.settings_for([project])
    first, second = cache.Cache(settings), cache.Cache(settings)
    for store, path in ((first, a), (second, b)):
        store.store(path, key(path, settings), [], [])
        store.save()
    fresh = cache.Cache(settings)
    assert fresh.lookup(a, key(a, settings)) == [] and fresh.lookup(b, key(b, settings)) == []


def key(path, settings):
    data = path.read_bytes()
    return cache.file_key(data, runner.target_of(settings, path, data))


def test_concurrent_runs_leave_a_valid_cache(project):
    for i in range(12):
        write(project, f"s{i}.py", BAD if i % 2 else CLEAN)
    command = [sys.executable, "-m", "bertlint", "--format", "json", "--jobs", "1", str(project)]
    runs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [1, 1, 1, 1], outputs
    assert len({out for out, _ in outputs}) == 1
    (pack,) = (project / cache.CACHE_DIR).glob("*.jsonl")
    for line in pack.read_text().splitlines():
        name, _, entry = line.partition("\t")
        json.loads(name), json.loads(entry)
    assert not list((project / cache.CACHE_DIR).glob("*.tmp"))


def test_a_save_prunes_gone_files_stale_packs_and_leftover_temp_files(project):
    _, b = write(project, "a.py", BAD), write(project, "b.py", BAD)
    lint(project)
    folder = project / cache.CACHE_DIR
    (pack,) = folder.glob("*.jsonl")
    week_ago = pack.stat().st_mtime - cache.STALE_PACK_SECONDS - 60
    old_pack, fresh_pack, old_tmp = folder / ("0" * 32 + ".jsonl"), folder / ("1" * 32 + ".jsonl"), folder / ".pack-x.tmp"
    for made in (old_pack, fresh_pack, old_tmp):
        made.write_text("")
    os.utime(old_pack, (week_ago, week_ago))
    os.utime(old_tmp, (week_ago, week_ago))
    os.utime(pack, (week_ago, week_ago))
    b.unlink()
    lint(project)  # all served from the cache: no save, but the pack is marked as in use
    assert pack.stat().st_mtime > week_ago + 3600 and old_pack.exists()
    write(project, "c.py", CLEAN)
    lint(project)
    assert sorted(p.name for p in folder.iterdir()) == sorted([".gitignore", "CACHEDIR.TAG", pack.name, fresh_pack.name])
    assert [json.loads(line.partition("\t")[0]) for line in pack.read_text().splitlines()] == ["a.py", "c.py"]


def test_clean_removes_only_bertlint_caches(project):
    write(project, "sub/a.py", BAD)
    lint(project)
    lint(project / "sub", isolated=True)
    impostor = project / "other" / cache.CACHE_DIR
    impostor.mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "bertlint", "clean"], cwd=project, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert not (project / cache.CACHE_DIR).exists() and not (project / "sub" / cache.CACHE_DIR).exists()
    assert impostor.is_dir()
    assert result.stdout.count("Removed") == 2


def test_an_unwritable_cache_is_no_error(project):
    write(project, "a.py", BAD)
    blocker = project / cache.CACHE_DIR
    blocker.write_text("not a folder")
    outcome = lint(project)
    assert not outcome.problems and not outcome.internal_errors
    assert [f.code for f in outcome.findings] == ["BL101"]
    assert os.path.isfile(blocker)


def test_a_run_the_cache_answers_never_loads_libcst(project):
    write(project, "a.py", BAD)
    command = [sys.executable, "-X", "importtime", "-m", "bertlint", "--format", "json", str(project)]
    first, second = (subprocess.run(command, capture_output=True, text=True, timeout=120) for _ in range(2))
    assert first.returncode == second.returncode == 1 and first.stdout == second.stdout
    imported = lambda run: {line.split("|")[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")}
    assert "libcst" in imported(first)
    assert not {m for m in imported(second) if m.split(".")[0] == "libcst"}


def test_rule_codes_come_from_module_names_that_match_the_rules():
    from bertlint.rules import ENGINE_CODES, all_codes, all_rules

    assert all_codes() == sorted(set(all_rules()) | set(ENGINE_CODES))
