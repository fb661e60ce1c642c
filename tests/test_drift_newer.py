"""BL610 (a keyword newer than the target) and BL611 (a tokenizer attribute the target removed): the same
tables as BL601/BL602, read the other way; pinned the way users pin (requirements.txt, a notebook cell)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import target as stage
from bertlint import versions
from bertlint.cli import main
from conftest import lint_text
from test_drift_rules import fixed, status

TA = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', {kw})\n"
TRAINER = "from transformers import Trainer\ntrainer = Trainer(model=m, {kw})\n"


def _before(version: versions.Version) -> str:
    """The newest release before `version` that the tables know (4.41 -> 4.40, 5.0 -> 4.57)."""
    major, minor = version[0], version[1]
    if minor:
        return f"{major}.{minor - 1}"
    return f"{major - 1}.{versions.data()['releases'][str(major - 1)]}"


# --------------------------------------------------------------------------- BL610


@pytest.mark.parametrize(
    ("group", "name"),
    [(group, name) for group in ("TrainingArguments", "Trainer") for name, e in versions.keywords(group)[0].items() if e.added],
)
def test_bl610_every_added_row_fires_before_and_is_silent_from_it(group, name):
    entry = versions.keywords(group)[0][name]
    source = (TA if group == "TrainingArguments" else TRAINER).format(kw=f"{name}=x")
    assert [s for s, _ in status(source, _before(entry.added), "BL610")] == ["error"]
    assert status(source, versions.show(entry.added), "BL610") == []


@pytest.mark.parametrize(
    ("source", "version", "expected"),
    [
        (TA.format(kw="eval_strategy='epoch'"), "4.40", [("error", True)]),
        (TA.format(kw="eval_strategy='epoch'"), "4.41", []),
        (TA.format(kw="use_cpu=True"), "4.31", [("error", True)]),
        (TA.format(kw="include_for_metrics=['inputs']"), "4.45", [("error", False)]),  # another value: no rename
        (TA.format(kw="train_sampling_strategy='group_by_length'"), "5.1", [("error", False)]),
        (TA.format(kw="eval_strategy='epoch', evaluation_strategy='epoch'"), "4.40", [("error", False)]),  # no duplicate keyword
        (TA.format(kw="eval_strategy='epoch', **extra"), "4.40", [("error", False)]),
        (TA.format(kw="evaluation_strategy='epoch'"), "3.1", [("error", False)]),  # evaluate_during_training takes a bool
        (TRAINER.format(kw="processing_class=tok"), "4.45", [("error", True)]),
        (TRAINER.format(kw="processing_class=tok"), "4.46", []),
    ],
)
def test_bl610_by_version(source, version, expected):
    assert status(source, version, "BL610") == expected


def test_bl610_fix_uses_the_target_s_spelling_and_the_message_names_both_versions():
    source = TA.format(kw="eval_strategy='epoch'") + TRAINER.format(kw="processing_class=tok")
    assert fixed(source, "4.40", "BL610") == (
        TA.format(kw="evaluation_strategy='epoch'") + TRAINER.format(kw="tokenizer=tok")
    )
    [finding] = [f for f in lint_text(TA.format(kw="eval_strategy='epoch'"), transformers_version="4.40") if f.code == "BL610"]
    assert finding.message.startswith("`eval_strategy` was added in transformers 4.41, after the target 4.40")
    assert "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'eval_strategy'" in finding.message


def test_bl610_a_fixed_file_is_clean_for_bl601_too():
    """The rename goes to the spelling the target accepts without a warning: no ping-pong with BL601."""
    text = fixed(TA.format(kw="eval_strategy='epoch'"), "4.40", "BL610")
    assert [f.code for f in lint_text(text, transformers_version="4.40") if f.code.startswith("BL6")] == []


def test_bl610_local_subclass_that_names_the_keyword_is_its_own_business():
    source = """
        from transformers import Trainer
        class Mine(Trainer):
            def __init__(self, processing_class=None, **kwargs):
                super().__init__(tokenizer=processing_class, **kwargs)
        class Forward(Trainer):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
        m = tok = None  # defined: an undefined name would stop the run before the calls
        Mine(model=m, processing_class=tok)
        Forward(model=m, processing_class=tok)
    """
    [finding] = [f for f in lint_text(source, transformers_version="4.40") if f.code == "BL610"]
    assert finding.line == 11


# --------------------------------------------------------------------------- BL611

TOK = "from transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained({ckpt!r})\n"


@pytest.mark.parametrize(
    ("use", "ckpt", "version", "expected"),
    [
        ("print(tokenizer.max_len)", "bert-base-uncased", "3.5", []),
        ("print(tokenizer.max_len)", "bert-base-uncased", "4.0", [("error", True)]),
        ("print(tokenizer.max_len)", "bert-base-uncased", "5.23", [("error", True)]),
        ("tokenizer.prepare_seq2seq_batch(['a'])", "t5-small", "4.57", []),
        ("tokenizer.prepare_seq2seq_batch(['a'])", "t5-small", "5.0", [("error", False)]),
        ("tokenizer.prepare_seq2seq_batch(['a'])", "facebook/nllb-200-distilled-600M", "5.0", []),  # NLLB keeps its own
        ("tokenizer.sanitize_special_tokens()", "gpt2", "4.57", []),
        ("tokenizer.sanitize_special_tokens()", "gpt2", "5.0", [("error", False)]),
        ("tokenizer.all_special_tokens_extended", "gpt2", "5.0", [("error", False)]),
        ("tokenizer.all_special_tokens", "gpt2", "5.0", []),
    ],
)
def test_bl611_by_version(use, ckpt, version, expected):
    assert status(TOK.format(ckpt=ckpt) + use + "\n", version, "BL611") == expected


def test_bl611_unknown_checkpoint_of_a_family_that_keeps_it_is_silent():
    source = "import sys\nfrom transformers import AutoTokenizer\ntokenizer = AutoTokenizer.from_pretrained(sys.argv[1])\n"
    assert status(source + "tokenizer.prepare_seq2seq_batch(['a'])\n", "5.0", "BL611") == []
    assert status(source + "print(tokenizer.max_len)\n", "5.0", "BL611") == [("error", True)]  # no family keeps max_len


def test_bl611_only_tokenizers_and_not_the_file_s_own_method():
    source = """
        from transformers import AutoTokenizer
        class Config:
            max_len = 128
        print(Config().max_len)
        class Wrapper:
            def prepare_seq2seq_batch(self, texts):
                return texts
        Wrapper().prepare_seq2seq_batch(["a"])
    """
    assert status(source, "5.0", "BL611") == []


def test_bl611_fix_and_message():
    source = TOK.format(ckpt="bert-base-uncased") + "n = tokenizer.max_len\n"
    assert fixed(source, "4.30", "BL611").endswith("n = tokenizer.model_max_length\n")
    [finding] = [f for f in lint_text(source, transformers_version="4.30") if f.code == "BL611"]
    assert finding.message == (
        "`tokenizer.max_len` was removed in 4.0 (target 4.30 from transformers-version in the settings): "
        "this line raises AttributeError: ... has no attribute 'max_len'"
    )


def test_tokenizer_table_is_consistent():
    entries, templates = versions.symbols("tokenizer")
    assert "{name}" in templates["attribute_error"]
    for entry in entries:
        assert entry.source and entry.removed, entry.name
        assert entry.rename or entry.extra.get("help"), entry.name  # a fix, or advice


# --------------------------------------------------------------------------- pinned the way users pin


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: None)
    return tmp_path


def _run(path: Path) -> list[dict]:
    result = CliRunner().invoke(main, ["--format", "json", "--preview", "--select", "BL610,BL611", str(path.name)], catch_exceptions=False)
    return json.loads(result.stdout)


def test_requirements_pin_decides_both_ways(project):
    script = project / "train.py"
    script.write_text(TA.format(kw="eval_strategy='epoch'") + TOK.format(ckpt="t5-small") + "print(tokenizer.max_len)\n")
    (project / "requirements.txt").write_text("transformers==4.40.2\n")
    assert [(f["code"], f["line"]) for f in _run(script)] == [("BL610", 2), ("BL611", 5)]
    assert "target 4.40.2 from the pin transformers==4.40.2 in requirements.txt" in _run(script)[0]["message"]
    (project / "requirements.txt").write_text("transformers==3.5.1\n")
    assert [(f["code"], f["line"]) for f in _run(script)] == [("BL610", 2)]
    (project / "requirements.txt").write_text("transformers>=4.41,<4.42\n")
    assert [(f["code"], f["line"]) for f in _run(script)] == [("BL611", 5)]


def test_notebook_install_cell_decides(project):
    def notebook(pin: str) -> dict:
        return {"cells": [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [f"!pip install -q transformers=={pin} datasets"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": textwrap.dedent(TRAINER.format(kw="processing_class=tok")).splitlines(keepends=True)},
        ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}

    path = project / "train.ipynb"
    path.write_text(json.dumps(notebook("4.44.2")))
    [finding] = _run(path)
    assert finding["code"] == "BL610" and "target 4.44.2 from the pin transformers==4.44.2 in cell 1" in finding["message"]
    path.write_text(json.dumps(notebook("4.46.0")))
    assert _run(path) == []


# --------------------------------------------------------------------------- BL617

WORDS = "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-cased')\nenc = tok(['a', 'b'], {kw})\n"


@pytest.mark.parametrize(
    ("kw", "version", "expected"),
    [
        ("is_pretokenized=True", "3.1", []),
        ("is_pretokenized=True", "3.2", [("warning", True)]),
        ("is_pretokenized=True", "4.0", [("error", True)]),
        ("is_pretokenized=True", "5.23", [("error", True)]),
        ("is_pretokenized=True, is_split_into_words=True", "5.23", [("error", False)]),
        ("is_split_into_words=True", "3.1", [("warning", True)]),
        ("is_split_into_words=True", "3.2", []),
        ("**{'is_pretokenized': True}", "4.0", [("error", True)]),  # a `**` display's key, reaching this call alone
        ("**{'is_pretokenized': True}, is_split_into_words=True", "4.0", [("error", False)]),  # the new name passed already
        ("**{'is_split_into_words': True}", "4.0", []),
    ],
)
def test_bl617_by_version(kw, version, expected):
    assert status(WORDS.format(kw=kw), version, "BL617") == expected


def test_bl617_message_says_what_the_target_does():
    [v5] = [f for f in lint_text(WORDS.format(kw="is_pretokenized=True"), transformers_version="5.2") if f.code == "BL617"]
    assert "was removed in 4.0" in v5.message and "ignores it silently" in v5.message
    [v4] = [f for f in lint_text(WORDS.format(kw="is_pretokenized=True"), transformers_version="4.30") if f.code == "BL617"]
    assert "fast tokenizers raise TypeError: ... got an unexpected keyword argument 'is_pretokenized'" in v4.message
    assert fixed(WORDS.format(kw="is_pretokenized=True"), "5.2", "BL617") == WORDS.format(kw="is_split_into_words=True")


def test_bl611_removed_target_context_managers():
    header = "from transformers import AutoTokenizer, AutoProcessor\ntok = AutoTokenizer.from_pretrained('t5-small')\n"
    source = header + 'with tok.as_target_tokenizer():\n    labels = tok(["a"])\nwith processor.as_target_processor():\n    labels = processor(["b"])\n'
    found = [f for f in lint_text(source, transformers_version="5.0") if f.code == "BL611"]
    assert [f.line for f in found] == [3, 5] and all(f.fix is None for f in found)
    assert "text_target=" in found[0].help and "processor(text=...)" in found[1].help
    assert "`as_target_tokenizer` was removed in 5.0" in found[0].message
    assert status(source, "4.57", "BL611") == []
    own = source + "class Mine:\n    def as_target_tokenizer(self):\n        return self\n"
    assert [f.line for f in lint_text(own, transformers_version="5.0") if f.code == "BL611"] == [5]
