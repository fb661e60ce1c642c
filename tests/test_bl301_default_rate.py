"""BL301 on an optimizer's default rate (issue 14): `torch.optim.AdamW(model.parameters())` fine-tunes BERT at 1e-3."""

from __future__ import annotations

import pytest

from conftest import lint_text

from bertlint.rules import bl301

TORCH = 'import torch\nfrom transformers import {cls}\nmodel = {cls}.{load}({arg})\n{extra}opt = torch.optim.{optimizer}({args})\n'


def default(args: str = "model.parameters()", *, optimizer: str = "AdamW", cls: str = "AutoModelForSequenceClassification",
            checkpoint: str = "bert-base-uncased", extra: str = "", **opts) -> list:  # fmt: skip
    load, arg = ("from_pretrained", f'"{checkpoint}"') if checkpoint else ("from_config", "config")
    source = TORCH.format(cls=cls, load=load, arg=arg, extra=extra, optimizer=optimizer, args=args)
    return [f for f in lint_text(source, **opts) if f.code == "BL301"]


def test_the_default_is_named_as_the_cause_with_the_fix():
    [finding] = default()
    assert finding.severity == "error" and (finding.line, finding.column) == (4, 7)
    assert "`torch.optim.AdamW(...)` sets no learning rate, so it runs at its default 0.001, 10× above the safe range 5e-06–0.0001" in finding.message
    assert "the default is the cause" in finding.message and "diverges" in finding.message
    assert finding.help.startswith("pass the rate explicitly: `lr=2e-05` (between 5e-06 and 0.0001")


@pytest.mark.parametrize(
    ("optimizer", "checkpoint", "words"),
    [
        ("Adam", "roberta-large", ["default 0.001, 20× above", "large encoder"]),
        ("NAdam", "bert-base-uncased", ["default 0.002, 20× above"]),  # torch/optim/nadam.py: lr=2e-3
        ("RAdam", "meta-llama/Llama-2-7b-hf", ["default 0.001, 20× above", "LLM full fine-tuning"]),
    ],
)
def test_each_adam_family_default(optimizer, checkpoint, words):
    cls = "AutoModelForCausalLM" if "llama" in checkpoint else "AutoModelForSequenceClassification"
    [finding] = default(optimizer=optimizer, checkpoint=checkpoint, cls=cls)
    assert all(word in finding.message for word in words), finding.message


def test_a_default_at_most_twice_outside_the_range_is_left_alone():
    # torch's AdamW default 1e-3 is twice GPT-2's 5e-4 ceiling: inside the rule's margin (`bl301.NEAR`); NAdam's 2e-3 is beyond it
    assert default(cls="AutoModelForCausalLM", checkpoint="gpt2") == []
    [finding] = default(optimizer="NAdam", cls="AutoModelForCausalLM", checkpoint="gpt2")
    assert "default 0.002, 4× above the safe range 5e-06–0.0005" in finding.message


@pytest.mark.parametrize(
    "args",
    [
        "model.parameters(), lr=2e-5",  # explicit
        "model.parameters(), 2e-5",  # positional
        "model.parameters(), **options",  # the keywords are not known
        "*groups",
        "params",  # a helper's groups may carry their own rates
        '[{"params": model.parameters(), "lr": 2e-5}]',
    ],
)
def test_silent_when_the_rate_may_be_set(args):
    assert default(args, extra="options, groups = {}, []\nparams = make_groups(model)\n") == []


def test_silent_outside_a_known_pretrained_family():
    assert default(cls="Wav2Vec2ForCTC", checkpoint="facebook/wav2vec2-base") == []  # unknown family
    assert default(cls="AutoModelForSequenceClassification", checkpoint="my-org/private-checkpoint") == []
    assert default(cls="BertForMaskedLM", checkpoint="", extra="") == []  # from scratch: 1e-3 is a pretraining rate
    lora = "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))\n"
    assert default(cls="AutoModelForCausalLM", checkpoint="meta-llama/Llama-2-7b-hf", extra=lora) == []  # inside LoRA's range
    ia3 = "from peft import IA3Config, get_peft_model\nmodel = get_peft_model(model, IA3Config())\n"
    assert default(extra=ia3) == []  # another PEFT method: no range


def test_silent_when_a_schedule_or_a_store_sets_the_rate():
    onecycle = "sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-5, total_steps=100)\n"
    source = TORCH.format(cls="AutoModel", load="from_pretrained", arg='"bert-base-uncased"', extra="", optimizer="AdamW", args="model.parameters()")
    assert [f for f in lint_text(source + onecycle) if f.code == "BL301"] == []
    assert [f for f in lint_text(source + 'opt.param_groups[0]["lr"] = 2e-5\n') if f.code == "BL301"] == []


def test_keras_optimizer_defaults_count_only_where_the_transformer_is_compiled_with_them():
    head = '# bertlint-test: transformers-version=4.40\nimport tensorflow as tf\nfrom transformers import TFAutoModelForSequenceClassification\n'
    head += 'model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased")\n'
    for compiled, fires in [('"adam"', True), ('"AdamW"', True), ("tf.keras.optimizers.Adam()", True), ('"sgd"', False),
                            ("tf.keras.optimizers.Adam(3e-5)", False), ("tf.keras.optimizers.Adam(learning_rate=3e-5)", False)]:  # fmt: skip
        found = [f for f in lint_text(f"{head}model.compile(optimizer={compiled})\n", transformers_version="4.40") if f.code == "BL301"]
        assert bool(found) is fires, compiled
    assert [f for f in lint_text(f'{head}model.compile(optimizer="adam")\n', transformers_version="5.0") if f.code == "BL301"] == []  # no TF models
    assert bl301.KERAS_DEFAULTS == {"Adam": 1e-3, "AdamW": 1e-3}


def test_verify_lifts_the_default_rate(tmp_path):
    """`--verify` fine-tunes at the default the optimizer runs at (the lift imports neither torch nor transformers)."""
    from bertlint import runner
    from bertlint.verify import lift, sites

    script = tmp_path / "train.py"
    script.write_text(TORCH.format(cls="AutoModelForSequenceClassification", load="from_pretrained", arg='"bert-base-uncased"', extra="",
                                   optimizer="NAdam", args="model.parameters()"))  # fmt: skip
    outcome = runner.run([script], isolated=True, overrides={"preview": True}, use_cache=False)
    settings = runner.settings_for([script], {"preview": True}, None, True)
    [finding] = [f for f in outcome.findings if f.code == "BL301"]
    params = lift.spec_for(*sites.Sites(settings).of(finding), settings)["params"]
    assert (params["lr"], params["optimizer"], params["high"]) == (2e-3, "adamw", 1e-4)
