"""Every safe fix keeps the program's behaviour, proven on the real library: each call below, on each input shape
the value layer can name, is linted, its safe fixes applied as `--fix` would, and the original body run on the
releases where it worked (4.30.2 and 4.57.1, a fast and a slow tokenizer built from a tiny vocabulary) and the fixed
body on the target (5.24.0). Wherever the original worked, the fixed call must give the same outputs (ids, masks,
token types, lengths, shapes), or the fix must be withheld (no safe fix) for that shape.

The releases are installed side by side by tests/releases.py (cached); offline, the module skips with pip's reason.
The matrix (shape x call x release: ok, or the error) is written to $BERTLINT_RELEASES/fix-differential.json.
"""

from __future__ import annotations

import json

import pytest

import releases
from bertlint import fixer
from conftest import lint_text

pytestmark = pytest.mark.network

TARGET = ("5.24.0", "slow")  # on 5.x `BertTokenizer` is the tokenizers-backed class
OLD = [("4.30.2", "fast"), ("4.30.2", "slow"), ("4.57.1", "fast"), ("4.57.1", "slow")]
HEADER = (
    "import numpy as np\nimport pandas as pd\nfrom transformers import AutoTokenizer, TrainingArguments\n"
    'tok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
    "from fix_probe import L, R\n"  # the probe's texts, bound where the bodies run (an unbound name would stop the run)
)
TEXTS = '["hello world", "the cats sat on the mat", "a b c d", "hi"]'
# The shapes of text the value layer tells apart, each spelled so that the file shows it.
SHAPES = {
    "str": '"hello world"',
    "list": TEXTS,
    "tuple": TEXTS.replace("[", "(").replace("]", ")"),
    "numpy array": "np.array(L)",
    "numpy object array": "np.array(L, dtype=object)",
    "pandas .values": 'pd.DataFrame({"text": L})["text"].values',
    "pandas Series": "pd.Series(L)",
    "zip of pairs": "zip(L, R)",
    "generator": "(t for t in L)",
    "list of pairs": "list(zip(L, R))",
    "list of list pairs": "[[a, b] for a, b in zip(L, R)]",
    "numpy 2-D pairs": "np.array(list(zip(L, R)))",
    "nested word lists": "[t.split() for t in L]",
}
BATCH_KEYWORDS = [
    "padding=True",
    'padding="max_length", max_length=12, truncation=True',
    "pad_to_max_length=True, max_length=12",
    "add_special_tokens=False, return_length=True",
    'padding=True, return_tensors="np"',
    "is_split_into_words=True, padding=True",
]
SINGLE = {"str": '"hello world"', "list": '["hello", "world"]', "word list": '"hello world".split()', "numpy array": 'np.array(["hello", "world"])'}
SINGLE_KEYWORDS = ['max_length=12, padding="max_length", truncation=True', "is_split_into_words=True", "add_special_tokens=False"]


