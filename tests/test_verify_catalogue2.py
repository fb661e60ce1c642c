"""`--verify` probes of catalogue 2 (issue 14): BL209, BL210, BL306, BL404, run for real (CPU torch and transformers).

The scripts in fixtures/verify/catalogue2/ make each rule fire; the near misses fire too but run fine (or fail
otherwise), and their probes must say so. The target is 4.46: BL404 needs TensorFlow models, which 5.0 removed.
"""

from __future__ import annotations

import json

import pytest

from conftest import KERNEL_SLOWDOWN, ROOT, record_verdicts

from bertlint import runner, verify
from bertlint.report import Finding, format_findings, verification_text

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CATALOGUE2 = ROOT / "fixtures" / "verify" / "catalogue2"
TARGET = "4.46"


def verified(*names: str) -> dict[tuple[str, str, int], dict]:
    """(file stem, code, line) -> the verification, for every probed finding of the named scripts."""
    paths = [CATALOGUE2 / name for name in names]
    overrides = {"transformers_version": TARGET, "preview": True}
    outcome = runner.run(paths, overrides=overrides, isolated=True, use_cache=False)
    verify.verify(outcome.findings, runner.settings_for(paths, overrides, None, True), codes=["BL209", "BL210", "BL306", "BL404"], device="cpu")
    record_verdicts(outcome.findings)
    return {(f.path.rsplit("/", 1)[-1][:-3], f.code, f.line): f.verification for f in outcome.findings if f.verification is not None}


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str, int], dict]:
    """All the scripts in one child: torch and transformers are imported once."""
    return verified("completions.py", "sft_collator.py", "same_length_prompts.py", "flan_t5_fp16.py", "mt5_half.py", "keras_losses.py")


def test_every_probe_ran_on_cpu_within_seconds(results):
    assert set(results) == {
        ("completions", "BL209", 13), ("completions", "BL210", 13), ("sft_collator", "BL209", 9), ("sft_collator", "BL209", 10), ("same_length_prompts", "BL210", 9),
        ("flan_t5_fp16", "BL306", 6), ("mt5_half", "BL306", 7), ("keras_losses", "BL404", 6), ("keras_losses", "BL404", 9),
    }  # fmt: skip
    for v in results.values():
        assert v["device"] == "cpu" and v["seconds"] < 20 * KERNEL_SLOWDOWN and v["measurements"], v


def test_bl209_padding_without_a_pad_token_raises_the_real_error(results):
    call, pad, collator = results["completions", "BL209", 13], results["sft_collator", "BL209", 9], results["sft_collator", "BL209", 10]
    for v in (call, pad, collator):
        assert v["status"] == "confirmed" and "ValueError: Asking to pad but the tokenizer does not have a padding token" in v["evidence"], v
        assert v["setup"].startswith("GPT2Tokenizer over the 256 byte symbols, no pad token"), v
    assert call["evidence"].startswith("the tokenizer call on the script's texts raises")
    assert pad["evidence"].startswith("`tokenizer.pad(...)` of two examples of")
    assert collator["evidence"].startswith("`DataCollatorForLanguageModeling(tokenizer, mlm=False)` on two examples of")


def test_bl209_a_masked_lm_collator_fails_first_on_the_mask_token(tmp_path):
    """`mlm=True` (the default) needs a mask token, which GPT-2's tokenizer lacks too: that error comes first, not the pad one."""
    from bertlint.verify import probes

    spec = {"code": "BL209", "params": {"kind": "collator", "collator": "DataCollatorForLanguageModeling", "mlm": True, "tokenizer": {"checkpoint": "gpt2"}}}
    v = probes.probe_missing_pad(spec, probes.Env("cpu", tmp_path))
    assert v["status"] == "not_confirmed" and "fails, but with another error first: ValueError" in v["evidence"] and "mask token" in v["evidence"], v


def test_bl209_a_cached_tokenizer_with_a_pad_token_is_not_confirmed(monkeypatch, tmp_path):
    """The checkpoint in the user's cache has a pad token after all: the call pads, and the probe says so."""
    snapshot = tmp_path / "hub" / "models--gpt2" / "snapshots" / ("0" * 40)
    vocab = {"h": 0, "i": 1, "<|endoftext|>": 2, "<pad>": 3}
    snapshot.mkdir(parents=True)
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    transformers.GPT2Tokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"), pad_token="<pad>").save_pretrained(snapshot)
    transformers.GPT2Config().save_pretrained(snapshot)  # AutoTokenizer reads the model type from it
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    v = verified("completions.py")["completions", "BL209", 13]
    assert v["status"] == "not_confirmed" and "ran without error (pad token '<pad>'" in v["evidence"], v
    assert v["setup"] == "cached tokenizer of gpt2" and v["measurements"]["pad_token_set"] == 1


def test_bl210_right_padding_changes_the_generated_tokens_and_left_padding_does_not(results):
    v = results["completions", "BL210", 13]
    m, e = v["measurements"], v["evidence"]
    assert v["status"] == "confirmed" and m["new_tokens"] == 6 and m["rows_changed_right"] == m["padded_rows"] == 1 and m["rows_changed_left"] == 0, v
    assert "prompt 2 'hello world' alone → [" in e and "right-padded in the batch → [" in e and "left-padded → [" in e, e
    assert "right-padding was detected" in e  # transformers' own warning, captured
    assert "random-weight gpt2 (2 layers × 64 wide) from the sizes of gpt2; the script's 2 distinct texts (padding='longest')" in v["setup"], v


