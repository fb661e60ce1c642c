"""Notebooks: IPython masking, findings placed in cells, byte-preserving fixes, invalid files, fixtures."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import notebook
from bertlint.cli import main
from bertlint.config import load_settings
from bertlint.report import Edit, Finding, Fix
from bertlint.rules import all_codes
from bertlint.target import target_version
from conftest import PINNED_VERSION, ROOT

NOTEBOOKS = ROOT / "fixtures" / "notebooks"
SEED = NOTEBOOKS / "seed000_colab_short_sequences.ipynb"
LOAD = "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"
PAD = "enc = tok(['a', 'bb'], pad_to_max_length=True, max_length=8, truncation=True)\n"


def settings(path: Path, **overrides):
    return load_settings(path.parent, all_codes(), isolated=True, overrides={"transformers_version": PINNED_VERSION, **overrides})


def lint(text: str, path: Path = NOTEBOOKS / "_snippet.ipynb", **overrides) -> list[Finding]:
    chosen = settings(path, **overrides)
    return notebook.lint_text(text, path, chosen, target=target_version(chosen, path, text))


def nb_json(*cells: tuple[str, str | list[str]], indent: int | None = 1) -> str:
    return json.dumps({
        "cells": [{"cell_type": kind, "metadata": {}, "source": source, **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                  for kind, source in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }, indent=indent)


def where(findings) -> list[tuple]:
    return [(f.cell, f.line, f.column, f.code) for f in findings]


def cli(*args: str):
    return CliRunner().invoke(main, ["--transformers-version", PINNED_VERSION, "--preview", *args])


# --- masking ---------------------------------------------------------------------------------


@pytest.mark.parametrize("line, masked", [
    ("!pip install transformers\n", "0                        \n"),
    ("%matplotlib inline\n", "0                 \n"),
    ("files = !ls data\n", "files = 0       \n"),
    ("a, b = %who_ls\n", "a, b = 0      \n"),
    ("    !wc -l {name}\n", "    0            \n"),
    ("%time enc = tok(x)\n", "0;    enc = tok(x)\n"),
    ("%timeit -n 3 f(x)\n", "0                \n"),
    ("%time for b in batches: step(b)\n", "0                              \n"),  # `0; for` would not parse
    ("%time with torch.no_grad(): model(x)\n", "0                                   \n"),
    ("%time format_batch(x)\n", "0;    format_batch(x)\n"),  # a name that starts like a keyword is no compound
    ("tok?\n", "0   \n"),
    ("??tok.encode\n", "0           \n"),
    ("%timeit?\n", "0       \n"),
    ("enc[0]?\n", "0      \n"),
    ("x = tok?\n", "0       \n"),  # IPython asks for help on `tok`; the assignment goes
    ("tok? \n", "tok? \n"),  # a trailing space: IPython's help pattern fails, the line stays (a syntax error)
    ("tok?  # what\n", "tok?  # what\n"),  # a comment is the line's last token: no help
    ("a[0] = !ls\n", "a[0] = 0  \n"),
    ("x: list = !ls\n", "x: list = 0  \n"),
    ("x == !ls\n", "x == !ls\n"),  # no `=` of its own: not an assignment from the shell
    (",print a b\n", "0         \n"),  # IPython's `print("a", "b")`
    ("/ a b\n", "/ a b\n"),  # `/` needs a callable: IPython leaves the line as it is
    ("x = 5 % 3\n", "x = 5 % 3\n"),
    ("print('!')  # why?\n", "print('!')  # why?\n"),
])
def test_mask_keeps_length_and_python(line: str, masked: str) -> None:
    assert notebook.mask(line) == masked


def test_mask_only_at_the_start_of_a_logical_line() -> None:
    source = 'HELP = """\n!text\n"""\nx = f(1,\n      %2)\ny = 1 + \\\n    !z\n'
    assert notebook.mask(source) == source


def test_a_backslash_continues_an_escape_onto_the_next_lines() -> None:
    """IPython joins `!cmd \\` with the lines it continues into one shell command: they are masked too."""
    lines = ["!pip install \\", "    transformers \\", "    datasets", "files = !ls \\", "  -la", "x = 1"]
    masked = ["0".ljust(14), " " * 18, " " * 12, "files = 0".ljust(13), " " * 5, "x = 1"]
    assert notebook.mask("\n".join(lines) + "\n") == "\n".join(masked) + "\n"
    assert notebook.mask("%time x = \\\n    1\n") == "0;    x = \\\n    1\n"  # the statement goes on as Python
    text = nb_json(("code", LOAD + "!pip install -q \\\n    transformers\n" + PAD))
    assert where(lint(text)) == [(1, 5, 24, "BL101")]


def test_a_timed_one_line_loop_is_no_syntax_error() -> None:
    """`%time for b in batches: step(b)` runs in IPython; it must not become a BL901 for its cell."""
    text = nb_json(("code", LOAD), ("code", "%time for _ in range(3): pass\n" + PAD))
    assert where(lint(text)) == [(2, 2, 24, "BL101")]


def test_a_cell_ipython_dedents_is_linted_at_its_own_columns(tmp_path: Path) -> None:
    """Code pasted with an indent runs in IPython (it removes the first line's indent from every line
    that has it): no BL901, and findings keep the columns of the cell as written."""
    pasted = "    " + PAD + "    if enc:\n        print(enc)\n"
    text = nb_json(("code", LOAD), ("code", pasted))
    [finding] = lint(text)
    assert where([finding]) == [(2, 1, 28, "BL101")] and finding.source_line.startswith("    enc = tok(")
    assert finding.fix is None  # a fix's new text would not carry the cell's indent
    broken = nb_json(("code", "    x = (\n"))
    assert where(lint(broken)) == [(1, 1, 9, "BL901")]  # the error's column too is the cell's
    path = tmp_path / "pasted.ipynb"
    path.write_text(text, encoding="utf-8")
    assert cli("--add-noqa", str(path)).exit_code == 0
    assert "".join(json.loads(path.read_text())["cells"][1]["source"]).startswith(f"    {PAD[:-1]}  # noqa: BL101\n    if enc:")


def test_a_writefile_script_cell_is_linted_as_a_script_of_its_own(tmp_path: Path) -> None:
    """Colab's `%%writefile train.py` then `!python train.py`: the cell is a whole script. Its findings
    carry the cell; its names are not the notebook's; `-a` (a fragment) and other files are left alone."""
    script = "%%writefile train.py\n" + LOAD + PAD
    text = nb_json(("code", "import os\n"), ("code", script), ("code", PAD), ("code", "%%writefile -a train.py\n" + PAD),
                   ("code", "%%writefile notes.txt\nenc = tok(pad_to_max_length=True)\n"))
    assert where(lint(text)) == [(2, 4, 24, "BL101")]  # cell 3's `tok` is the script's, not the notebook's
    path = tmp_path / "colab.ipynb"
    path.write_text(text, encoding="utf-8")
    assert cli("--fix", str(path)).exit_code == 0
    assert json.loads(path.read_text())["cells"][1]["source"] == script.replace("pad_to_max_length=True", 'padding="max_length"')
    broken = nb_json(("code", "%%writefile train.py\nx = (\n"))
    assert [code for *_, code in where(lint(broken))] == ["BL901"]  # the written script would not run