def _cases() -> dict[str, str]:
    """name -> body (after HEADER), each calling the tokenizer once, its text visible or behind a parameter."""
    cases = {}
    for shape, expr in SHAPES.items():
        for keywords in BATCH_KEYWORDS:
            for call in (f"tok.batch_encode_plus(x, {keywords})", f"tok(x, {keywords})"):
                if "pad_to_max_length" not in call and call.startswith("tok("):
                    continue  # the tokenizer call itself has no fix to test unless BL101 fires
                cases[f"{call} | x = {shape} (visible)"] = f"x = {expr}\nout = {call}\n"
                if keywords in (BATCH_KEYWORDS[0], BATCH_KEYWORDS[2]):  # the shape unknown to the linter
                    cases[f"{call} | x = {shape} (parameter)"] = f"def enc(x):\n    return {call}\nout = enc({expr})\n"
    cases["tok.batch_encode_plus(x, True) | x = list"] = f"x = {TEXTS}\nout = tok.batch_encode_plus(x, True)\n"
    cases["tok.batch_encode_plus(batch_text_or_text_pairs=x) | x = pandas Series"] = (
        "x = pd.Series(L)\nout = tok.batch_encode_plus(batch_text_or_text_pairs=x, padding=True)\n")
    for shape, expr in SINGLE.items():
        for keywords in SINGLE_KEYWORDS:
            call = f"tok.encode_plus(x, {keywords})"
            cases[f"{call} | x = {shape} (visible)"] = f"x = {expr}\nout = {call}\n"
            cases[f"{call} | x = {shape} (parameter)"] = f"def enc(x):\n    return {call}\nout = enc({expr})\n"
    cases['tok.encode_plus("hello world", "hi")'] = 'out = tok.encode_plus("hello world", "hi", max_length=12, truncation=True)\n'
    cases["tok(x, pad_to_max_length=True, **opts) | opts holds padding"] = (
        f'opts = {{"padding": "longest"}}\nx = {TEXTS}\nout = tok(x, pad_to_max_length=True, max_length=16, truncation=True, **opts)\n')
    cases["tok(x, pad_to_max_length=True, **opts) | opts without padding"] = (
        f'opts = {{"truncation": True}}\nx = {TEXTS}\nout = tok(x, pad_to_max_length=True, max_length=16, **opts)\n')
    cases["tok(x, pad_to_max_length=True, **opts) | opts unknown"] = (
        f'import sys\nopts = {{"padding": "longest"}} if len(sys.argv) > 9 else {{}}\nx = {TEXTS}\nout = tok(x, pad_to_max_length=True, max_length=16, **opts)\n')
    return cases


# TrainingArguments renames (BL601): (old keyword, value, the field that holds it before, after, derived fields).
RENAMES = [
    ("evaluation_strategy", '"epoch"', "evaluation_strategy", "eval_strategy", ()),
    ("no_cuda", "True", "no_cuda", "use_cpu", ()),
    ("push_to_hub_token", '"x"', "push_to_hub_token", "hub_token", ()),
    ("per_gpu_train_batch_size", "4", "per_gpu_train_batch_size", "per_device_train_batch_size", ("train_batch_size",)),
    ("per_gpu_eval_batch_size", "4", "per_gpu_eval_batch_size", "per_device_eval_batch_size", ("eval_batch_size",)),
    ("torchdynamo", '"eager"', "torchdynamo", "torch_compile_backend", ("torch_compile",)),
    ("fp16_backend", '"auto"', "fp16_backend", "half_precision_backend", ()),
]


def _fixed(body: str) -> tuple[str, list[str]]:
    """The body after every safe fix (as `--fix` applies them, pass after pass), and the codes fixed."""
    text, fixed = HEADER + body, []
    for _ in range(fixer.MAX_PASSES):
        findings = lint_text(text, transformers_version="5.24")
        text, applied = fixer.apply_edits(text, findings, {"safe"})
        if not applied:
            break
        fixed += [f.code for f in applied]
    assert text.startswith(HEADER) and fixer.parses(text)
    return text[len(HEADER):], fixed


@pytest.fixture(scope="module")
def matrix():
    try:
        for version, _ in (*OLD, TARGET):
            releases.release(version)
    except releases.Unavailable as exc:
        pytest.skip(f"the releases cannot be installed (offline?): {exc}")
    cases = _cases()
    fixed = {name: _fixed(body) for name, body in cases.items()}
    bodies, n = [fixed[name][0] for name in cases], len(cases)
    runs = {(v, k): releases.run(v, k, [*cases.values(), *bodies]) for v, k in OLD}  # one process per release: as written, then fixed
    before = {key: dict(zip(cases, results[:n])) for key, results in runs.items()}
    after = {key: dict(zip(cases, results[n:])) for key, results in runs.items()}
    after[TARGET] = dict(zip(cases, releases.run(*TARGET, bodies)))
    table = {name: {"original": cases[name], "fixed": fixed[name][0] if fixed[name][1] else None, "codes": fixed[name][1],
                    **{f"{v} {k}": _cell(before[v, k][name]) for v, k in OLD},
                    **{f"{v} {k} fixed": _cell(after[v, k][name]) for v, k in (*OLD, TARGET)},
                    "verdict": _verdict(name, fixed[name][1], before, after)}
             for name in cases}
    releases.RELEASES.joinpath("fix-differential.json").write_text(json.dumps(table, indent=1))
    return cases, fixed, table


