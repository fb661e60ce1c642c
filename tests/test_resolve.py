"""An unpinned library's release, as a resolver installing every pin of the project takes it (resolve.py): the newest
release whose own requirements admit each pinned release of transformers and of the libraries around it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import resolve, versions
from bertlint import target as stage
from bertlint.cli import main
from bertlint.config import load_settings
from bertlint.rules import all_codes

SFT_SCRIPT = """\
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainingArguments
from trl import SFTTrainer

model = AutoModelForCausalLM.from_pretrained("facebook/opt-350m")
tokenizer = AutoTokenizer.from_pretrained("facebook/opt-350m")
trainer = SFTTrainer(model, train_dataset=dataset, tokenizer=tokenizer, args=TrainingArguments(output_dir="opt-sft"))
"""
LOAD_METRIC = "from datasets import load_metric\n\nmetric = load_metric('seqeval')\n"
PIN = "the pin {}=={} in requirements.txt"


@pytest.fixture(autouse=True)
def project(pinned_project):
    return pinned_project


def target(path: Path) -> stage.Target:
    settings = load_settings(path.parent, all_codes())
    return stage.target_version(settings, path, path.read_text(encoding="utf-8"))


def codes(path: Path, select: str) -> list[tuple[str, str]]:
    result = CliRunner().invoke(main, ["--format", "json", "--preview", "--no-cache", "--select", select, path.name], catch_exceptions=False)
    return [(f["code"], f["severity"]) for f in json.loads(result.stdout)]


def test_a_pin_of_another_library_excludes_the_newest_release_that_admits_transformers(project):
    # trl 0.12 requires accelerate>=0.34.0, 0.11 transformers>=4.40.0: pip takes trl 0.10.1 (its wheel: transformers>=4.31.0);
    # no trl release bounds peft, so its pin goes unsaid
    (project / "requirements.txt").write_text("transformers==4.39.3\npeft==0.10.0\naccelerate==0.28.0\n")
    script = project / "sft.py"
    script.write_text(SFT_SCRIPT)
    assert target(script).of("trl") == ((0, 10, 0), "trl 0.10, the newest release whose own requirement transformers>=4.31.0 admits "
                                        f"transformers 4.39.3 ({PIN.format('transformers', '4.39.3')}) and accelerate 0.28 "
                                        f"({PIN.format('accelerate', '0.28.0')})")
    assert codes(script, "BL614") == []  # trl 0.10 takes tokenizer= as its own


def test_a_pin_that_the_newest_release_admits_changes_nothing(project):
    (project / "requirements.txt").write_text("transformers==4.39.3\naccelerate==0.34.2\n")
    script = project / "sft.py"
    script.write_text(SFT_SCRIPT)
    assert target(script).of("trl")[0] == (0, 12, 0)  # trl 0.12.2 requires accelerate>=0.34.0 and transformers<4.47.0
    assert codes(script, "BL614") == [("BL614", "warning")]  # processing_class= in 0.12: deprecated, not removed


def test_where_the_table_cannot_tell_of_the_other_pins_transformers_alone_decides(project, monkeypatch):
    real = resolve.newest_admitting
    monkeypatch.setattr(resolve, "newest_admitting", lambda library, pins, *rest: None if len(pins) > 1 else real(library, pins, *rest))
    (project / "requirements.txt").write_text("transformers==4.39.3\naccelerate==0.28.0\n")
    script = project / "sft.py"
    script.write_text(SFT_SCRIPT)
    assert target(script).of("trl")[0] == (0, 12, 0)  # as before accelerate's pin counted
    assert codes(script, "BL614") == [("BL614", "warning")]


def test_a_pinned_hub_takes_the_datasets_release_that_admits_it_without_a_transformers_pin(project):
    script = project / "metrics.py"
    script.write_text(LOAD_METRIC)
    (project / "requirements.txt").write_text("huggingface-hub==0.4.0\n")
    # datasets 2.11 requires huggingface-hub>=0.11.0, 2.10.1 huggingface-hub>=0.2.0,<1.0.0
    assert target(script).of("datasets") == ((2, 10, 0), "datasets 2.10, the newest release whose own requirement huggingface_hub<1.0.0,"
                                             f">=0.2.0 admits huggingface_hub 0.4 ({PIN.format('huggingface-hub', '0.4.0')})")
    assert codes(script, "BL612") == []  # load_metric is still there before datasets 3.0
    (project / "requirements.txt").write_text("huggingface-hub\n")  # no release pinned: the newest datasets
    assert target(script).of("datasets") == (versions.latest("datasets"), stage.LATEST)
    assert [code for code, _ in codes(script, "BL612")] == ["BL612"]


def test_an_installed_library_is_kept_only_where_it_admits_every_pin(project, monkeypatch):
    (project / "requirements.txt").write_text("transformers==4.39.3\naccelerate==0.28.0\n")
    for installed, kept in (((0, 9, 6), True), ((0, 12, 2), False), ((0, 11, 4), False)):
        monkeypatch.setattr(stage, "_installed_in", lambda paths, library: installed if library == "trl" else None)
        found = target(project / "requirements.txt").of("trl")
        assert found == (installed, "the installed trl package") if kept else found[0] == (0, 10, 0)


def test_the_requirement_of_a_pinned_release_is_read_only_where_the_table_lists_it():
    assert versions.requirement_of("trl", (0, 12, 0), "accelerate") == ">=0.34.0"
    assert versions.requirement_of("trl", (0, 12, 0), "peft") == ""  # an extra only: no bound
    assert versions.requirement_of("trl", (0, 12, 1), "accelerate") is None  # between the ends of its minor: not listed
    assert versions.bounded_by("datasets") == {"huggingface_hub"} and versions.bounded_by("nothing") == frozenset()
    pins = (("accelerate", (0, 28, 0)), ("transformers", (4, 39, 3)))
    assert versions.newest_admitting("trl", pins, (1, 16, 0)) == ((0, 10, 0), {"transformers": ">=4.31.0"})
    assert versions.newest_admitting("trl", pins, (1, 16, 0), ">=0.11") is None  # what a pinned release requires excludes them all