def test_cell_magics() -> None:
    assert notebook.mask("%%capture out\nimport torch\n") == "0            \nimport torch\n"
    assert notebook.mask("%%bash\necho hi\n") is None


def test_a_cell_magic_after_blank_lines_is_still_the_cell_magic() -> None:
    """IPython drops a cell's leading blank lines before it looks for `%%`."""
    assert notebook.mask("\n  \n%%bash\necho hi\n") is None
    assert notebook.mask("\n%%capture\nimport torch\n") == "\n0        \nimport torch\n"
    assert where(lint(nb_json(("code", LOAD), ("code", "\n%%bash\npip install -q transformers\n"), ("code", PAD)))) == [(3, 1, 24, "BL101")]


# --- IPython's automagic, pasted prompts, what a broken cell holds ------------------------------


def test_a_one_line_magic_without_percent_runs_as_the_magic() -> None:
    """IPython's prefilter runs a cell of one line that starts with a line magic's name as that magic
    (`pip install ...`, `cd data`, `load_ext autoreload`): no BL901, and the line is not linted as Python."""
    for cell in ("pip install -q transformers", "cd /content/data", "load_ext autoreload", "matplotlib inline", "  ls -la\n"):
        assert where(lint(nb_json(("code", LOAD), ("code", cell), ("code", PAD)))) == [(3, 1, 24, "BL101")], cell


