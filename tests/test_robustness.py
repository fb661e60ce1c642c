"""bertlint never raises an internal error: whatever the input, only findings, BL901 or a problem.

Property-based: generated programs (hypothesmith) and mutated fixtures (truncated, bytes flipped,
lines deleted, moved or spliced from another fixture, odd tokens inserted), linted with fixes on.
In CI the examples are derandomized, so a run is repeatable; `BERTLINT_FUZZ_MINUTES=10` fuzzes
afresh for that long and prints how many inputs it tried. Then named nasty files, one by one.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertlint import runner
from bertlint.config import load_settings
from bertlint.rules import all_codes
from conftest import ROOT, lint_text

FUZZ_MINUTES = float(os.environ.get("BERTLINT_FUZZ_MINUTES") or 0)
SOURCES = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.suffix in (".py", ".ipynb") and ".bertlint_cache" not in p.parts)
HEADER = b"import torch\nimport transformers\nfrom transformers import *\n"  # so that every rule looks at the program
TOKENS = ["(", ")", "[", "]", ":", ",", "=", "**", "lambda", "\\\n", "'", '"""', "\t", "\r", "\r\n", "\x00", "\ufeff", "\x0c",
          "#", "# noqa: BL101", "# bertlint: ignore[BL9", "async ", "await ", "yield", "f'{", "}", "@", ";", "...", "\u00e9", "\U0001f600",
          "padding=", "max_length=", "tokenizer(", "Trainer(", "from_pretrained(", ".to(", "**kwargs", "*args", "if ", "else ", "for x in "]
counts: Counter = Counter()


@functools.cache
def _settings(version: str):
    return load_settings(ROOT / "fixtures", all_codes(), isolated=True, overrides={"transformers_version": version})


def check(path: Path, data: bytes, version: str = "5.23") -> None:
    """Lint (fixes on, as --diff does) and insist on no internal error and only known codes."""
    counts[path.suffix] += 1
    outcome = runner.Outcome()
    settings = _settings(version)
    findings = runner.lint_path(path, data, runner.target_of(settings, path, data), settings, outcome, {"safe", "unsafe"}, write=None)
    assert outcome.internal_errors == [], outcome.internal_errors
    assert {f.code for f in findings} <= set(all_codes())


@st.composite
def mutated_fixtures(draw) -> tuple[Path, bytes, str]:
    path = draw(st.sampled_from(SOURCES))
    data = path.read_bytes()
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["truncate", "flip", "delete", "move", "splice", "insert"]))
        if how == "truncate":
            data = data[: draw(st.integers(0, len(data)))]
        elif how == "flip":
            for _ in range(draw(st.integers(1, 8))):
                if data:
                    i = draw(st.integers(0, len(data) - 1))
                    data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
        elif how in ("delete", "move", "splice"):
            lines = data.splitlines(keepends=True)
            i = draw(st.integers(0, len(lines)))
            j = draw(st.integers(i, min(len(lines), i + 6)))
            chunk, rest = lines[i:j], lines[:i] + lines[j:]
            if how == "splice":
                other = draw(st.sampled_from(SOURCES)).read_bytes().splitlines(keepends=True)
                k = draw(st.integers(0, len(other)))
                chunk = other[k : k + draw(st.integers(1, 12))]
                rest = lines
            at = draw(st.integers(0, len(rest))) if how != "delete" else 0
            data = b"".join(rest[:at] + (chunk if how != "delete" else []) + rest[at:])
        else:
            i = draw(st.integers(0, len(data)))
            data = data[:i] + draw(st.sampled_from(TOKENS)).encode() + data[i:]
    return path, data, draw(st.sampled_from(["5.23", "4.40", "4.20"]))


def fuzz(strategy, test, examples: int, derandomize: bool) -> None:
    """`examples` drawn inputs, each distinct one checked once: hypothesis draws some inputs more than once (in CI
    about a fifth of the mutated fixtures and half of the libcst programs), and a lint is the same every time."""
    checked: set = set()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def prop(value):
        if value not in checked:  # a failing input is checked again when hypothesis replays or shrinks it
            test(value)
            checked.add(value)

    prop()


def _mutant(value) -> None:
    check(*value)


def _program(source: str) -> None:
    check(ROOT / "fixtures" / "_generated.py", HEADER + source.encode("utf-8", "surrogatepass"))