def test_bl210_prompts_of_one_length_are_not_confirmed(results):
    v = results["same_length_prompts", "BL210", 9]
    assert v["status"] == "not_confirmed" and "its 2 texts are all 3 tokens long, so the padding side changes nothing" in v["evidence"], v


def test_bl306_float16_autocast_of_t5_turns_the_loss_nan(results):
    v = results["flan_t5_fp16", "BL306", 6]
    m = v["measurements"]
    assert v["status"] == "confirmed" and "float16 autocast: loss nan" in v["evidence"], v
    assert "fp16_loss" not in m and m["nonfinite_logits"] > 0 and m["overflowed_layers"] >= 1 and m["fp32_activation_peak"] > m["fp16_max"] == 65504
    assert "scaled ×" in v["setup"] and "transformers#10956" in v["setup"] and "from the sizes of google/flan-t5-base" in v["setup"], v


def test_bl306_half_weights_overflow_but_transformers_clamps_them(results):
    """With `.half()` every hidden state is float16 and T5Block clamps its inf values: on this small model the loss stays finite."""
    v = results["mt5_half", "BL306", 7]
    assert v["status"] == "not_confirmed" and v["measurements"]["overflowed_layers"] > 0 and "clamps inf" in v["evidence"], v


def test_bl404_probability_loss_on_logits_leaves_most_logits_without_a_gradient(results):
    """The clip's effect, far outside its spread: most logits sit past [ε, 1-ε] in every seed, where from_logits=True leaves none."""
    for line, kind in ((6, "Sparse"), (9, "Binary")):
        v = results["keras_losses", "BL404", line]
        m = v["measurements"]
        assert v["status"] == "confirmed" and m["num_labels"] == (4 if line == 6 else 2), v
        assert m["dead_logits_from_logits"] == 0 and m["effect_min"] >= m["margin"] + 0.25 == 0.45 and m["seeds"] == 5, v
        assert m["effect_spread"] < 0.3 and m["accuracy_from_logits"] > 0.9, v
        assert v["evidence"].startswith("reproduced in torch, not Keras") and f"`{kind}" in v["evidence"], v
        assert "against a margin of 20%: every seed clears it" in v["evidence"], v


def test_an_effect_within_its_spread_is_not_confirmed():
    """A verdict needs every seed past the margin: one seed short of it says "not confirmed", with the spread."""
    from bertlint.verify.probes import Effect, decided

    v = decided(Effect("gain", (0.3, 0.05, 0.25), 0.1), "trained three times")
    assert v["status"] == "not_confirmed" and v["measurements"]["effect_spread"] == pytest.approx(0.25), v
    assert v["evidence"] == "trained three times; gain 20% (5%–30% over 3 seeds) against a margin of 10%: within the spread of the margin"
    assert decided(Effect("gain", (0.02,), 0.1), "once")["evidence"] == "once; gain 2% against a margin of 10%: below it"


def test_keras_losses_match_the_tf_keras_formulas():
    """Keras's own docstring values (tf_keras backend.categorical_crossentropy, losses.SparseCategoricalCrossentropy)."""
    from bertlint.verify.probes import keras_on_probabilities

    probs = torch.tensor([[0.9, 0.05, 0.05], [0.05, 0.89, 0.06], [0.05, 0.01, 0.94]])
    assert keras_on_probabilities("categorical", probs, torch.tensor([0, 1, 2])).item() == pytest.approx((0.10536 + 0.11653 + 0.06188) / 3, abs=1e-5)
    unnormalised = torch.tensor([[0.9, 0.05, 0.05], [0.5, 0.89, 0.6], [0.05, 0.01, 0.94]])
    assert keras_on_probabilities("sparse", unnormalised, torch.tensor([0, 1, 2])).item() == pytest.approx(0.3239, abs=1e-4)
    logits = torch.tensor([[-2.0, 3.0]], requires_grad=True)  # logits outside [ε, 1-ε]: clipped, so no gradient at all
    keras_on_probabilities("binary", logits, torch.tensor([1])).backward()
    assert logits.grad.abs().sum().item() == 0


def test_every_format_carries_the_new_verdicts(results):
    v = results["keras_losses", "BL404", 6]
    finding = Finding("BL404", "keras-loss-on-logits", "error", "logits", "", "k.py", 6, 63, 6, 100, verification=v)
    assert format_findings([finding], "concise").rstrip().endswith(f"[confirmed on cpu in {v['seconds']:.1f} s]")
    assert f"  = verified on cpu in {v['seconds']:.1f} s: reproduced in torch, not Keras" in format_findings([finding], "full")
    assert json.loads(format_findings([finding], "json"))[0]["verification"]["measurements"] == v["measurements"]
    sarif = json.loads(format_findings([finding], "sarif"))
    assert sarif["runs"][0]["results"][0]["properties"]["verification"]["status"] == "confirmed"
    [diag] = next(iter(json.loads(format_findings([finding], "lsp")).values()))
    assert diag["relatedInformation"][0]["message"] == verification_text(v)
