"""Catalogue 3 (issue 24): BL311, BL312, BL405, BL505 — behaviour the fixtures do not pin down."""

from __future__ import annotations

import pytest

from bertlint import fixer
from conftest import lint_text


def only(code: str, source: str, **opts) -> list:
    return [f for f in lint_text(source, preview=True, **opts) if f.code == code]


# ---------------------------------------------------------------------------------------------- BL311

CONTROLS = """\
import torch
from transformers import AutoModelForSequenceClassification, get_scheduler
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters())
scheduler = get_scheduler("linear", optimizer, num_warmup_steps=0, num_training_steps=10)
{line}
"""


@pytest.mark.parametrize("line", ["model.eval", "model.train", "model.zero_grad", "optimizer.zero_grad", "optimizer.step", "scheduler.step",
                                  "torch.no_grad()", "torch.inference_mode()", "torch.enable_grad()", "model(x).loss.backward"])  # fmt: skip
def test_bl311_fires_on_each_control(line: str) -> None:
    [finding] = only("BL311", CONTROLS.format(line=line))
    assert finding.line == 6


@pytest.mark.parametrize("line", ["fn = model.eval", "print(optimizer.step)", "torch.set_grad_enabled(False)", "scheduler.eval", "model.step",
                                  "optimizer.backward", "model.eval()", "x = torch.no_grad()", "torch.no_grad", "model.config.eval"])  # fmt: skip
def test_bl311_silent_where_something_happens_or_the_role_does_not_fit(line: str) -> None:
    assert only("BL311", CONTROLS.format(line=line)) == []


def test_bl311_fix_adds_the_call_and_leaves_no_grad_alone() -> None:
    source = CONTROLS.format(line="model.eval\ntorch.no_grad()\noptimizer.step")
    fixed, _ = fixer.apply_edits(source, lint_text(source, preview=True), {"safe"})
    assert "model.eval()\ntorch.no_grad()\noptimizer.step()\n" in fixed
    assert [f.line for f in only("BL311", fixed)] == [7]


def test_bl311_loss_values_through_arithmetic_and_keys() -> None:
    source = """\
import torch
criterion = torch.nn.CrossEntropyLoss()
def step(model, x, y, out):
    loss = criterion(model(x), y) / 4
    loss.backward
    total = out["loss"]
    total.backward
    other = compute(x)
    other.backward
"""
    assert [f.line for f in only("BL311", source)] == [5, 7]


# ---------------------------------------------------------------------------------------------- BL312

LOOP = """\
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters())
for batch in loader:
{body}
"""


@pytest.mark.parametrize(
    ("body", "fires"),
    [
        (["clip", "backward", "step", "zero"], True),
        (["zero", "clip", "backward", "step"], True),
        (["backward", "step", "clip", "zero"], True),
        (["backward", "step", "zero", "clip"], True),
        (["zero", "backward", "clip", "step"], False),
        (["clip", "step", "zero", "backward"], False),  # the step at the top of the next iteration uses what the clip saw
        (["backward", "clip", "step", "zero"], False),
    ],
)
def test_bl312_order_in_the_loop(body: list[str], fires: bool) -> None:
    text = {"clip": "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "backward": "model(**batch).loss.backward()",
            "step": "optimizer.step()", "zero": "optimizer.zero_grad()"}  # fmt: skip
    source = LOOP.format(body="\n".join("    " + text[op] for op in body))
    assert bool(only("BL312", source)) is fires


def test_bl312_silent_when_backward_runs_only_on_some_iterations() -> None:
    body = "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n    if batch is not None:\n        model(**batch).loss.backward()\n    optimizer.step()"
    assert only("BL312", LOOP.format(body=body)) == []


# ---------------------------------------------------------------------------------------------- BL405

LOSS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F
{setup}
def step(logits, y):
    return {loss}
"""


@pytest.mark.parametrize(
    ("setup", "loss", "fires"),
    [
        ("", "F.cross_entropy(torch.softmax(logits, 1), y)", True),
        ("", "F.cross_entropy(logits.softmax(dim=-1), y)", True),
        ("", "F.nll_loss(F.softmax(logits, 1), y)", True),
        ("", "F.binary_cross_entropy_with_logits(logits.sigmoid(), y)", True),
        ("crit = nn.CrossEntropyLoss()", "crit(nn.Softmax(dim=1)(logits), y)", True),
        ("", "F.cross_entropy(F.log_softmax(logits, 1), y)", False),
        ("", "F.nll_loss(F.log_softmax(logits, 1), y)", False),
        ("", "F.binary_cross_entropy(torch.sigmoid(logits), y)", False),
        ("", "F.cross_entropy(logits, torch.softmax(y, 1))", False),  # soft targets may be probabilities
        ("", "F.mse_loss(torch.softmax(logits, 1), y)", False),
        ("", "F.nll_loss(logits, y)", False),  # logits of unknown origin: they may be log-probabilities
    ],
)
def test_bl405_what_the_loss_is_given(setup: str, loss: str, fires: bool) -> None:
    assert bool(only("BL405", LOSS.format(setup=setup, loss=loss))) is fires


def test_bl405_fix_passes_the_logits() -> None:
    source = LOSS.format(setup="", loss="F.cross_entropy(F.softmax(logits, dim=1), y)")
    fixed, _ = fixer.apply_edits(source, lint_text(source, preview=True), {"safe", "unsafe"})
    assert "return F.cross_entropy(logits, y)" in fixed and only("BL405", fixed) == []


def test_bl405_sequential_ending_in_softmax_and_log_softmax() -> None:
    source = """\
