"""BL501's run facts: Lightning's spelling of mixed precision by the target release (facts/brain/steps.py), and the help
that spells it for the file's Lightning."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import Facts, Runtime, lightning_spelling
from bertlint.facts.brain.steps import lightning_spellings
from bertlint.rules.bl501 import LIGHTNING_HELP, _lightning_help


@pytest.mark.parametrize("release, expected", [
    ((2, 6, 6), ('"bf16-mixed"', '"16-mixed"')),
    ((2, 0, 0), ('"bf16-mixed"', '"16-mixed"')),
    ((1, 9, 5), ('"bf16"', "16")),
    ((1, 5, 0), ('"bf16"', "16")),
    ((1, 4, 9), (None, "16")),  # bf16 came in 1.5
])
def test_lightning_spells_mixed_precision_by_release(release, expected):
    assert lightning_spellings(release) == expected


def facts_of(source: str, releases) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source, runtime=Runtime(releases=releases))


def test_the_spelling_is_that_of_the_trainer_s_own_library():
    pl = facts_of("import pytorch_lightning as pl\ntrainer = pl.Trainer(gpus=1)\ntrainer.fit(module)\n", (("pytorch-lightning", (1, 9, 5)), ("lightning", (2, 6, 6))))
    assert lightning_spelling(pl) == ((1, 9, 5), '"bf16"', "16")
    new = facts_of("import lightning as L\ntrainer = L.Trainer()\ntrainer.fit(module)\n", (("pytorch-lightning", (1, 9, 5)), ("lightning", (2, 6, 6))))
    assert lightning_spelling(new) == ((2, 6, 6), '"bf16-mixed"', '"16-mixed"')


def test_no_spelling_where_the_release_or_the_library_is_not_one():
    assert lightning_spelling(facts_of("import pytorch_lightning as pl\npl.Trainer().fit(module)\n", ())) is None
    both = facts_of("import lightning as L\nimport pytorch_lightning as pl\nL.Trainer().fit(module)\npl.Trainer().fit(module)\n", (("pytorch-lightning", (1, 9, 5)), ("lightning", (2, 6, 6))))
    assert lightning_spelling(both) is None


def test_the_help_gives_the_target_s_spelling_alone():
    assert "`precision=16`" in _lightning_help(False, ((1, 9, 5), '"bf16"', "16")) and "16-mixed" not in _lightning_help(False, ((1, 9, 5), '"bf16"', "16"))
    assert "bf16" not in _lightning_help(False, ((1, 4, 9), None, "16"))
    assert '"bf16-mixed"' in _lightning_help(True, ((2, 1, 0), '"bf16-mixed"', '"16-mixed"')) and '"16-mixed"' not in _lightning_help(True, ((2, 1, 0), '"bf16-mixed"', '"16-mixed"'))
    assert _lightning_help(False, None) == LIGHTNING_HELP  # not known: both spellings


LOOP = """
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("roberta-large")
MOVE
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for batch in torch.load("batches.pt"):
    model(**batch).loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("move, cpu", [
    ("", True),  # nothing leaves the CPU
    ("model = model.to(torch.float32)", True),  # a dtype, not a device
    ("model = model.cuda()", False),
    ('model.to(torch.device("cuda" if torch.cuda.is_available() else "cpu"))', False),
    ("model.to(0)", False),  # an accelerator's index
    ("model.to(config.where)", False),  # a place the file does not show
    ("model, optimizer = accelerator.prepare(model, optimizer)", False),
    ('torch.set_default_device("cuda")', False),
    ("output = None", True),  # a word holding the letters of one ("ou-t-p-u-t") names none
])
def test_a_hand_loop_runs_on_the_cpu_where_nothing_names_or_picks_a_device(move, cpu):
    from bertlint.facts import runs_on_cpu
    source = LOOP.replace("MOVE", move)
    assert runs_on_cpu(Facts(cst.parse_module(source), source)) is cpu


def test_a_trainer_places_the_model_itself():
    from bertlint.facts import runs_on_cpu
    source = LOOP.replace("MOVE", "from transformers import Trainer\nTrainer(model=model).train()")
    assert not runs_on_cpu(Facts(cst.parse_module(source), source))


TRAINER_RUN = """
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained("gpt2-large")
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4)
Trainer(model=model, args=args, train_dataset=load()).train()
"""


@pytest.mark.parametrize("version, bf16", [("4.5.0", False), ("4.12.0", False), ("4.13.0", True), ("5.23.0", True)])
def test_the_help_offers_bf16_only_where_training_arguments_has_it(version, bf16):
    """TrainingArguments' `bf16=` came in 4.13.0 (the 4.12.0 wheel's training_args.py has none): an older target is told
    `fp16=True` and `torch.cuda.amp.autocast()`, the switches it has."""
    from conftest import lint_text

    found = [f for f in lint_text(TRAINER_RUN, transformers_version=version) if f.code == "BL501"]
    assert len(found) == 1
    assert ("`bf16=True`" in found[0].help) is bf16
    assert ("`fp16=True`" in found[0].help) and (("torch.cuda.amp.autocast()" in found[0].help) is not bf16)
