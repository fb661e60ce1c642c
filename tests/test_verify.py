"""`--verify`: every probe runs for real (CPU torch and transformers) in the child process.

The demo scripts in fixtures/verify/ make each probed rule fire once; the near-miss looks wrong to
the linter but is fine, and its probes must say so. CUDA-only measurements are skipped without CUDA.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import PINNED_VERSION, ROOT, T5_SUMMARIES

from bertlint import runner, verify
from bertlint.report import Finding, format_findings, verification_text

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

VERIFY = ROOT / "fixtures" / "verify"
DEMO = VERIFY / "demo"
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
ACCEPTANCE = ("BL101", "BL102", "BL104", "BL201", "BL202", "BL204", "BL206", "BL301", "BL401", "BL402", "BL603")


def lint_and_verify(*paths: Path, **options) -> tuple[list[Finding], float]:
    overrides = {"transformers_version": PINNED_VERSION, "preview": True}
    outcome = runner.run(list(paths), overrides=overrides, isolated=True, use_cache=False)
    settings = runner.settings_for(list(paths), overrides, None, True)
    start = time.monotonic()
    verify.verify(outcome.findings, settings, **{"device": "cpu", **options})
    return outcome.findings, time.monotonic() - start


def by_code(findings: list[Finding]) -> dict[str, dict]:
    return {f.code: f.verification for f in findings if f.verification is not None}


@pytest.fixture(scope="module")
def demo() -> tuple[list[Finding], float]:
    return lint_and_verify(DEMO)


def test_demo_confirms_every_probed_rule_with_numbers(demo):
    findings, seconds = demo
    results = by_code(findings)
    assert set(ACCEPTANCE) <= set(results)
    for code in ACCEPTANCE:
        v = results[code]
        assert v["status"] == "confirmed", (code, v)
        assert v["device"] == "cpu" and isinstance(v["seconds"], float)
        assert v["measurements"] and all(isinstance(x, (int, float)) for x in v["measurements"].values()), (code, v)
    assert seconds < 120, f"the demo took {seconds:.0f} s (the target is 60 s on 2 idle cores)"


@pytest.mark.parametrize(
    "code, check",
    [
        ("BL101", lambda m, e: m["output_length"] < m["max_length"] == 64 and "pad_to_max_length" in e),
        ("BL102", lambda m, e: m["output_length"] > m["max_length"] == 32),
        ("BL104", lambda m, e: (m["length"], m["position_limit"]) == (1024, 512) and "Error" in e),
        ("BL201", lambda m, e: m["max_abs_diff_without_mask"] > 1e3 * m["max_abs_diff_with_mask"]),
        ("BL202", lambda m, e: (m["input_length"], m["label_length"]) == (128, 64) and "batch_size" in e),
        ("BL204", lambda m, e: m["max_label"] >= m["num_labels"] == 2 and "Target 2 is out of bounds" in e),
        ("BL206", lambda m, e: m["largest_new_id"] >= m["embedding_rows"] == 30522 and "index out of range" in e),
        ("BL301", lambda m, e: m["loss_peak"] >= 3 * m["reference_loss_peak"] and m["lr"] == 1e-3
                  and m["weight_change"] > 10 * m["reference_weight_change"] and "of their norm" in e),
        ("BL401", lambda m, e: m["ratio"] == 4.0 and m["minority_recall_unweighted"] < m["minority_recall_weighted"] - 0.1),
        ("BL402", lambda m, e: "eval_dataset" in e),
        ("BL603", lambda m, e: "num_items_in_batch" in e and "ReviewTrainer.compute_loss" in e),
    ],
)
def test_demo_evidence(demo, code, check):
    v = by_code(demo[0])[code]
    assert check(v["measurements"], v["evidence"]), v


def test_near_miss_is_not_confirmed():
    findings, _ = lint_and_verify(VERIFY / "near_miss.py")
    results = by_code(findings)
    assert {"BL201", "BL206"} <= set(results)
    assert all(v["status"] == "not_confirmed" for v in results.values()), results
    m = results["BL201"]["measurements"]  # float noise of batched kernels only, far below the verdict's 1e-4
    assert m["max_abs_diff_without_mask"] < 1e-5 * max(m["hidden_abs_max"], 1.0), m
    assert results["BL206"]["measurements"]["largest_new_id"] < results["BL206"]["measurements"]["embedding_rows"]


def test_stalling_rate_and_float_labels():
    results = by_code(lint_and_verify(VERIFY / "slow_and_float.py")[0])
    assert results["BL301"]["status"] == "confirmed" and results["BL301"]["evidence"].startswith("stalls")
    assert results["BL301"]["measurements"]["weight_change"] < 0.01 * results["BL301"]["measurements"]["reference_weight_change"]
    assert results["BL205"]["status"] == "confirmed" and "input size (torch.Size([4, 3]))" in results["BL205"]["evidence"]


def test_every_format_carries_the_verdict(demo):
    findings = [f for f in demo[0] if f.code == "BL104"]
    v = findings[0].verification
    assert f"  = verified on cpu in {v['seconds']:.1f} s: a forward of 1024 tokens fails" in format_findings(findings, "full")
    [obj] = json.loads(format_findings(findings, "json"))
    assert set(obj["verification"]) >= {"status", "device", "evidence", "measurements", "seconds"}
    [diag] = next(iter(json.loads(format_findings(findings, "lsp")).values()))
    assert diag["relatedInformation"][0]["message"] == verification_text(v) and diag["data"]["verification"]["status"] == "confirmed"
    sarif = json.loads(format_findings(findings, "sarif"))
    assert sarif["runs"][0]["results"][0]["properties"]["verification"]["evidence"] == v["evidence"]


def test_memory_probes_need_cuda_on_cpu():
    results = by_code(lint_and_verify(VERIFY / "memory.py")[0])
    for code in ("BL501", "BL502"):
        assert results[code]["status"] == "could_not_run" and "needs CUDA" in results[code]["evidence"]
    assert results["BL502"]["measurements"]["estimate_gib"] > results["BL502"]["measurements"]["budget_gib"] == 16


def test_memory_probe_halves_the_batch_until_it_fits_and_extrapolates(monkeypatch):
    from bertlint.verify import probes

    def step(config, p, precision, batch):  # 1 GB of weights and states + 0.2 GB per example; 4 fit
        if batch > 4:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")
        return 1e9 + 2e8 * batch, 0.5

    monkeypatch.setattr(probes, "_step", step)
    p = {"batch": 16, "activation_bytes_per_example": 1.0}
    assert probes._peak(None, p, "fp32") == {"peak": 1e9 + 2e8 * 16, "seconds": None, "batch": 16, "measured_batch": 4}
    assert probes._peak(None, {**p, "batch": 4}, "fp32") == {"peak": 1e9 + 2e8 * 4, "seconds": 0.5, "batch": 4, "measured_batch": 4}
    monkeypatch.setattr(probes, "_step", lambda *args: (_ for _ in ()).throw(torch.cuda.OutOfMemoryError("CUDA out of memory")))
    assert probes._peak(None, p, "fp32")["peak"] is None


def test_memory_probe_of_an_encoder_decoder_trains_at_the_label_length(tmp_path):
    """The estimate runs a seq2seq decoder at the labels' max_length; the probe's training step must too."""
    from bertlint.verify import lift

    script = tmp_path / "summarize.py"
    script.write_text(T5_SUMMARIES.format(batch=48))
    outcome = runner.run([script], isolated=True, overrides={"preview": True}, use_cache=False)
    settings = runner.settings_for([script], {"preview": True}, None, True)
    [finding] = [f for f in outcome.findings if f.code == "BL502"]
    params = lift.spec_for(lift.Site.load(script, settings), finding, settings)["params"]
    assert (params["batch"], params["seq"], params["target"], params["head"]) == (48, 512, 64, "seq2seq")


@CUDA
def test_memory_probes_measure_a_real_step_on_cuda():
    results = by_code(lint_and_verify(VERIFY / "memory.py", device="cuda", timeout=600)[0])
    assert results["BL502"]["status"] == "confirmed", results["BL502"]
    assert results["BL502"]["measurements"]["fp32_peak_gib"] > 16
    assert results["BL501"]["status"] == "confirmed", results["BL501"]
    assert results["BL501"]["measurements"]["amp_peak_gib"] < results["BL501"]["measurements"]["fp32_peak_gib"]


@CUDA
def test_device_side_asserts_stay_in_their_process():
    results = by_code(lint_and_verify(DEMO, device="cuda")[0])
    for code in ("BL104", "BL204", "BL206"):
        assert results[code]["status"] == "confirmed" and results[code]["device"].startswith("cuda ("), results[code]
    assert "device-side assert" in results["BL204"]["evidence"]
    assert all(results[code]["status"] == "confirmed" for code in ACCEPTANCE)


def test_verify_option_selects_codes_and_keeps_the_lint_path_free_of_torch():
    command = [sys.executable, "-m", "bertlint", "check", "--isolated", "--preview", "--no-cache", "--format", "json", "--verify=BL206", "--device", "cpu", str(DEMO / "classifier.py")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    findings = json.loads(done.stdout)
    assert [f["code"] for f in findings if "verification" in f] == ["BL206"]
    lift_only = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from bertlint import runner, verify
        from bertlint.verify import lift
        outcome = runner.run([Path({str(DEMO)!r})], isolated=True, overrides={{"preview": True}}, use_cache=False)
        settings = runner.settings_for([], {{"preview": True}}, None, True)
        for finding in outcome.findings:
            if finding.code in verify.PROBED:
                lift.spec_for(lift.Site.load(Path(finding.path), settings), finding, settings)
        print(sorted(m for m in ("torch", "transformers", "tensorflow") if m in sys.modules))
    """)
    assert subprocess.run([sys.executable, "-c", lift_only], capture_output=True, text=True, timeout=120).stdout.strip() == "[]"