import torch.nn as nn
probs = nn.Sequential(nn.Linear(4, 3), nn.Softmax(dim=1))
logp = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(dim=1))
crit = nn.CrossEntropyLoss()
nll = nn.NLLLoss()
a = crit(probs(x), y)
b = nll(logp(x), y)
c = nll(nn.Linear(4, 3)(x), y)
"""
    assert [f.line for f in only("BL405", source)] == [6, 8]


# ---------------------------------------------------------------------------------------------- BL505

HALF = """\
import torch
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments
model = AutoModelForCausalLM.from_pretrained("gpt2", {dtype})
{between}
trainer = Trainer(model=model, args=TrainingArguments("out"){extra})
trainer.train()
"""


@pytest.mark.parametrize(
    ("dtype", "between", "extra", "fires"),
    [
        ("torch_dtype=torch.float16", "", "", True),
        ("dtype=torch.half", "", "", True),
        ('torch_dtype="float16"', "", "", True),
        ("torch_dtype=torch.bfloat16", "", "", False),
        ('torch_dtype="auto"', "", "", False),
        ("torch_dtype=torch.float16, load_in_8bit=True", "", "", False),
        ("torch_dtype=torch.float16", "model = model.float()", "", False),
        ("torch_dtype=torch.float16", "model.lm_head.requires_grad_(False)", "", False),
        ("torch_dtype=torch.float16", "", ", peft_config=config", False),
        ("torch_dtype=torch.float16", "import deepspeed", "", False),
    ],
)
def test_bl505_fp16_weights_the_trainer_trains(dtype: str, between: str, extra: str, fires: bool) -> None:
    assert bool(only("BL505", HALF.format(dtype=dtype, between=between, extra=extra))) is fires


def test_bl505_needs_the_trainer_to_train() -> None:
    source = HALF.format(dtype="torch_dtype=torch.float16", between="", extra="").replace("trainer.train()", "trainer.evaluate()")
    assert only("BL505", source) == []


def test_bl505_names_the_grad_scaler_error_under_fp16() -> None:
    source = HALF.format(dtype="torch_dtype=torch.float16", between="", extra="").replace('TrainingArguments("out")', 'TrainingArguments("out", fp16=True)')
    [finding] = only("BL505", source)
    assert "Attempting to unscale FP16 gradients." in finding.message
    [plain] = only("BL505", HALF.format(dtype="torch_dtype=torch.float16", between="", extra=""))
    assert "unscale" not in plain.message


def test_bl505_optimizer_over_a_part_is_silent() -> None:
    source = """\
import torch
from transformers import AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased").half()
optimizer = torch.optim.AdamW(model.classifier.parameters(), lr=1e-3)
for batch in loader:
    model(**batch).loss.backward()
    optimizer.step()
"""
    assert only("BL505", source) == []


def test_bl311_roles_from_use_in_a_helper() -> None:
    """A parameter the value layer cannot follow counts as a model when the same function calls it, as an optimizer
    when it runs the other optimizer method; a scheduler's `step()` alone makes nothing an optimizer."""
    source = """\
import torch
def evaluate(model, loader):
    model.eval
    return [model(x) for x in loader]
def train(optimizer, scheduler, loss):
    optimizer.zero_grad
    optimizer.step()
    scheduler.step()
    scheduler.step
    loss.backward
"""
    assert [f.line for f in only("BL311", source)] == [3, 6]


def test_bl505_a_project_model_cast_in_its_chain() -> None:
    source = """\
import torch
from transformers import AutoTokenizer
from mynets import TinyGPT
model = TinyGPT(64).to("cuda").half()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01{eps})
for batch in loader:
    model(batch).loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""
    [finding] = only("BL505", source.format(eps=""))
    assert finding.line == 4 and finding.column == 9
    assert only("BL505", source.format(eps=", eps=1e-4")) == []  # an eps chosen for float16


def test_bl312_silent_for_optimizers_that_clip_in_step() -> None:
    """BertAdam (pytorch_pretrained_bert) clips each parameter's gradient inside step(): the update is clipped anyway."""
    body = "    model(**batch).loss.backward()\n    optimizer.step()\n    optimizer.zero_grad()\n    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"
    source = LOOP.format(body=body)
    assert only("BL312", source)
    assert only("BL312", source.replace("torch.optim.AdamW(model.parameters())", "BertAdam(model.parameters(), lr=2e-5)")) == []
    assert only("BL312", source.replace("torch.optim.AdamW(model.parameters())", "MyAdam(model.parameters(), max_grad_norm=1.0)")) == []


def test_bl405_a_loss_only_reported_trains_nothing() -> None:
    source = """\
import torch
import torch.nn.functional as F
crit = torch.nn.CrossEntropyLoss()
def evaluate(logits, y):
    with torch.no_grad():
        a = crit(F.softmax(logits, 1), y)
    b = crit(F.softmax(logits, 1), y).item()
    return a, b, crit(F.softmax(logits, 1), y)
"""
    assert [f.line for f in only("BL405", source)] == [8]


def test_bl311_backward_named_in_a_training_step() -> None:
    """`loss.backward` on a value of a function that also steps an optimizer: the loss of a criterion passed in, or a
    model output's first element; a name that is a parameter, or a function that updates nothing, stays silent."""
    source = """\
import torch
def fit(model, loader, criterion, optimizer, given):
    for batch in loader:
        loss = criterion(model(batch))
        loss.backward
        first = model(batch)[0]
        first.backward
        given.backward
        optimizer.step()
def look(x, crit):
    value = crit(x)
    value.backward
"""
    assert [f.line for f in only("BL311", source)] == [5, 7]
