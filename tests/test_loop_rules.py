"""The training-loop fact and the rules built on it: BL302-BL305, BL503 (and its fix), BL504."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint import fixer
from bertlint.facts import UNKNOWN, Facts
from conftest import codes, lint_text


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def kind_of(facts: Facts, name: str) -> str | None:
    """The kind of `name` where the file last uses it."""
    use = [c for c in facts.calls if isinstance(c.node.func, cst.Attribute) and isinstance(c.receiver, cst.Name) and c.receiver.value == name][-1]
    found = facts.kind(use.receiver, use.scope, use.order)
    return found.kind if found else None


HEADER = """\
import torch
from torch.optim import AdamW
from transformers import AutoModelForSequenceClassification

model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = AdamW(model.parameters(), lr=2e-5)
ACCUM = 4
"""


def loop_script(body: str, header: str = HEADER) -> str:
    """A training loop over `loader` with `body` (indented by 4) as its body."""
    return header + "for step, batch in enumerate(loader):\n" + textwrap.indent(textwrap.dedent(body), "    ")


# --- facts -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "construct, kind",
    [
        ("from torch import optim\nopt = optim.SGD(params, lr=0.1)", "optimizer"),
        ("import bitsandbytes as bnb\nopt = bnb.optim.AdamW8bit(params, lr=2e-5)", "optimizer"),
        ("from transformers import Adafactor\nopt = Adafactor(params, lr=1e-3, relative_step=False)", "optimizer"),
        ("import tensorflow as tf\nopt = tf.keras.optimizers.Adam(1e-5)", "optimizer"),
        ("import torch\nopt = torch.optim.lr_scheduler.LambdaLR(o, lambda s: 1.0)", "scheduler"),  # stepped like an optimizer, but none
        ("import tensorflow as tf\nopt = tf.keras.optimizers.schedules.ExponentialDecay(1e-3, 100, 0.9)", None),
        ("from accelerate import Accelerator\nopt = Accelerator()", "accelerator"),
    ],
)
def test_object_kinds(construct: str, kind: str | None) -> None:
    assert kind_of(facts_of(construct + "\nopt.step()\n"), "opt") == kind


def test_accelerate_prepare_keeps_the_kind() -> None:
    facts = facts_of(
        """
        import torch
        from accelerate import Accelerator
        accelerator = Accelerator()
        optimizer = torch.optim.AdamW(params, lr=2e-5)
        net, opt, dl = accelerator.prepare(model, optimizer, loader)
        single = accelerator.prepare(optimizer)
        opt.step()
        single.step()
        dl.step()
        """
    )
    assert (kind_of(facts, "opt"), kind_of(facts, "single"), kind_of(facts, "dl")) == ("optimizer", "optimizer", None)


def test_parameter_kind_comes_from_agreeing_call_sites() -> None:
    source = """
        import torch
        def train(optimizer):
            optimizer.step()
        train(torch.optim.SGD(params, lr=0.1))
        """
    assert kind_of(facts_of(source), "optimizer") == "optimizer"
    assert kind_of(facts_of(source + "train(make_optimizer())\n"), "optimizer") is None


def test_training_loop_fact() -> None:
    facts = facts_of(
        loop_script(
            """
            is_update = (step + 1) % ACCUM == 0
            loss = model(**batch).loss
            loss /= ACCUM
            loss.backward()
            if is_update:
                optimizer.step()
                optimizer.zero_grad()
            """
        )
    )
    (loop,) = facts.training_loops
    assert (loop.framework, len(loop.steps), len(loop.backward), loop.zeroed) == ("torch", 1, 1, True)
    assert loop.accumulation_steps == 4 and facts.text(loop.accumulation_expr) == "ACCUM"
    assert loop.loss_divided is True and loop.every_iteration_zero_grads == [] and not loop.accelerate


def test_accumulation_by_one_is_no_accumulation() -> None:
    (loop,) = facts_of(loop_script("model(**batch).loss.backward()\nif step % 1 == 0:\n    optimizer.step()\n")).training_loops
    assert loop.gate is None and loop.accumulation_steps is UNKNOWN


def test_loss_through_a_local_helper_is_unknown() -> None:
    source = loop_script(
        "loss = compute(batch)\nloss.backward()\nif step % ACCUM == 0:\n    optimizer.step()\n    optimizer.zero_grad()\n",
        HEADER + "def compute(batch):\n    return model(**batch).loss / ACCUM\n",
    )
    (loop,) = facts_of(source).training_loops
    assert loop.loss_divided is None


# --- BL302 -------------------------------------------------------------------------------------


def test_bl302_zero_grad_every_iteration_with_gated_step() -> None:
    findings = lint_text(loop_script("optimizer.zero_grad()\n(model(**batch).loss / ACCUM).backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n"))
    assert codes(findings) == ["BL302"]
    assert (findings[0].line, "every 4 iterations" in findings[0].message) == (9, True)


def test_bl302_model_zero_grad_after_the_gate() -> None:
    source = loop_script("(model(**batch).loss / ACCUM).backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\nmodel.zero_grad()\n")
    assert codes(lint_text(source)) == ["BL302"]


@pytest.mark.parametrize(
    "body",
    [
        # reset inside the gate: correct accumulation
        "(model(**batch).loss / ACCUM).backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n    optimizer.zero_grad()\n",
        # reset at the start of each window
        "if step % ACCUM == 0:\n    optimizer.zero_grad()\n(model(**batch).loss / ACCUM).backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n",
        # no accumulation: step and reset every iteration
        "optimizer.zero_grad()\nmodel(**batch).loss.backward()\noptimizer.step()\n",
        # a `continue` decides what runs: stay silent
        "optimizer.zero_grad()\n(model(**batch).loss / ACCUM).backward()\nif (step + 1) % ACCUM != 0:\n    continue\nelse:\n    optimizer.step()\n",
    ],
)
def test_bl302_silent(body: str) -> None:
    assert "BL302" not in codes(lint_text(loop_script(body)))


TF_ACCUMULATION = """\
import tensorflow as tf
from transformers import TFAutoModelForSequenceClassification