def test_a_magic_without_percent_in_a_cell_of_several_lines_is_bl901_that_says_why() -> None:
    [finding] = lint(nb_json(("code", "import os\npip install -q transformers\n")))
    assert where([finding]) == [(1, 2, 1, "BL901")]
    assert finding.message.startswith("`pip install -q transformers` runs as the `%pip` magic without `%` only as a cell's one line")
    assert "write `%pip install -q transformers`" in finding.message
    [blank] = lint(nb_json(("code", "pip install -q transformers\n\n")))  # IPython counts the blank line
    assert "a blank line after it counts as one" in blank.message


def test_a_variable_of_the_magics_name_shadows_automagic() -> None:
    """`pip = ...` in an earlier cell: IPython runs `pip install x` as Python, a syntax error."""
    [finding] = lint(nb_json(("code", "pip = 'pip3'\n"), ("code", "pip install transformers")))
    assert where([finding]) == [(2, 1, 1, "BL901")]
    assert finding.message.startswith("`pip` is a name this notebook binds in an earlier cell")
    inside = nb_json(("code", "def f():\n    pip = 1\nobj.pip = 1\n"), ("code", "pip install transformers"))
    assert lint(inside) == []  # a function's local name, an attribute: they shadow nothing
    for binding in ("import pip", "from x import y as pip", "for pip in [1]: pass", "with f() as pip: pass", "if x:\n    pip, y = 1, 2"):
        assert [f.code for f in lint(nb_json(("code", binding + "\n"), ("code", "pip install transformers")))] == ["BL901"], binding
    deleted = "try:\n    1 / 0\nexcept ZeroDivisionError as pip:\n    pass\n"  # Python deletes the name after the handler
    assert lint(nb_json(("code", deleted), ("code", "pip install transformers"))) == []
    assert lint(nb_json(("code", "pip = 'pip3'\n"), ("code", "pip"))) == []  # Python either way


def test_an_extension_loaded_earlier_adds_its_magics_to_automagic() -> None:
    """`%load_ext autoreload` adds `%autoreload`/`%aimport`: a later one-line `autoreload 2` runs. An
    extension bertlint does not know may add any magic: after it, such a one-line cell is left alone."""
    assert lint(nb_json(("code", "%load_ext autoreload"), ("code", "autoreload 2"))) == []
    assert [f.code for f in lint(nb_json(("code", "import os"), ("code", "autoreload 2")))] == ["BL901"]
    assert lint(nb_json(("code", "load_ext tensorboard"), ("code", "tensorboard --logdir runs"))) == []
    assert [f.code for f in lint(nb_json(("code", "import os"), ("code", "tensorboard --logdir runs")))] == ["BL901"]
    assert [f.code for f in lint(nb_json(("code", "%load_ext tensorboard"), ("code", "print install x")))] == ["BL901"]  # a builtin
    assert lint(nb_json(("code", "store model_name"))) == []  # storemagic: loaded by IPython's kernel by default


@pytest.mark.parametrize("cell, message", [
    ("curl -O https://example.org/data.zip\nunzip data.zip\n", "this cell holds shell commands, not Python: prefix each with `!`, or make the first line `%%bash`"),
    ("$ pip3 install transformers", "this cell holds shell commands, not Python"),
    ("import os\ngcloud auth login\n", "`gcloud auth login` is a shell command, not Python: prefix it with `!`"),
    ("This notebook fine-tunes BERT on IMDB reviews.", "this cell holds text, not Python: make it a markdown cell"),
    ("x = 1\nNow we train the model for three epochs\n", "this line is text, not Python: turn it into a `#` comment"),
])
def test_bl901_says_what_a_cell_holds_instead_of_python(cell: str, message: str) -> None:
    [finding] = lint(nb_json(("code", cell)))
    assert finding.code == "BL901" and finding.message.startswith(message) and "(SyntaxError: " in finding.message
    assert finding.column == 1


@pytest.mark.parametrize("cell, line, column", [
    ("def f(:\n    pass\n", 1, 7),
    ("print install x\n", 1, 1),  # Python's own message ("Missing parentheses in call to 'print'") is better
    ("import os sys\n", 1, 11),  # a keyword first: no prose
])
def test_python_gone_wrong_keeps_pythons_message(cell: str, line: int, column: int) -> None:
    [finding] = lint(nb_json(("code", cell)))
    assert finding.message.startswith("SyntaxError: ") and (finding.line, finding.column) == (line, column)