def _cell(result: dict) -> str:
    return "ok" if result["ok"] else result["error"]


def _baselines(name: str) -> list[tuple[str, str]]:
    """The releases where the original call does what it was written for: `pad_to_max_length` padded up to 4.51."""
    return [(v, k) for v, k in OLD if v.startswith("4.30")] if "pad_to_max_length" in name else OLD


def _verdict(name: str, codes: list[str], before: dict, after: dict) -> str:
    """"withheld" (no safe fix), "same" (wherever the original worked, the fixed call gives its outputs on that
    release and on the target), or what differs. On the target the tokenizer is the tokenizers-backed class, as the
    fast one was: a slow tokenizer's own quirks (pairs without special tokens all type 0) are compared on its release."""
    if not codes:
        return "withheld"
    target = after[TARGET][name]
    problems = []
    for v, k in _baselines(name):
        original = before[v, k][name]
        if not original["ok"]:
            continue
        if after[v, k][name] != original:
            problems.append(f"{v} {k}: the fixed call differs on the same release ({_cell(after[v, k][name])})")
        fast = after[v, "fast"][name] if k == "slow" else original
        if target != original and target != fast:
            problems.append(f"{v} {k}: {_cell(target) if not target['ok'] else 'the outputs differ'} on {TARGET[0]}")
    return "; ".join(problems) or "same"


def test_no_safe_fix_changes_what_a_working_call_returns(matrix):
    _, fixed, table = matrix
    broken = [f"{name}: {row['verdict']}\n  fixed: {fixed[name][0]!r}" for name, row in table.items() if row["verdict"] not in ("same", "withheld")]
    assert not broken, "\n".join(broken)


def test_the_cases_of_the_issue_are_wrapped_or_withheld(matrix):
    _, fixed, table = matrix
    for shape in ("numpy array", "pandas .values", "pandas Series", "zip of pairs"):
        body, codes = fixed[f"tok.batch_encode_plus(x, padding=True) | x = {shape} (visible)"]
        assert codes == ["BL608"] and ("list(x)" in body or "x.tolist()" in body), body
        assert table[f"tok.batch_encode_plus(x, padding=True) | x = {shape} (visible)"][f"{TARGET[0]} {TARGET[1]} fixed"] == "ok"
    assert fixed["tok(x, pad_to_max_length=True, **opts) | opts holds padding"][1] == []
    assert fixed["tok(x, pad_to_max_length=True, **opts) | opts unknown"][1] == []
    assert fixed["tok(x, pad_to_max_length=True, **opts) | opts without padding"][1] == ["BL101"]
    assert fixed["tok.batch_encode_plus(x, True) | x = list"][1] == []


def test_every_batch_shape_is_fixed_safely(matrix):
    """The wrap makes the fix safe for every shape: none of the batch calls is left without its safe fix."""
    cases, fixed, _ = matrix
    unfixed = [name for name in cases if name.startswith("tok.batch_encode_plus(x, padding=True) |") and "BL608" not in fixed[name][1]]
    assert not unfixed


ADAMW = [
    "AdamW([p], lr=1e-2)",
    "AdamW([p], lr=1e-2, weight_decay=0.01)",
    "AdamW([p], 1e-3, (0.8, 0.9))",
    "AdamW([p], lr=1e-2, correct_bias=False)",
]
STEPS = "import torch\np = torch.nn.Parameter(torch.linspace(-1, 1, 8))\nopt = {call}\nfor i in range(20):\n    p.grad = torch.sin(3 * p.detach() + i)\n    opt.step()\nout = p.detach()\n"
TRAINER = (
    "from transformers import BertConfig, BertForSequenceClassification, Trainer\n"
    "config = BertConfig(vocab_size=18, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8)\n"
    'trainer = Trainer(model=BertForSequenceClassification(config), args=TrainingArguments("o"), tokenizer=tok)\n'
)


