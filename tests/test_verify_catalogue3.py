"""`--verify` probes of catalogue 3 (issue 24): BL311, BL312, BL405, BL505, run for real on CPU torch.

The scripts in fixtures/verify/catalogue3/ make each rule fire. Every probe decides from an effect no float rounding
can flip (an exact zero or ratio, NaN against finite, a sign, a gap held on every seed) and shows its margin.
"""

from __future__ import annotations

import pytest

from conftest import ROOT, record_verdicts

from bertlint import runner, verify

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

CATALOGUE3 = ROOT / "fixtures" / "verify" / "catalogue3"
CODES = ["BL311", "BL312", "BL405", "BL505"]


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str, int], dict]:
    """(file stem, code, line) -> the verification; all the scripts in one child."""
    paths = sorted(CATALOGUE3.glob("*.py"))
    overrides = {"preview": True}
    outcome = runner.run(paths, overrides=overrides, isolated=True, use_cache=False)
    verify.verify(outcome.findings, runner.settings_for(paths, overrides, None, True), codes=CODES, device="cpu")
    record_verdicts(outcome.findings)
    return {(f.path.rsplit("/", 1)[-1][:-3], f.code, f.line): f.verification for f in outcome.findings if f.code in CODES}


def test_every_finding_is_probed_on_cpu_within_seconds(results):
    assert set(results) == {
        ("inert_controls", "BL311", line) for line in (8, 10, 11, 12, 13, 14)
    } | {("clip_orders", "BL312", 8), ("clip_orders", "BL312", 16), ("probability_losses", "BL405", 10), ("probability_losses", "BL405", 11),
         ("probability_losses", "BL405", 12), ("half_weights", "BL505", 4), ("half_loop", "BL505", 4)}  # fmt: skip
    for v in results.values():
        assert v is not None and v["device"] == "cpu" and v["seconds"] < 20 and v["status"] == "confirmed", v


def test_bl311_each_bare_control_leaves_its_state_unchanged(results):
    m = {line: results["inert_controls", "BL311", line]["measurements"] for line in (8, 10, 11, 12, 13, 14)}
    assert m[8]["gradient_ratio"] == pytest.approx(2.0, abs=1e-3)  # zero_grad: the second backward adds to the first
    assert m[10]["parameters_without_grad"] == 4  # backward: no gradient at all
    assert m[11]["largest_weight_change"] == 0  # step: nothing moves
    assert m[12]["learning_rate"] == 0.1  # scheduler.step: StepLR would have halved it three times
    assert m[13]["training"] == 1 and m[13]["forward_difference"] > 0.01  # eval: dropout still on
    assert m[14] == {"requires_grad_after_bare": 1, "requires_grad_inside_with": 0}


def test_bl312_the_step_uses_unclipped_gradients(results):
    before, after = results["clip_orders", "BL312", 8], results["clip_orders", "BL312", 16]
    assert "zero_grad → clip → backward → step" in before["evidence"] and "the clip saw gradient norms 0, 0, 0" in before["evidence"], before
    assert before["measurements"]["threshold"] == 0.5 and before["measurements"]["smallest_used_over_threshold"] > 10
    assert after["measurements"]["threshold"] == 0.1 and "largest gradient entr" in after["evidence"]  # clip_grad_value_
    for v in (before, after):
        assert v["measurements"]["largest_used_when_fixed"] <= v["measurements"]["threshold"] * 1.0001


def test_bl405_probabilities_train_worse_on_every_seed(results):
    softmax, nll, bce = (results["probability_losses", "BL405", line] for line in (10, 11, 12))
    assert softmax["measurements"]["smallest_accuracy_gap"] > 0.03 and softmax["measurements"]["first_gradient_ratio"] > 5, softmax
    assert nll["measurements"]["final_wrong_loss"] < 0 and "below 0, no floor" in nll["evidence"], nll
    assert "never below log(1 + 1/e)" in bce["evidence"], bce
    assert "over 3 seeds" in softmax["evidence"]


def test_bl505_float16_adam_turns_the_weights_nan(results):
    trainer, loop = results["half_weights", "BL505", 4], results["half_loop", "BL505", 4]
    for v in (trainer, loop):
        m = v["measurements"]
        assert m["nan_fraction_half"] > 0 and m["nan_fraction_fp32"] == 0 and m["zero_gradient_entries"] > 0, v
    assert "lr 3e-05" in trainer["evidence"] and "ValueError: Attempting to unscale FP16 gradients." in trainer["evidence"], trainer
    assert "lr 1e-05" in loop["evidence"] and "GradScaler" not in loop["evidence"], loop