def test_pasted_prompts_are_stripped_as_ipython_does() -> None:
    """A doctest pasted with its `>>> `/`... ` prompts, or an IPython session with `In [1]: `, runs:
    findings keep the cell's columns; a fix is withheld (its text would lack the prompt)."""
    doctest = ">>> from transformers import AutoTokenizer\n>>> tok = AutoTokenizer.from_pretrained('bert-base-uncased')\n>>> " + PAD
    [finding] = lint(nb_json(("code", doctest)))
    assert where([finding]) == [(1, 3, 28, "BL101")] and finding.fix is None
    session = "In [1]: " + LOAD.replace("\ntok", "\n   ...: tok") + "In [2]: " + PAD
    assert where(lint(nb_json(("code", session)))) == [(1, 3, 32, "BL101")]
    assert lint(nb_json(("code", "x = 1\ny = 2\n>>> z = 3\n"))) == []  # IPython 9 strips a `>>>` on any line
    assert [f.code for f in lint(nb_json(("code", "x = 1\ny = 2\n... z\n")))] == ["BL901"]  # `...` without `>>>`: Python's Ellipsis


def test_fix_leaves_ipython_syntax_cells_byte_identical(tmp_path: Path) -> None:
    """--fix on a notebook full of IPython syntax changes the one line it fixes and nothing else."""
    cells = ["pip install -q transformers==4.30.0", "%load_ext autoreload\n%autoreload 2\n", "%%bash\necho pad_to_max_length=True\n",
             "files = !ls data\ntok?\n%time n = len(files)\n", ">>> x = tok(['a'], pad_to_max_length=True)\n", "cd /content",
             "%%capture\n!pip install datasets\n", "%%html\n<b>pad_to_max_length=True</b>\n"]
    path = tmp_path / "nb.ipynb"
    path.write_text(nb_json(("code", LOAD), *[("code", c) for c in cells], ("code", PAD)), encoding="utf-8")
    before = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cli("--fix", str(path)).exit_code == 1  # the withheld fix in the prompt cell stays a finding
    after = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert after[1:-1] == before[1:-1] and after[-1]["source"] == PAD.replace("pad_to_max_length=True", 'padding="max_length"')


# --- the notebook's own pin ------------------------------------------------------------------

TRAIN = 'from transformers import TrainingArguments\nargs = TrainingArguments("out", evaluation_strategy="epoch")\n'


@pytest.mark.parametrize("install", [
    "pip install -q transformers==4.30.0",  # automagic
    "!pip install -q transformers==4.30.0",
    "%pip install -U transformers==4.30.0",
    "%%capture\n!pip3 install -q 'transformers[torch]~=4.30.0' datasets\n",
    "!python -m pip install 'transformers>=4.29,<4.31'",
    "%%writefile requirements.txt\ndatasets\ntransformers==4.30.0  # the tutorial's\n\n!pip install -r requirements.txt",
    "%%writefile reqs.txt\ntransformers==4.30.0\n\n%pip install --requirement=reqs.txt",
])
def test_an_install_cell_pins_the_notebooks_target(tmp_path: Path, install: str) -> None:
    """Acceptance: the automagic `pip install transformers==4.30.0` cell pins the target as `!pip install`
    does: `evaluation_strategy=` (removed in 4.51) is no BL601 on 4.30."""
    path = tmp_path / "nb.ipynb"
    unpinned = load_settings(tmp_path, all_codes(), isolated=True)
    pinned = nb_json(("markdown", "# setup"), ("code", install), ("code", TRAIN))
    if "%%writefile" in install:  # the file written by one cell, installed by the next
        pinned = nb_json(("markdown", "# setup"), *[("code", cell) for cell in install.split("\n\n")], ("code", TRAIN))
    version, source = target_version(unpinned, path, pinned)
    installed_in = 3 if "%%writefile" in install else 2
    assert version == (4, 30, 0) and source.startswith("the pin transformers") and f" in cell {installed_in} (`" in source
    assert notebook.lint_text(pinned, path, unpinned, target=(version, source)) == []
    bare = nb_json(("code", "import os"), ("code", TRAIN))
    assert [f.code for f in notebook.lint_text(bare, path, unpinned, target=target_version(unpinned, path, bare))] == ["BL601"]