def test_without_torch_verify_exits_2_with_the_install_command(monkeypatch):
    from importlib import util

    from bertlint.cli import main

    real = util.find_spec
    monkeypatch.setattr(util, "find_spec", lambda name, *args: None if name == "torch" else real(name, *args))
    result = CliRunner().invoke(main, ["check", "--isolated", "--no-cache", "--verify", str(VERIFY / "near_miss.py")])
    assert result.exit_code == 2
    assert "pip install 'bertlint[verify]'" in result.output


def test_a_value_the_script_does_not_pin_is_could_not_run(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nfrom transformers import AutoTokenizer\n"
        "tok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
        "enc = tok(['a', 'b c'], pad_to_max_length=True, max_length=int(sys.argv[1]))\n"
    )
    [finding] = [f for f in lint_and_verify(script)[0] if f.code == "BL101"]
    assert finding.verification["status"] == "could_not_run"
    assert "`max_length=int(sys.argv[1])` is not a constant" in finding.verification["evidence"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks the test process")
def test_a_crashed_or_hung_probe_is_could_not_run_and_the_others_go_on(monkeypatch, tmp_path):
    import io

    from bertlint.verify import child, probes

    monkeypatch.setitem(probes.PROBES, "BL104", lambda spec, env: os.kill(os.getpid(), signal.SIGKILL))  # like the OOM killer
    monkeypatch.setitem(probes.PROBES, "BL204", lambda spec, env: time.sleep(60))
    monkeypatch.setitem(probes.PROBES, "BL401", lambda spec, env: probes.verdict("confirmed", "ran"))
    out = io.StringIO()
    specs = [{"id": i, "code": code, "model": None, "params": {}} for i, code in enumerate(("BL104", "BL204", "BL401"))]
    child.Runner(specs, "cpu", 2.0, out).run()
    results = {r["id"]: r for r in map(json.loads, out.getvalue().splitlines())}
    assert results[0]["status"] == "could_not_run" and "killed by SIGKILL" in results[0]["evidence"]
    assert results[1]["status"] == "could_not_run" and "timed out after 2 s" in results[1]["evidence"]
    assert results[2]["status"] == "confirmed"


def test_a_failing_or_hanging_child_never_hangs_bertlint(monkeypatch, tmp_path):
    spec = [{"id": 0, "code": "BL401", "model": None, "params": {"counts": [["0", 90], ["1", 10]]}}]
    monkeypatch.setattr(sys, "executable", "/bin/false")
    assert "exited with code 1" in verify.run_child(spec, "cpu", 5)[0]["evidence"]
    sleeper = tmp_path / "sleeper"
    sleeper.write_text("#!/bin/sh\nsleep 60\n")
    sleeper.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(sleeper))
    monkeypatch.setattr(verify, "IMPORT_ALLOWANCE", 1.0)
    start = time.monotonic()
    assert "was stopped" in verify.run_child(spec, "cpu", 1)[0]["evidence"]
    assert time.monotonic() - start < 10


def test_a_broken_torch_install_is_could_not_run(monkeypatch, tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("raise ImportError('libtorch_cpu.so: cannot open shared object file')\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    spec = [{"id": 0, "code": "BL401", "model": None, "params": {"counts": [["0", 90], ["1", 10]]}}]
    result = verify.run_child(spec, "cpu", 30)[0]
    assert result["status"] == "could_not_run" and "libtorch_cpu.so" in result["evidence"]


def test_a_cached_checkpoint_is_used_offline(monkeypatch, tmp_path):
    """A checkpoint in the Hugging Face cache is loaded (offline) instead of a random rebuild."""
    import transformers

    snapshot = tmp_path / "hub" / "models--bert-base-uncased" / "snapshots" / ("0" * 40)
    config = transformers.BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37)
    transformers.BertModel(config).save_pretrained(snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    findings, _ = lint_and_verify(DEMO / "classifier.py", codes=["BL201"])
    v = by_code(findings)["BL201"]
    assert v["status"] == "confirmed" and v["setup"] == "cached bert-base-uncased", v