model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
optimizer = tf.keras.optimizers.Adam(learning_rate=2e-5)
accum_steps = 4
{before}
for step, batch in enumerate(train_dataset):
    with tf.GradientTape() as tape:
        loss = model(batch, training=True).loss
    grads = tape.gradient(loss, model.trainable_variables)
{inside}
    for i in range(len(acc)):
        acc[i] += grads[i] / accum_steps
    if (step + 1) % accum_steps == 0:
        optimizer.apply_gradients(zip(acc, model.trainable_variables))
        acc = [tf.zeros_like(v) for v in model.trainable_variables]
"""


def test_bl302_tf_accumulator_recreated_each_step() -> None:
    source = TF_ACCUMULATION.format(before="", inside="    acc = [tf.zeros_like(g) for g in grads]")
    findings = lint_text(source, transformers_version="4.40")
    assert [(f.code, f.line) for f in findings] == [("BL302", 12)]


def test_bl302_tf_accumulator_created_once() -> None:
    source = TF_ACCUMULATION.format(before="acc = [tf.zeros_like(v) for v in model.trainable_variables]", inside="")
    assert codes(lint_text(source, transformers_version="4.40")) == []


# --- BL303 -------------------------------------------------------------------------------------


def test_bl303_no_zero_grad() -> None:
    findings = lint_text(loop_script("model(**batch).loss.backward()\noptimizer.step()\n"))
    assert [(f.code, f.line, f.column) for f in findings] == [("BL303", 10, 5)]


def test_bl303_zero_grad_only_before_the_loop() -> None:
    source = loop_script("model(**batch).loss.backward()\noptimizer.step()\n", HEADER + "optimizer.zero_grad()\n")
    assert codes(lint_text(source)) == ["BL303"]


@pytest.mark.parametrize(
    "body, header",
    [
        ("model(**batch).loss.backward()\noptimizer.step()\nmodel.zero_grad()\n", HEADER),
        ("optimizer.zero_grad(set_to_none=True)\nmodel(**batch).loss.backward()\noptimizer.step()\n", HEADER),
        ("model(**batch).loss.backward()\noptimizer.step()\nfor p in model.parameters():\n    p.grad = None\n", HEADER),
        ("model(**batch).loss.backward()\noptimizer.step()\nfor p in model.parameters():\n    p.grad.mul_(0)\n", HEADER),
        ("grads = torch.autograd.grad(model(**batch).loss, params)\nfor p, g in zip(params, grads):\n    p.grad = g\noptimizer.step()\n", HEADER),
        ("with dist_autograd.context() as cid:\n    dist_autograd.backward(cid, [model(**batch).loss])\n    optimizer.step(cid)\n",
         HEADER + "import torch.distributed.autograd as dist_autograd\n"),
        ("model(**batch).loss.backward()\noptimizer.step()\nreset()\n", HEADER + "def reset():\n    for p in model.parameters():\n        p.grad.zero_()\n"),
        # once per epoch: not BL303's business
        ("model(**batch).loss.backward()\noptimizer.step()\n", HEADER + "for epoch in range(3):\n    optimizer.zero_grad()\n"),
    ],
)
def test_bl303_silent(body: str, header: str) -> None:
    if "for epoch" in header:  # nest the batch loop in the epoch loop
        source = header + "    for step, batch in enumerate(loader):\n" + textwrap.indent(body, "        ")
    else:
        source = loop_script(body, header)
    assert "BL303" not in codes(lint_text(source))


def test_bl303_silent_under_accelerate() -> None:
    source = """
        from accelerate import Accelerator
        import torch
        accelerator = Accelerator()
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for batch in loader:
            accelerator.backward(model(**batch).loss)
            optimizer.step()
        """
    assert "BL303" not in codes(lint_text(source))


# --- BL304 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "manager, extra",
    [
        ('torch.autocast("cuda")', ""),
        ('torch.autocast(device_type="cuda", dtype=torch.float16)', ""),
        ("torch.cuda.amp.autocast()", ""),
        ('torch.amp.autocast("cuda", dtype=AMP_DTYPE)', "AMP_DTYPE = torch.float16\n"),
        ("torch.cuda.amp.autocast(enabled=USE_AMP)", "USE_AMP = True\n"),
    ],
)
def test_bl304_fp16_autocast_in_training(manager: str, extra: str) -> None:
    body = f"with {manager}:\n    loss = model(**batch).loss\nloss.backward()\noptimizer.step()\noptimizer.zero_grad()\n"
    assert codes(lint_text(loop_script(body, HEADER + extra))) == ["BL304"]


@pytest.mark.parametrize(
    "manager, extra",
    [
        ('torch.autocast("cuda", dtype=torch.bfloat16)', ""),
        ('torch.autocast("cpu")', ""),
        ("torch.cuda.amp.autocast(enabled=False)", ""),
        ('torch.autocast(device_type=device.type)', ""),  # device unknown: dtype unknown
        ('torch.autocast("cuda")', 'scaler = torch.amp.GradScaler("cuda")\n'),
        ('torch.autocast("cuda")', "from accelerate import Accelerator\naccelerator = Accelerator()\n"),
    ],
)
def test_bl304_silent(manager: str, extra: str) -> None:
    body = f"with {manager}:\n    loss = model(**batch).loss\nloss.backward()\noptimizer.step()\noptimizer.zero_grad()\n"
    assert "BL304" not in codes(lint_text(loop_script(body, HEADER + extra)))


@pytest.mark.parametrize(
    "backward",
    [
        "self_scaler.scale(loss).backward()",  # a scaler made elsewhere
        "trainer.scaler.scale(loss).backward()",
        "engine.backward(loss)",  # DeepSpeed, Fabric, an Accelerator passed in: they scale in fp16 themselves
        "with amp.scale_loss(loss, optimizer) as scaled:\n    scaled.backward()",
    ],
)
def test_bl304_silent_when_the_backward_goes_through_a_scaler(backward: str) -> None:
    body = f'with torch.autocast("cuda"):\n    loss = model(**batch).loss\n{backward}\noptimizer.step()\noptimizer.zero_grad()\n'
    assert "BL304" not in codes(lint_text(loop_script(body, HEADER + "from apex import amp\n")))


def test_bl304_autocast_around_the_whole_loop() -> None:
    source = HEADER + 'with torch.autocast("cuda", dtype=torch.float16):\n    for batch in loader:\n        model(**batch).loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n'
    assert codes(lint_text(source)) == ["BL304"]


def test_bl304_silent_for_inference() -> None:
    source = HEADER + 'model.eval()\nwith torch.no_grad(), torch.autocast("cuda"):\n    for batch in loader:\n        preds = model(**batch).logits.argmax(-1)\n'
    assert codes(lint_text(source)) == []


# --- BL305 -------------------------------------------------------------------------------------


SGD_HEADER = HEADER.replace("from torch.optim import AdamW", "from torch.optim import SGD").replace("AdamW(model.parameters(), lr=2e-5)", "SGD(model.parameters(), lr=1e-3, momentum=0.9)")
UNDIVIDED = "loss = model(**batch).loss\nloss.backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n    optimizer.zero_grad()\n"


def test_bl305_undivided_loss() -> None:
    findings = lint_text(loop_script(UNDIVIDED, SGD_HEADER))
    assert [(f.code, f.line) for f in findings] == [("BL305", 10)]
    assert "4× too large" in findings[0].message and "loss / ACCUM" in findings[0].help


@pytest.mark.parametrize("optimizer", [
    "AdamW(model.parameters(), lr=2e-5)",  # scale-invariant: the sum's update is the mean's
    "make_optimizer(model)",  # unknown: silent
])
def test_bl305_silent_for_adaptive_or_unknown_optimizers(optimizer: str) -> None:
    header = HEADER.replace("AdamW(model.parameters(), lr=2e-5)", optimizer)
    assert codes(lint_text(loop_script(UNDIVIDED, header))) == []


@pytest.mark.parametrize(
    "loss",
    ["loss = model(**batch).loss / ACCUM", "loss = model(**batch).loss\nloss = loss / ACCUM", "loss = model(**batch).loss.div(ACCUM)"],
)
def test_bl305_silent_when_divided(loss: str) -> None:
    body = f"{loss}\nloss.backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n    optimizer.zero_grad()\n"
    assert codes(lint_text(loop_script(body))) == []


def test_bl305_silent_when_gradients_are_reset_every_iteration() -> None:
    # zero_grad() on every micro-batch: nothing is summed, so the undivided loss is not the bug (BL302 is)
    body = "optimizer.zero_grad()\nloss = model(**batch).loss\nloss.backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n    optimizer.zero_grad()\n"
    assert codes(lint_text(loop_script(body))) == ["BL302"]


def test_bl305_silent_with_accelerate_accumulate() -> None:
    source = """
        import torch
        from accelerate import Accelerator
        accelerator = Accelerator(gradient_accumulation_steps=4)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
        model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
        for step, batch in enumerate(loader):
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                if step % 4 == 0:
                    optimizer.step()
                optimizer.zero_grad()
        """
    assert codes(lint_text(source)) == []


# --- BL503 -------------------------------------------------------------------------------------

INFERENCE = """\
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
model.eval()
"""


def test_bl503_forward_without_no_grad() -> None:
    source = INFERENCE + 'enc = tokenizer(["a b", "c"], padding=True, return_tensors="pt")\nlogits = model(**enc).logits\n'
    findings = lint_text(source)
    assert [(f.code, f.line, f.column) for f in findings] == [("BL503", 8, 10)]


@pytest.mark.parametrize(
    "tail",
    [
        "with torch.no_grad():\n    logits = model(**enc).logits\n",
        "with torch.inference_mode():\n    logits = model(**enc).logits\n",
        "@torch.no_grad()\ndef predict(enc):\n    return model(**enc).logits\n",
        "def predict(enc):\n    return model(**enc).logits\nwith torch.no_grad():\n    predict(enc)\n",
        "ids = model.generate(**enc, max_new_tokens=20)\n",
        "class Wrapper(torch.nn.Module):\n    def forward(self, enc):\n        return model(**enc)\n",
        "torch.set_grad_enabled(False)\nlogits = model(**enc).logits\n",
    ],
)
def test_bl503_silent(tail: str) -> None:
    source = INFERENCE + 'enc = tokenizer(["a b", "c"], padding=True, return_tensors="pt")\n' + tail
    assert codes(lint_text(source)) == []


@pytest.mark.parametrize(
    ("freeze", "fires"),
    [
        ("model.requires_grad_(False)\n", False),
        ("for p in model.parameters():\n    p.requires_grad = False\n", False),
        ("for name, p in model.named_parameters():\n    p.requires_grad_(False)\n", False),
        ("for name, p in model.named_parameters():\n    if 'classifier' not in name:\n        p.requires_grad = False\n", True),  # partial
        ("for p in model.base_model.parameters():\n    p.requires_grad = False\n", True),  # the head still trains
        ("model.requires_grad_(False)\nfor p in model.classifier.parameters():\n    p.requires_grad_(True)\n", False),  # a part: ignored
        ("model.requires_grad_(False)\nmodel.requires_grad_()\n", True),  # thawed again
        ("", True),
    ],
)
def test_bl503_frozen_models_record_no_graph(freeze: str, fires: bool) -> None:
    source = INFERENCE + freeze + 'enc = tokenizer(["a b", "c"], padding=True, return_tensors="pt")\nlogits = model(**enc).logits\n'
    assert (codes(lint_text(source)) == ["BL503"]) is fires


@pytest.mark.parametrize(("tail", "fires"), [(".last_hidden_state.shape[-1]", False), ("[0].size(1)", False), (".logits", True), (".logits.shape[0] + model(**enc).logits", True)])
def test_bl503_forward_read_only_for_its_shape(tail: str, fires: bool) -> None:
    source = INFERENCE + f'enc = tokenizer("a b", return_tensors="pt")\nx = model(**enc){tail}\n'
    assert (codes(lint_text(source)) == ["BL503"]) is fires


def test_bl503_silent_in_training_steps() -> None:
    source = loop_script("loss = forward(batch)\nloss.backward()\noptimizer.step()\noptimizer.zero_grad()\n", HEADER + "def forward(batch):\n    return model(**batch).loss\n")
    assert codes(lint_text(source)) == []


def test_bl503_eval_loop_beside_the_training_loop() -> None:
    source = HEADER + (
        "for epoch in range(3):\n"
        "    for batch in train_loader:\n"
        "        model(**batch).loss.backward()\n        optimizer.step()\n        optimizer.zero_grad()\n"
        "    for batch in val_loader:\n"
        "        val_loss = model(**batch).loss\n"
    )
    assert [(f.code, f.line) for f in lint_text(source)] == [("BL503", 14)]


def _fix_twice(source: str) -> tuple[str, str]:
    findings = lint_text(source)
    once, applied = fixer.apply_edits(source, findings, {"safe", "unsafe"})
    assert applied
    twice, _ = fixer.apply_edits(once, lint_text(once), {"safe", "unsafe"})
    return once, twice


def test_bl503_fix_wraps_the_statement() -> None:
    source = INFERENCE + (
        'def predict(texts):\n'
        '    enc = tokenizer(texts, padding=True, return_tensors="pt")\n'
        '    # the forward\n'
        '    logits = model(\n'
        '        **enc,\n'
        '    ).logits  # keep me\n'
        '    return logits.argmax(-1)\n'
    )
    once, twice = _fix_twice(source)
    assert "    # the forward\n    with torch.inference_mode():\n        logits = model(\n            **enc,\n        ).logits  # keep me\n    return" in once
    assert fixer.parses(once) and "BL503" not in codes(lint_text(once)) and twice == once


def test_bl503_fix_uses_the_local_torch_alias_and_tabs() -> None:
    source = INFERENCE.replace("import torch\n", "import torch as T\n") + 'if True:\n\tout = model(**tokenizer("a b", return_tensors="pt"))\n'
    once, twice = _fix_twice(source)
    assert 'if True:\n\twith T.inference_mode():\n\t\tout = model(' in once and twice == once


def test_bl503_no_fix_for_a_shared_line() -> None:
    source = INFERENCE + 'enc = tokenizer("a", return_tensors="pt"); out = model(**enc)\n'
    (finding,) = lint_text(source)
    assert finding.code == "BL503" and finding.fix is None


# --- BL504 -------------------------------------------------------------------------------------

LOAD = 'import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("{ckpt}"{extra})\n'


@pytest.mark.parametrize(
    "version, ckpt, fires",
    [
        ("4.40", "gpt2-xl", True),
        ("4.40", "meta-llama/Llama-2-7b-hf", True),  # stored in fp16, upcast to fp32 by 4.x
        ("4.40", "gpt2", False),  # small
        ("5.23", "t5-3b", True),  # stored in fp32
        ("5.23", "meta-llama/Llama-2-7b-hf", False),  # 5.x keeps the stored fp16
    ],
)
def test_bl504_version_aware(version: str, ckpt: str, fires: bool) -> None:
    findings = lint_text(LOAD.format(ckpt=ckpt, extra=""), transformers_version=version)
    assert codes(findings) == (["BL504"] if fires else [])


@pytest.mark.parametrize("extra", [", torch_dtype=torch.bfloat16", ", dtype=torch.float16", ', device_map="auto"', ", load_in_8bit=True", ", **kwargs"])
def test_bl504_silent_when_memory_is_handled(extra: str) -> None:
    assert codes(lint_text(LOAD.format(ckpt="gpt2-xl", extra=extra), transformers_version="4.40")) == []


def test_bl504_help_names_the_keyword_of_the_version() -> None:
    (old,) = lint_text(LOAD.format(ckpt="gpt2-xl", extra=""), transformers_version="4.40")
    (new,) = lint_text(LOAD.format(ckpt="gpt2-xl", extra=""), transformers_version="4.57")
    assert "`torch_dtype=torch.bfloat16`" in old.help and "`dtype=torch.bfloat16`" in new.help
    assert "1.6B parameters take 5.8 GiB" in old.message


def test_bl503_without_a_torch_import_reports_without_fix() -> None:
    source = INFERENCE.replace("import torch\n", "") + 'logits = model(**tokenizer("a b", return_tensors="pt")).logits\n'
    (finding,) = lint_text(source)
    assert finding.code == "BL503" and finding.fix is None


@pytest.mark.parametrize("cls", ["TFAutoModelForSequenceClassification", "FlaxAutoModelForSequenceClassification"])
def test_bl503_silent_for_tf_and_flax_models(cls: str) -> None:
    source = f'from transformers import {cls}\nmodel = {cls}.from_pretrained("bert-base-uncased")\nlogits = model(ids).logits\n'
    assert "BL503" not in codes(lint_text(source, transformers_version="4.40"))


@pytest.mark.parametrize(
    "update",
    ["scaler.step(optimizer)", "xm.optimizer_step(optimizer)", "optimizer.step(closure)"],
)
def test_updates_through_a_scaler_or_xla_count_as_steps(update: str) -> None:
    header = HEADER + "import torch_xla.core.xla_model as xm\nscaler = torch.amp.GradScaler()\n"
    (loop,) = facts_of(loop_script(f"model(**batch).loss.backward()\n{update}\n", header)).training_loops
    assert len(loop.steps) == 1


def test_scheduler_step_is_not_an_update() -> None:
    header = HEADER + "scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)\n"
    (loop,) = facts_of(loop_script("model(**batch).loss.backward()\nscheduler.step()\n", header)).training_loops
    assert loop.steps == []


FINETUNER = """\
import torch

class Finetuner:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

    def reset(self):
        self.optimizer.zero_grad()

    def fit(self, loader):
        for batch in loader:
            self.model(**batch).loss.backward()
            self.optimizer.step()
{reset}"""


def test_bl303_through_self_attributes_and_methods() -> None:
    assert codes(lint_text(FINETUNER.format(reset=""))) == ["BL303"]
    assert codes(lint_text(FINETUNER.format(reset="            self.reset()\n"))) == []


def test_bl302_zero_grad_inside_a_with_block_still_runs_every_iteration() -> None:
    body = 'with torch.autocast("cuda", dtype=torch.bfloat16):\n    optimizer.zero_grad()\n    loss = model(**batch).loss / ACCUM\nloss.backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n'
    assert codes(lint_text(loop_script(body))) == ["BL302"]


def test_bl302_an_abort_does_not_hide_the_reset() -> None:
    body = "optimizer.zero_grad()\nloss = model(**batch).loss / ACCUM\nif torch.isnan(loss):\n    raise ValueError('nan')\nloss.backward()\nif (step + 1) % ACCUM == 0:\n    optimizer.step()\n"
    assert codes(lint_text(loop_script(body))) == ["BL302"]