@pytest.mark.parametrize("install", [
    "import os\npip install transformers==4.30.0",  # no automagic in a cell of two lines: BL901, no pin
    "!pip install transformers>=4.30",  # the shell's redirection: installs the newest
    "!pip install transformers",
    "%%html\n<code>pip install transformers==4.30.0</code>",
    "# pip install transformers==4.30.0",
    "%%writefile requirements.txt\ntransformers==4.30.0\n",  # written, never installed
    "!pip install -r requirements.txt",  # a file the notebook did not write: the project's requirement files decide
])
def test_what_pins_nothing(tmp_path: Path, install: str) -> None:
    unpinned = load_settings(tmp_path, all_codes(), isolated=True)
    text = nb_json(("code", install))
    assert "cell" not in target_version(unpinned, tmp_path / "nb.ipynb", text)[1]


def test_a_notebook_pin_on_the_command_line(tmp_path: Path) -> None:
    """The run's target stage reads the notebook's bytes: its install cell decides, and --show-settings says so."""
    path = tmp_path / "nb.ipynb"
    path.write_text(nb_json(("code", "!pip install -q transformers==4.30.0"), ("code", TRAIN)), encoding="utf-8")
    assert CliRunner().invoke(main, ["--isolated", str(path)]).exit_code == 0
    shown = CliRunner().invoke(main, ["--isolated", "--show-settings", str(path)]).output
    assert 'transformers-version = "4.30 (the pin transformers==4.30.0 in cell 1 (`pip install -q transformers==4.30.0`))"' in shown


def test_the_configured_version_wins_over_the_notebooks_pin(tmp_path: Path) -> None:
    text = nb_json(("code", "!pip install transformers==4.30.0"), ("code", TRAIN))
    assert [f.code for f in lint(text, tmp_path / "nb.ipynb")] == ["BL601"]  # the tests' --transformers-version


# --- linting ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cells, codes", [
    (["from torchtext.data import Field", TRAIN], []),  # removed in torchtext 0.9; unpinned: the newest release
    (["import torchtext\nTEXT = torchtext.data.Field(lower=True)", TRAIN], []),
    (["from transformers import TextDataset", TRAIN], []),  # removed in transformers 5.0; the tests' target is 5.x
    (["import torchtext", TRAIN], ["BL601"]),  # the module is still there
    ([TRAIN, "from torchtext.data import Field"], ["BL601"]),  # the refusal comes after
    (["print(tokenizer)", TRAIN], ["BL601"]),  # a name the cells never bind: the kernel may hold it from a deleted cell
    (["!pip install torchtext==0.8.1", "from torchtext.data import Field", TRAIN], ["BL601"]),  # the pinned release has it
    (["try:\n    from torchtext.data import Field\nexcept ImportError:\n    Field = None", TRAIN], ["BL601"]),
])
def test_run_all_stops_at_the_first_cell_a_library_refuses(tmp_path: Path, cells: list[str], codes: list[str]) -> None:
    """A notebook's Run All stops at the first cell that raises, as a script does: a library's certain refusal (an API
    the target release removed, that no rule reports) silences what comes after it; a name's binding stops nothing in
    a notebook (its kernel may hold names of cells since deleted)."""
    path = tmp_path / "nb.ipynb"
    text = nb_json(*[("code", cell) for cell in cells])
    assert [f.code for f in lint(text, path)] == codes



def test_names_flow_across_cells_and_cells_count_markdown() -> None:
    text = nb_json(("markdown", "# title"), ("code", LOAD), ("markdown", "text"), ("code", "!pip list\n" + PAD))
    assert where(lint(text)) == [(4, 2, 24, "BL101")]


def test_suppressions_work_inside_cells() -> None:
    text = nb_json(("code", LOAD + "x = 1  # noqa: BL101\n"), ("code", PAD.replace("\n", "  # noqa: BL101\n")))
    assert where(lint(text)) == [(1, 3, 8, "BL902")]


def test_finding_keeps_the_original_source_line_and_a_cell_local_fix() -> None:
    [finding] = lint(nb_json(("code", LOAD), ("code", "%time " + PAD)))
    assert finding.source_line == "%time " + PAD.rstrip("\n")
    assert [(e.line, e.column, e.content) for e in finding.fix.edits] == [(1, 30, "padding"), (1, 48, '"max_length"')]


def test_a_broken_cell_is_bl901_and_the_others_are_still_linted() -> None:
    """The cells before it (Run All stops at it: those after it never run, see below)."""
    text = nb_json(("code", LOAD), ("code", PAD), ("code", "def f(:\n    pass\n"))
    assert where(lint(text)) == [(2, 1, 24, "BL101"), (3, 1, 7, "BL901")]
    assert where(lint(text, ignore=["BL901"])) == [(2, 1, 24, "BL101")]