GENERATORS = {  # name: (strategy, check, examples in CI; the slow program generators get fewer)
    "mutated fixtures": (mutated_fixtures(), _mutant, 3000),
    "grammar programs": (hypothesmith.from_grammar(), _program, 150),
    "libcst programs": (hypothesmith.from_node(), _program, 60),
}
pytestmark = [  # hypothesmith compiles odd programs (on 3.11 an invalid escape is a DeprecationWarning, later a SyntaxWarning)
    pytest.mark.filterwarnings("ignore::SyntaxWarning"),
    pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning"),
]


@pytest.mark.parametrize("name", GENERATORS)
def test_no_internal_error_on_generated_input(name):
    strategy, test, examples = GENERATORS[name]
    fuzz(strategy, test, examples, derandomize=True)


@pytest.mark.skipif(not FUZZ_MINUTES, reason="set BERTLINT_FUZZ_MINUTES=10 to fuzz for that long")
def test_extended_fuzzing(capsys):
    deadline = time.monotonic() + FUZZ_MINUTES * 60
    counts.clear()
    tried: Counter = Counter()
    while time.monotonic() < deadline:
        for name, (strategy, test, examples) in GENERATORS.items():
            before = sum(counts.values())
            fuzz(strategy, test, max(1, examples // 10), derandomize=False)
            tried[name] += sum(counts.values()) - before
    with capsys.disabled():
        print(f"\nextended fuzzing: {sum(tried.values())} inputs in {FUZZ_MINUTES:g} min, no internal error: {dict(tried)}")


# --- named cases -------------------------------------------------------------------------------

BAD = b'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\nenc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)\n'


# A string libcst parses and CPython refuses: BL103 reads its value (an internal error until the engine caught it).
ESCAPE = b"""import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
ids = tokenizer.convert_tokens_to_ids(["\\N{bogus}"] + tokenizer.tokenize("hello"))
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
out = model(input_ids=torch.tensor([ids]))
"""


def _file(name: str, data: bytes):
    def make(root: Path) -> Path:
        (root / name).write_bytes(data)
        return root / name
    return make


def _symlink_loop(root: Path) -> Path:
    (root / "loop").symlink_to(root)
    (root / "self.py").symlink_to(root / "self.py")
    return root


def _folder_named_py(root: Path) -> Path:
    (root / "x.py").mkdir()
    (root / "x.py" / "inner.py").write_bytes(BAD)
    return root / "x.py"


NAMED = [
    # (id, make the case under a folder and return what to lint, exit code alone, text in the output)
    ("non-utf8", _file("latin.py", b"x = '\xe9t\xe9'\n"), 1, "latin.py:1:1: BL901 the file is not valid utf-8 (byte 0xe9 at offset 5)"),
    ("utf8-bom", _file("bom.py", b"\xef\xbb\xbf" + BAD), 1, "bom.py:3:54: BL101"),
    ("crlf", _file("crlf.py", BAD.replace(b"\n", b"\r\n")), 1, "crlf.py:3:54: BL101"),
    ("tabs", _file("tabs.py", BAD.replace(b"\ntok", b"\ndef f():\n\ttok").replace(b"\nenc", b"\n\tenc")), 1, "tabs.py:4:55: BL101"),
    ("mixed-tabs", _file("mixed.py", b"if x:\n\ty = 1\n        z = 2\n"), 1, "mixed.py:3:1: BL901 TabError: inconsistent use of tabs and spaces in indentation"),
    ("tab-then-spaces", _file("tabspaces.py", b"def f(xs):\n    out = []\n    for x in xs:\n\t    out.append(x)\n    return out\n"), 0,
     "tabspaces.py:4:1: not linted: Python 3."),  # Python compiles it, libcst cannot read it: no finding, no failed run
    ("10MB", _file("generated.py", b"x = 1\n" * 1_800_000), 1, "more than the 2 MiB bertlint analyses"),
    ("500-nested-parens", _file("nested.py", b"x = " + b"(" * 500 + b"1" + b")" * 500 + b"\n"), 1, "nested.py:1:205: BL901 SyntaxError: too many nested parentheses"),
    ("500-chained-calls", _file("chain.py", b"import transformers\nx = a" + b".b()" * 500 + b"\n"), 0, "All checks passed!"),  # valid Python: analysed
    ("500-nested-blocks", _file("blocks.py", b"".join(b" " * i + b"if x:\n" for i in range(500)) + b" " * 500 + b"pass\n"), 1, "blocks.py:101:1: BL901 IndentationError: too many levels of indentation"),
    ("binary", _file("image.py", bytes(range(256)) * 64), 1, "BL901 the file is not valid utf-8"),
    ("nul-bytes", _file("nul.py", b"x = 1\x00\x00\ny = 2\n"), 1, "nul.py:1:6: BL901 SyntaxError: source code string cannot contain null bytes"),
    ("bad-escape", _file("escape.py", ESCAPE), 1, "escape.py:5:51: BL901 SyntaxError: (unicode error)"),
    ("symlink-loop", _symlink_loop, 0, "symbolic link loop"),  # inside a walked folder: a warning, skipped
    ("folder-named-py", _folder_named_py, 1, "inner.py:3:54: BL101"),
    ("empty", _file("empty.py", b""), 0, "All checks passed!"),
    ("only-comments", _file("comments.py", b"# just a note\n# and another\n"), 0, "All checks passed!"),
    ("notebook-not-json", _file("broken.ipynb", b"{ this is not json"), 1, "BL901 invalid notebook: the file is not JSON"),
]


def bertlint(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "bertlint", "--isolated", "--preview", "--format", "concise", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(("make", "code", "text"), [case[1:] for case in NAMED], ids=[case[0] for case in NAMED])
def test_named_case_alone(tmp_path, make, code, text):
    result = bertlint(make(tmp_path), cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == code, output
    assert text in output
    assert "internal error" not in output and "Traceback" not in output


def test_named_cases_together_do_not_stop_the_run(tmp_path):
    for index, (_, make, _, _) in enumerate(NAMED):
        folder = tmp_path / f"case{index:02}"
        folder.mkdir()
        make(folder)
    (tmp_path / "zz_last.py").write_bytes(BAD)
    result = bertlint(tmp_path, cwd=tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # findings; the symlink loop inside the tree is only a warning
    assert "zz_last.py:3:54: BL101" in output
    for name, _, _, text in NAMED:
        if text != "All checks passed!":
            assert text in output, name


def test_unreadable_file_is_a_problem_and_the_run_goes_on(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bertlint import cli

    (tmp_path / "secret.py").write_bytes(BAD)
    (tmp_path / "open.py").write_bytes(BAD)
    real = Path.read_bytes

    def read_bytes(self):
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)  # root may read anything, so chmod 000 proves nothing
    result = CliRunner().invoke(cli.main, ["--isolated", "--preview", "--no-cache", "--format", "concise", str(tmp_path)])
    assert result.exit_code == 2
    assert f"bertlint: error: {tmp_path / 'secret.py'}: Permission denied" in result.output
    assert "open.py:3:54: BL101" in result.output


def test_internal_error_is_reported_with_its_rule_and_the_run_goes_on(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from bertlint import cli
    from bertlint.rules import bl101

    (tmp_path / "a.py").write_bytes(BAD)
    (tmp_path / "b.py").write_bytes(BAD)
    real = bl101._message

    def broken(ctx, speed):
        if ctx.facts.path.name == "a.py":
            raise IndexError("list index out of range")
        return real(ctx, speed)

    monkeypatch.setattr(bl101, "_message", broken)
    result = CliRunner().invoke(cli.main, ["--isolated", "--preview", "--no-cache", "--format", "concise", "--jobs", "1", str(tmp_path)])
    assert result.exit_code == 2
    assert f"bertlint: internal error in rule BL101 on {tmp_path / 'a.py'}:3: IndexError" in result.output
    assert "please report it" in result.output
    assert "b.py:3:54: BL101" in result.output


# --- positions: the cheap path gives libcst's own answer ------------------------------------------


@pytest.mark.parametrize("path", SOURCES[::10] + [ROOT / "benchmarks" / "data" / "train_classifier.py"], ids=lambda p: p.name)
def test_positions_of_some_nodes_match_libcst(path):
    import libcst as cst

    from bertlint import engine
    from bertlint.facts import walk

    from bertlint.ipython import mask_script

    if path.suffix != ".py":
        pytest.skip("a notebook is positioned cell by cell")
    text = path.read_text(encoding="utf-8")
    try:
        module = cst.parse_module(mask_script(text) or text)  # a cell script or a notebook export: masked, as it is linted
    except cst.ParserSyntaxError:
        pytest.skip("a file Python refuses (a BL901 fixture) has no positions")
    expected = cst.MetadataWrapper(module, unsafe_skip_copy=True).resolve(cst.metadata.PositionProvider)
    nodes = [n for n in walk(module) if isinstance(n, (cst.Call, cst.Arg, cst.SimpleStatementLine, cst.FunctionDef))]
    nodes += [s.trailing_whitespace.comment for s in module.body if isinstance(s, cst.SimpleStatementLine) and s.trailing_whitespace.comment]
    assert nodes
    found = engine.positions_of(module, nodes)
    assert {n: found[n] for n in nodes} == {n: expected[n] for n in nodes}
    assert dict(engine.positions_of(module)) == dict(expected)


def test_invalid_escapes_and_bytes_keys_print_nothing_and_raise_nothing(tmp_path):
    """`"\\d"` makes a literal's evaluation warn (a SyntaxWarning on stderr from 3.12); that is the user's
    code talking, not bertlint. A bytes key where a column name is expected is no label column."""
    source = (
        "import pandas as pd\nfrom transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        'tok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
        'model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)\n'
        'labels = pd.read_csv("x.csv")[b"label"].values\n'
        'enc = tok(["\\m"], padding="max\\_length", max_length=8, truncation=True)\n'
        "def collate(batch):\n"
        '    out = tok(batch, padding="max_length", max_length=16, truncation=True)\n'
        '    out[b"labels"] = tok(batch, padding="longest")["input_ids"]\n'
        "    return out\n"
        'ids = tok.convert_tokens_to_ids(["\\[CLS]"] + tok.tokenize("hello"))\n'
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        findings = lint_text(source, tmp_path / "train.py")
    assert [str(w.message) for w in caught] == []
    assert [f.code for f in findings] == []


def test_a_file_over_the_size_limit_is_one_finding_and_the_run_goes_on(tmp_path):
    """More than MAX_SOURCE_CHARS of code (generated data): one BL901 at 1:1 that gives the size rounded up, the
    limit and what to do; the other files are checked, the exit code is that of findings (1), and no parse is
    tried (it would take libcst ~20 s and ~1 GiB). A notebook is measured by its code, not its outputs."""
    import json

    from bertlint.engine import MAX_SOURCE_CHARS

    line = b"x = 1\n"
    (tmp_path / "generated.py").write_bytes(line * (MAX_SOURCE_CHARS // len(line) + 1))  # 2 MiB + 4 characters
    (tmp_path / "train.py").write_bytes(BAD)
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo" * 300_000}}  # 3.3 MB
    cell = {"cell_type": "code", "metadata": {}, "execution_count": 1, "source": BAD.decode(), "outputs": [image]}
    (tmp_path / "plots.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    started = time.perf_counter()
    result = bertlint(".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [line.split(" ", 2)[:2] for line in result.stdout.splitlines()[:3]] == [
        ["generated.py:1:1:", "BL901"], ["plots.ipynb:cell", "1:3:54:"], ["train.py:3:54:", "BL101"]], result.stdout
    assert result.stdout.splitlines()[0].endswith(
        "BL901 the file has 2.1 MiB of code, more than the 2 MiB bertlint analyses, so it was not "
        "checked; if it is generated, exclude it (`extend-exclude` in the config, or `--extend-exclude`)")
    assert time.perf_counter() - started < 15


def test_a_file_python_compiles_but_bertlint_cannot_analyse_is_a_notice_for_the_whole_file(monkeypatch):
    """Recursion (or memory) running out inside bertlint on a file CPython compiles is bertlint's limit: no BL901, a
    notice with no place (the whole file; in a notebook, the whole notebook), and nothing else."""
    from bertlint import engine, notebook
    from bertlint.target import target_version

    def exhausted(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(engine, "_analyse", exhausted)
    path = ROOT / "tests" / "_snippet.py"
    settings = load_settings(path.parent, all_codes(), isolated=True)
    notices = []
    assert engine.lint_source("x = 1\n", path, settings, target=target_version(settings, path, ""), notices=notices) == []
    [notice] = notices
    assert notice.line == 0 and str(notice).startswith(f"{path}: not linted: Python 3.") and "nests too deeply" in str(notice)
    notices.clear()
    text = notebook.from_cells([("code", "x = 1\n"), ("code", "y = 2\n")])
    assert notebook.lint_text(text, path.with_suffix(".ipynb"), settings, target=target_version(settings, path, ""), notices=notices) == []
    assert [(n.cell, n.line) for n in notices] == [(None, 0)]