def _renames() -> tuple[list[str], list[str], list]:
    originals, fixes, reads = [], [], []
    for keyword, value, before, after, derived in RENAMES:
        body, codes = _fixed(f'args = TrainingArguments("o", {keyword}={value})\n')
        reads.append((keyword, codes))
        fields = ", ".join(f"args.{f}" for f in derived)
        originals.append(f'args = TrainingArguments("o", {keyword}={value})\nout = [args.{before}, {fields}]\n')
        fixes.append(body + f"out = [args.{after}, {fields}]\n")
    return originals, fixes, reads


def _adamw() -> tuple[list[str], list[str], list]:
    originals = ["from transformers import AdamW\n" + STEPS.format(call=call) for call in ADAMW]
    fixed = [_fixed(body) for body in originals]
    return originals, [body for body, _ in fixed], fixed


def _trainer() -> tuple[list[str], list[str], tuple]:
    body, codes = _fixed(TRAINER)
    return ([TRAINER + "out = [trainer.tokenizer is tok, trainer.args.eval_strategy if hasattr(trainer.args, 'eval_strategy') else trainer.args.evaluation_strategy]\n"],
            [body + "out = [trainer.processing_class is tok, trainer.args.eval_strategy]\n"], (body, codes))


@pytest.fixture(scope="module")
def old_and_new():
    """The bodies of the three tests below, as written on 4.30.2 (fast tokenizer) and fixed on the target (slow): one
    probe process per release for all of them (each body runs in its own namespace), not one per test and release.
    name -> (what the test reads, the results on 4.30.2, the results on the target)."""
    pytest.importorskip("torch")  # the test environment's torch and accelerate serve every release
    try:
        releases.release("4.30.2"), releases.release(TARGET[0])
    except releases.Unavailable as exc:
        pytest.skip(f"the releases cannot be installed (offline?): {exc}")
    parts = {"renames": _renames(), "adamw": _adamw(), "trainer": _trainer()}
    before = releases.run("4.30.2", "fast", [body for originals, _, _ in parts.values() for body in originals])
    after = releases.run(TARGET[0], "slow", [body for _, fixes, _ in parts.values() for body in fixes])
    out, at = {}, 0
    for name, (originals, _, reads) in parts.items():
        out[name] = (reads, before[at : at + len(originals)], after[at : at + len(originals)])
        at += len(originals)
    return out


def test_training_arguments_renames_construct_with_the_same_fields(old_and_new):
    reads, before_runs, after_runs = old_and_new["renames"]
    for (keyword, codes), before, after in zip(reads, before_runs, after_runs):
        assert before["ok"], (keyword, before)
        if codes:  # a safe fix was applied: the target constructs and holds the same values
            assert after == before, (keyword, after, before)
        else:
            assert not after["ok"], (keyword, "no fix, yet the target takes the keyword")
    assert {k for k, codes in reads if not codes} == {"fp16_backend"}  # `half_precision_backend` is gone in 5.x too


def test_the_adamw_fix_takes_the_same_steps(old_and_new):
    """BL604: `transformers.AdamW` on 4.30.2 and the fixed `torch.optim.AdamW` (transformers' defaults written in) on
    5.24 take the same 20 steps, to float32 rounding (the two place `eps` differently inside the bias correction)."""
    fixed, before, after = old_and_new["adamw"]
    for call, (body, codes), old, new in zip(ADAMW, fixed, before, after):
        assert old["ok"], (call, old)
        if "correct_bias" in call:
            assert codes == [], body  # torch has no `correct_bias`: the fix is withheld, the help says what to drop
            continue
        assert codes == ["BL604"] and "from torch.optim import AdamW" in body, body
        assert new["ok"], (call, new)
        assert max(abs(a - b) for a, b in zip(old["out"], new["out"])) < 1e-5, (call, old["out"], new["out"])


def test_the_trainer_tokenizer_rename_hands_over_the_same_tokenizer(old_and_new):
    """BL602: `Trainer(tokenizer=tok)` on 4.30.2 and the fixed `Trainer(processing_class=tok)` on 5.24 construct, and
    the trainer holds the very tokenizer it was given (which it saves with the model and pads with)."""
    (body, codes), [old], [new] = old_and_new["trainer"]
    assert codes == ["BL602"] and "processing_class=tok" in body, body
    assert old == new == {"ok": True, "out": [True, "no"]}, (old, new)