def test_other_language_cells_are_not_linted() -> None:
    assert lint(nb_json(("code", LOAD), ("code", "%%bash\n" + PAD), ("raw", PAD))) == []


def test_a_fix_reaching_into_another_cell_is_dropped() -> None:
    module = notebook._Module([notebook.Cell(1, "a = 1\n"), notebook.Cell(3, "b = 2\nc = 3\n")])
    finding = Finding("BL101", "n", "error", "m", "h", "nb.ipynb", 2, 1, 2, 2)
    local = Fix("safe", "f", (Edit(3, 1, 3, 2, "x"),))
    placed = module.place(Finding(**{**finding.__dict__, "fix": local}))
    assert (placed.cell, placed.line, placed.fix.edits) == (3, 1, (Edit(2, 1, 2, 2, "x"),))
    across = Fix("safe", "f", (Edit(1, 1, 1, 2, "x"),))
    assert module.place(Finding(**{**finding.__dict__, "fix": across})).fix is None


@pytest.mark.parametrize("text, message", [
    ('{"cells": [', "invalid notebook: the file is not JSON"),
    ('{"nbformat": 3, "worksheets": []}', "bertlint reads nbformat 4 notebooks, this one has nbformat 3"),
    ('[1, 2]', "this one has no nbformat key"),
    ('{"nbformat": 4, "cells": {}}', 'it has no "cells" list'),
    ('{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "code cell 1 has no source, or one that is not text"),
])
def test_invalid_notebook_is_one_bl901(text: str, message: str) -> None:
    [finding] = lint(text)
    assert finding.code == "BL901" and finding.cell is None and message in finding.message


# --- command line ----------------------------------------------------------------------------


def test_seed_notebook_on_the_command_line(tmp_path: Path) -> None:
    """The Colab story: the findings carry their cell and a line inside it, in `full` and `json`."""
    copy = tmp_path / SEED.name
    shutil.copy(SEED, copy)
    full = cli(str(copy))
    assert f"{copy}:cell 7:4:34: BL102" in full.output
    assert f"{copy}:cell 9:2:26: BL101 [*]" in full.output
    assert "4 | inputs = tokenizer(example_text, max_length=max_seq_len, padding=True, return_tensors=\"pt\")" in full.output
    rows = json.loads(cli("--format", "json", str(copy)).output)
    assert {(r["cell"], r["line"], r["column"], r["code"]) for r in rows} >= {(5, 8, 22, "BL201"), (7, 4, 34, "BL102"), (9, 2, 26, "BL101")}


def test_fix_changes_only_the_affected_source_bytes(tmp_path: Path) -> None:
    copy = tmp_path / SEED.name
    shutil.copy(SEED, copy)
    before = copy.read_text(encoding="utf-8")
    result = cli("--fix", str(copy))
    after = copy.read_text(encoding="utf-8")
    old = json.loads(before)["cells"]
    new = json.loads(after)["cells"]
    changed = [i for i, (a, b) in enumerate(zip(old, new)) if a != b]
    assert changed == [8] and "fixed" in result.output
    # three short literal sentences cannot exceed max_seq_len: BL105 does not ask for truncation there
    assert new[8]["source"][1] == 'batch = tokenizer(texts, padding="max_length", max_length=max_seq_len, return_tensors="pt")\n'
    assert [{k: v for k, v in c.items() if k != "source"} for c in new] == [{k: v for k, v in c.items() if k != "source"} for c in old]
    # byte for byte: everything but the one changed line of the list is identical
    diff = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(before.splitlines()) == len(after.splitlines()) and len(diff) == 1 and "pad_to_max_length" in diff[0][0]


def test_fix_keeps_string_style_and_unchanged_list_lines(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    text = nb_json(("code", LOAD), ("code", "%time " + PAD), ("code", [PAD, "y = '\\u00e9'\n"]), indent=2)
    text = text.replace('"y = \'\\\\u00e9\'\\n"', '"y = \'\\\\u00e9\'\\u000a"')  # an unusual escape that must survive
    path.write_text(text, encoding="utf-8")
    cli("--fix", str(path))
    after = path.read_text(encoding="utf-8")
    cells = json.loads(after)["cells"]
    assert cells[1]["source"] == "%time " + PAD.replace("pad_to_max_length=True", 'padding="max_length"')
    assert cells[2]["source"] == [PAD.replace("pad_to_max_length=True", 'padding="max_length"'), "y = '\\u00e9'\n"]
    assert '\\u000a"' in after and after.count("\n") == text.count("\n")


def test_a_fix_may_delete_the_last_line_of_a_cell(tmp_path: Path) -> None:
    """Removing an unused suppression that is a cell's last line ends the edit where the next cell begins."""
    path = tmp_path / "nb.ipynb"
    text = nb_json(("code", "x = 1\n# noqa: BL101\n"), ("code", ["y = 2\n", "# noqa: BL102"]), ("code", "z = 3\n"))
    assert [(f.cell, f.line, f.code, f.fix is not None) for f in lint(text)] == [(1, 2, "BL902", True), (2, 2, "BL902", True)]
    path.write_text(text, encoding="utf-8")
    cli("--fix", str(path))
    assert [c["source"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]] == ["x = 1\n", ["y = 2\n"], "z = 3\n"]


def test_fix_goes_on_past_a_broken_cell(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(nb_json(("code", LOAD), ("code", PAD), ("code", "def f(:\n")), encoding="utf-8")
    cli("--fix", str(path))
    assert [c["source"] for c in json.loads(path.read_text(encoding="utf-8"))["cells"]][1:] == [
        PAD.replace("pad_to_max_length=True", 'padding="max_length"'), "def f(:\n"]


def test_diff_shows_the_json_change(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(nb_json(("code", LOAD + PAD)), encoding="utf-8")
    result = cli("--diff", str(path))
    changes = [line for line in result.output.splitlines()[2:] if line[:1] in "+-"]
    assert [line[0] for line in changes] == ["-", "+"] and 'padding=\\"max_length\\"' in changes[1]
    assert "pad_to_max_length" in path.read_text(encoding="utf-8")


def test_invalid_notebook_does_not_stop_the_run(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [', encoding="utf-8")
    (tmp_path / "train.py").write_text(LOAD + PAD, encoding="utf-8")
    result = cli("--format", "concise", str(tmp_path))
    assert result.exit_code == 1
    assert f"{tmp_path / 'broken.ipynb'}:1:12: BL901 invalid notebook" in result.output
    assert f"{tmp_path / 'train.py'}:3:24: BL101" in result.output


def test_a_directory_walk_skips_jupyter_checkpoint_copies(tmp_path: Path) -> None:
    """Jupyter autosaves `nb.ipynb` as `.ipynb_checkpoints/nb-checkpoint.ipynb`: a walk reports each finding
    once (ruff's default exclusions); the copy named on the command line is still linted."""
    text = nb_json(("code", LOAD + PAD))
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    copy = tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb"
    copy.write_text(text, encoding="utf-8")
    walked = cli("--format", "concise", str(tmp_path)).output
    assert [line.split(": ")[0] for line in walked.splitlines() if "BL101" in line] == [f"{tmp_path / 'nb.ipynb'}:cell 1:3:24"]
    named = cli("--format", "concise", str(copy)).output
    assert f"{copy}:cell 1:3:24: BL101" in named


# --- fixtures --------------------------------------------------------------------------------

FIXTURES = sorted(NOTEBOOKS.glob("*.ipynb"))


def _render(findings) -> str:
    return "".join(f"{f.cell or '-'}:{f.line}:{f.column} {f.code}\n" for f in findings)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_notebook_fixture(path: Path) -> None:
    """`<name>.expected` lists `CELL:LINE:COL CODE` per finding (`-` for no cell); BERTLINT_REGEN=1 rewrites it."""
    findings = lint(path.read_text(encoding="utf-8"), path)
    expected = path.with_suffix(".expected")
    if os.environ.get("BERTLINT_REGEN") == "1":
        expected.write_text(_render(findings), encoding="utf-8")
    assert _render(findings) == expected.read_text(encoding="utf-8")


# --- what compiles, what runs, what bertlint can read ------------------------------------------------


def test_top_level_await_in_a_cell_is_no_syntax_error():
    """IPython compiles each cell with top-level `await` allowed (ipykernel's autoawait): not BL901."""
    text = nb_json(("code", LOAD), ("code", "import asyncio\nawait asyncio.sleep(0)\n"), ("code", PAD))
    assert where(lint(text)) == [(3, 1, 24, "BL101")]


def test_a_cell_that_does_not_compile_is_bl901_and_the_others_are_linted():
    """`return` outside a function parses but does not compile: that cell fails when run, at the error; the cells before
    it run (and Run All stops there)."""
    text = nb_json(("code", LOAD), ("code", PAD), ("code", "x = 1\nreturn x\n"))
    found = lint(text)
    assert where(found) == [(2, 1, 24, "BL101"), (3, 2, 1, "BL901")]
    found = found[1:]
    assert found[0].message == "SyntaxError: 'return' outside function"


def test_a_cell_repeating_a_keyword_is_bl901_and_a_compile_error_of_some_pythons_is_not():
    """A keyword given twice in one call: the cell parses, the compiler refuses it (IPython raises SyntaxError when the
    cell runs), BL901 at the second keyword. A compile-time error outside `engine.COMPILE_TIME_ERRORS` (a limit: more
    than 20 nested blocks) is no BL901: the cell is linted as written."""
    twice = "enc = tok(['a'], max_length=8, max_length=16)\n"
    nested = "".join(f"{'    ' * depth}for i{depth} in range(1):\n" for depth in range(21)) + "    " * 21 + PAD
    found = lint(nb_json(("code", LOAD), ("code", nested), ("code", twice)))
    assert where(found) == [(2, 22, 108, "BL101"), (3, 1, 32, "BL901")]
    assert found[1].message == "SyntaxError: keyword argument repeated: max_length"


def test_a_repeated_keyword_cell_through_the_cli(tmp_path):
    """The same through the command line: the notebook's BL901 names the cell and the line."""
    path = tmp_path / "twice.ipynb"
    path.write_text(nb_json(("code", LOAD), ("code", "enc = tok(['a'], max_length=8, max_length=16)\n")))
    result = cli("--output-format", "concise", "--select", "BL901", str(path))
    assert result.exit_code == 1
    assert f"{path}:cell 2:1:32: BL901 SyntaxError: keyword argument repeated: max_length" in result.output


def test_a_cell_the_parser_cannot_read_is_left_out_with_a_notice():
    """Python compiles an indent of a tab then spaces, libcst does not: no finding for it, a notice naming the cell and
    the line, and the other cells linted without it."""
    cell = "def f(xs):\n    out = []\n    for x in xs:\n\t    out.append(x)\n    return out\n"
    text = nb_json(("code", LOAD), ("markdown", "# tabs"), ("code", cell), ("code", PAD))
    chosen = settings(NOTEBOOKS / "_snippet.ipynb")
    notices = []
    found = notebook.lint_text(text, NOTEBOOKS / "_snippet.ipynb", chosen, target=target_version(chosen, NOTEBOOKS / "_snippet.ipynb", text), notices=notices)
    assert where(found) == [(4, 1, 24, "BL101")]
    [notice] = notices
    assert (notice.cell, notice.line, notice.column) == (3, 4, 1)
    assert str(notice).startswith("_snippet.ipynb:cell 3:4:1: not linted: Python 3.".replace("_snippet", str(NOTEBOOKS / "_snippet")))


def test_an_f_string_of_python_3_12_is_linted():
    """PEP 701 (the same quotes inside a replacement field) is valid from Python 3.12, the runtime of today's Colab;
    libcst reads it, so the cell is linted whatever Python runs bertlint, and it is no syntax error."""
    text = nb_json(("code", LOAD), ("code", "p = {'id': 1}\nprint(f'{p['id']} done')\n" + PAD))
    assert where(lint(text)) == [(2, 3, 24, "BL101")]


def test_a_cell_with_a_keyword_argument_repeated_does_not_compile():
    """A compile-time error libcst reads without complaint is still BL901: the check is Python's compiler, not libcst."""
    text = nb_json(("code", LOAD), ("code", "tok('a', truncation=True, truncation=False)\n"), ("code", PAD))
    assert where(lint(text)) == [(2, 1, 27, "BL901"), (3, 1, 24, "BL101")]


def test_a_cell_that_does_not_compile_stops_run_all_not_a_kernels_history():
    """Run All stops at a cell that raises SyntaxError: nothing after it runs. A kernel's input history (the IPython
    extension's) holds the cells the user ran one by one after it: they ran."""
    text = nb_json(("code", LOAD), ("code", "for x in y\n    pass\n"), ("code", PAD))
    assert where(lint(text)) == [(2, 1, 11, "BL901")]
    chosen = settings(NOTEBOOKS / "_snippet.ipynb")
    history = notebook.lint_text(text, NOTEBOOKS / "_snippet.ipynb", chosen, target=target_version(chosen, NOTEBOOKS / "_snippet.ipynb", text), history=True)
    assert where(history) == [(2, 1, 11, "BL901"), (3, 1, 24, "BL101")]
