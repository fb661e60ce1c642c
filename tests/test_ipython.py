"""Cells read as IPython reads them: a differential table checked against a real IPython where one is
installed (the `test` extra brings it), and against bertlint always; install commands and their pins."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bertlint import ipython, notebook
from bertlint.config import load_settings
from bertlint.rules import all_codes
from bertlint.target import target_version
import ipython_oracle as oracle
from conftest import PINNED_VERSION, ROOT
from ipython_oracle import ipython_runs

NOTEBOOKS = ROOT / "fixtures" / "notebooks"
TABLE = NOTEBOOKS / "ipython_cells.json"
ROWS = json.loads(TABLE.read_text(encoding="utf-8"))
IDS = [row["cell"][:40] + ("|" + ",".join(row["shadow"]) if row.get("shadow") else "") for row in ROWS]


def bl901_in_last_cell(cell: str, shadow: list[str]) -> bool:
    """Whether bertlint reports BL901 for `cell` in a notebook whose earlier cells bind `shadow`."""
    cells = [("code", f"{name} = 1") for name in shadow] + [("code", cell)]
    path = NOTEBOOKS / "_table.ipynb"
    settings = load_settings(path.parent, all_codes(), isolated=True, overrides={"transformers_version": PINNED_VERSION})
    text = notebook.from_cells(cells)
    found = notebook.lint_text(text, path, settings, target=target_version(settings, path, text))
    return any(f.code == "BL901" and f.cell == len(cells) for f in found)


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_bertlint_agrees_with_the_table(row: dict) -> None:
    """Always (no IPython needed): BL901 exactly for the cells the table says IPython cannot run."""
    assert bl901_in_last_cell(row["cell"], row.get("shadow", [])) is not row["runs"]


# --- the same table, against a real IPython ---------------------------------------------------

@pytest.fixture(scope="module")
def shell():
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    return interactiveshell.InteractiveShell.instance()


@pytest.mark.parametrize("row", ROWS, ids=IDS)
def test_ipython_agrees_with_the_table(shell, row: dict) -> None:
    """The table is IPython's word: BERTLINT_REGEN=1 rewrites its `runs` column from the installed IPython."""
    runs = ipython_runs(shell, row["cell"], row.get("shadow", []))
    if os.environ.get("BERTLINT_REGEN") == "1" and runs != row["runs"]:
        row["runs"] = runs
        TABLE.write_text("[\n" + ",\n".join(" " + json.dumps(r, ensure_ascii=False) for r in ROWS) + "\n]\n", encoding="utf-8")
    assert runs is row["runs"]


# Cells generated from IPython's syntax: every form, in every place a line can stand.
SYNTAX = ["!ls -la", "!!ls", "%matplotlib inline", "%time x = 1", "%timeit -n 1 f()", "x = !ls", "x = %pwd", "a[0] = !ls", "obj?",
          "obj.attr??", "?obj", "%pip install -q x", "pip install -q x", "cd ..", ",f a b", ";f a b", "/f a b", "x = 1", "print(x)",
          "x = (1 +", "def f(:", "x == !ls", "obj? ", "obj?  # c", "%%bash", "%%time", "get_ipython().system('ls')", ">>> x = 1",
          "In [1]: x = 1", "ls = 1", "pip"]
PLACES = ["{s}", "if x:\n    {s}", "x = 1\n{s}", "{s}\nx = 1", "f(1,\n  {s})", "s = '''\n{s}\n'''", "y = 1 + \\\n    {s}", "  {s}",
          "\n{s}", "{s}\n\n", "# note\n{s}", "for i in y:\n    {s}\n    z = 2", "{s} \\\n  more"]


def test_generated_cells_agree_with_ipython(shell) -> None:
    """Every form in every place (403 cells): BL901 exactly where IPython's transform_cell gives no Python."""
    cells = [place.format(s=syntax) for syntax in SYNTAX for place in PLACES]
    assert [cell for cell in cells if ipython_runs(shell, cell) is bl901_in_last_cell(cell, [])] == []


# Issue 26's shapes (tests/ipython_oracle.py; `benchmarks/ipython_cells.py --generated` runs them all): strings whose lines
# end in `?`, `??`, `!`, `%` (a prompt's question), and line magics whose argument is an escape, a magic, or such a
# string. Left out: a raw f-string in one quote continued by a backslash (`rf"\` + line break), which Python
# compiles and bertlint's parser, libcst 1.9, cannot read: BL901 from the parser, not from reading IPython.
_QUOTED = st.tuples(st.sampled_from(oracle.STRING_PREFIXES), st.sampled_from(oracle.QUOTES)).filter(
    lambda pq: len(pq[1]) == 3 or not {"r", "f"} <= set(pq[0].lower()))
STRINGS = st.builds(
    lambda quoted, backslash, lines, holder, after: oracle.string_cell(*quoted, backslash, lines, holder, after),
    _QUOTED, st.booleans(), st.lists(st.builds(str.__add__, st.sampled_from(oracle.STRING_TEXTS), st.sampled_from(oracle.LINE_ENDS)), min_size=1, max_size=3),
    st.sampled_from(oracle.HOLDERS), st.sampled_from(oracle.AFTER))
MAGICS = st.builds(
    lambda place, magic, argument: place.format(m=f"%{magic} {argument}"),
    st.sampled_from(oracle.MAGIC_PLACES), st.sampled_from(oracle.RUNNING_MAGICS),
    st.sampled_from(oracle.ARGUMENTS) | STRINGS)


@settings(max_examples=300, derandomize=True, deadline=None, database=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(cell=STRINGS | MAGICS)
def test_strings_and_magic_arguments_agree_with_ipython(shell, cell: str) -> None:
    """Seeded and bounded: BL901 exactly where IPython's transform_cell (and the magic's own, for its argument) gives no Python."""
    assert ipython_runs(shell, cell) is not bl901_in_last_cell(cell, [])


FIXTURE_NOTEBOOKS = [path for path in sorted(NOTEBOOKS.glob("*.ipynb")) if path.stem not in ("invalid_json", "nbformat3")]


@pytest.mark.parametrize("path", FIXTURE_NOTEBOOKS, ids=[p.stem for p in FIXTURE_NOTEBOOKS])
def test_ipython_agrees_on_the_fixture_notebooks(shell, path: Path) -> None:
    """The cells of the fixture notebooks, run one after another (the names each binds shadow automagic
    in the next): BL901 in a fixture's expected findings exactly where IPython fails."""
    cells = notebook.parse(path.read_text(encoding="utf-8")).cells
    failing = {str(cell.number) for cell, fails in zip(cells, oracle.ipython_failing(shell, [c.source for c in cells])) if fails}
    expected = path.with_suffix(".expected").read_text(encoding="utf-8").splitlines()
    assert failing == {line.split(":")[0] for line in expected if line.endswith("BL901")}


def test_the_lint_path_never_imports_ipython() -> None:
    source = (ROOT / "src" / "bertlint" / "ipython.py").read_text(encoding="utf-8")
    imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in node.names} | {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    assert not any(name and name.split(".")[0] == "IPython" for name in imported)


def test_line_magics_are_ipythons(shell) -> None:
    """LINE_MAGICS holds every line magic and alias of the installed IPython (ipykernel's are extra), and
    EXTENSION_MAGICS what loading each of IPython's own extensions adds."""
    assert set(shell.magics_manager.magics["line"]) <= ipython.LINE_MAGICS
    for extension, magics in ipython.EXTENSION_MAGICS.items():
        before = set(shell.magics_manager.magics["line"])
        shell.run_line_magic("load_ext", extension)
        assert set(shell.magics_manager.magics["line"]) - before <= magics <= set(shell.magics_manager.magics["line"])


# --- install commands ------------------------------------------------------------------------


@pytest.mark.parametrize("command, requirements", [
    ("pip install transformers==4.30.0", ["transformers==4.30.0"]),
    ("pip install -q -U 'transformers[torch]==4.30.0' datasets", ["transformers[torch]==4.30.0", "datasets"]),
    ("pip3 install --upgrade -i https://example.org/simple transformers~=4.30.0", ["transformers~=4.30.0"]),
    ("python -m pip install -qqq 'transformers>=4.30,<4.31'", ["transformers>=4.30,<4.31"]),
    ("{sys.executable} -m pip install transformers==4.29.2", ["transformers==4.29.2"]),
    ("uv pip install transformers==4.30.0", ["transformers==4.30.0"]),
    ("sudo /usr/bin/pip install -r requirements.txt transformers==4.30.0 > /dev/null", ["transformers==4.30.0"]),
    ("apt-get install -y git-lfs && pip install transformers==4.33.1", ["transformers==4.33.1"]),
    ("pip install \\\n    transformers==4.30.0", ["transformers==4.30.0"]),
    ("pip -q install transformers==4.41.2", ["transformers==4.41.2"]),  # pip's general options go before the command
    ("python3 -m pip --no-cache-dir --log pip.log install transformers==4.41.2", ["transformers==4.41.2"]),
    ("conda install -y -c conda-forge transformers=4.30", ["transformers==4.30.*"]),
    # near misses: the shell takes an unquoted `>` for a redirection; other commands install nothing
    ("pip install transformers>=4.30", ["transformers"]),
    ("pip list", []),
    ("python train.py --install transformers==4.30.0", []),
    ("pip install 'transformers==4.30.0", []),  # an unclosed quote: the shell refuses the line
])
def test_install_requirements(command: str, requirements: list[str]) -> None:
    assert ipython.install_requirements(command) == requirements


@pytest.mark.parametrize("source, bound, found", [
    ("!pip install -q transformers==4.30.0", (), ["pip install -q transformers==4.30.0"]),
    ("%pip install transformers==4.30.0", (), ["pip install transformers==4.30.0"]),
    ("pip install transformers==4.30.0", (), ["pip install transformers==4.30.0"]),  # automagic
    ("pip install transformers==4.30.0", ("pip",), []),  # `pip` is a variable: Python, no command
    ("import os\npip install transformers==4.30.0", (), []),  # several lines: no automagic
    ("%%capture\n!pip install transformers==4.30.0\n", (), ["%capture\n", "pip install transformers==4.30.0\n"]),
    ("%%bash\npip install \\\n  transformers==4.30.0\n", (), ["pip install \\\n  transformers==4.30.0\n"]),
    ("%%html\n<p>pip install transformers==4.30.0</p>", (), []),
    ("out = !pip install x \\\n    y\nz = 1", (), ["pip install x \\\n    y\n"]),
])
def test_commands_of_a_cell(source: str, bound: tuple, found: list[str]) -> None:
    assert ipython.commands(source, bound) == found


@pytest.mark.parametrize(
    "source",
    [
        "!pip install transformers\nimport torch\nx = 1\n",
        "%matplotlib inline\n!curl https://example.com/a.py -o a.py\nimport torch\n",
        "import os\nfor name in ['a']:\n    !echo {name}\n",  # an escape in a block
        "!pip install \\\n    transformers\nimport torch\n",  # continued by a backslash
        "!pip install transformers\nfiles = !ls\nhere, there = %pwd\nimport torch\n",  # a command's output assigned
        "files = !ls data\nimport torch\n",
    ],
)
def test_a_script_whose_only_errors_are_escapes_is_a_notebook_export(source: str) -> None:
    masked = ipython.mask_script(source)
    assert masked is not None and len(masked) == len(source)
    compile(masked, "<export>", "exec")


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nx = 1\n",  # compiles: nothing to mask
        "pip install transformers\nimport torch\n",  # a shell line without an escape is no IPython syntax
        "!pip install transformers\nx = (1,\n",  # another syntax error beside the escape
        "!pip install transformers\nlen?\n",  # help syntax: more than the plain escapes
        "!pip install transformers\nfiles == !ls\n",  # compared, not assigned: IPython refuses it too
        "s = '''\n!not an escape\n'''\n",  # inside a string
    ],
)
def test_a_script_with_more_than_escapes_wrong_is_not_taken_for_an_export(source: str) -> None:
    assert ipython.mask_script(source) is None


def _compiles(code: str) -> bool:
    try:
        compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


TIMED = ["%%time\n{s}", "%%timeit -n 1 -r 1\n{s}", "%%prun -q\n{s}", "%%time\n\n{s}\n", "%%capture\n{s}", "%%time x\n{s}"]
UNCOMPILED = ["x = (1 +", "def f(:", "for x in y\n    pass", "pip install -q x\nimport os", "git clone url", "print('a'", "x = = 1",
              "return 1", "f(a=1, a=2)", "obj.attr = ", "exit now", "ls = 1 1", "cd ..\nx = 1", "print('%d' % (1,)", "a != b c"]


def test_a_cell_untransformed_is_compiled_by_ipython_as_it_stands(shell) -> None:
    """Where `untransformed` says IPython hands the cell to the compiler as it stands (its cleanup done), IPython runs
    it exactly when Python compiles it: a cell that does not compile then certainly raises SyntaxError in the kernel.
    The table's cells and every form of `SYNTAX` and of cells that do not compile, in every place."""
    cells = [(row["cell"], row.get("shadow", [])) for row in ROWS] + [(cell, ["x"]) for cell in ("x y", "x = = 1", "x.y 1")]
    cells += [(place.format(s=syntax), []) for syntax in SYNTAX + UNCOMPILED for place in PLACES + TIMED]
    magics = set(shell.magics_manager.magics["line"])  # this shell's: an earlier test may have loaded an extension's
    taken = [(cell, shadow) for cell, shadow in cells if ipython.untransformed(ipython.cleanup(cell)[0], shadow, magics)]
    assert len(taken) > 300

    def compiled(cell: str) -> str:  # what IPython compiles: a timed cell's body
        cleaned = ipython.cleanup(cell)[0]
        return cleaned.lstrip().partition("\n")[2] if cleaned.lstrip().startswith(("%%time", "%%prun")) else cleaned
    assert [cell for cell, shadow in taken if ipython_runs(shell, cell, shadow) is not _compiles(compiled(cell))] == []


@pytest.mark.parametrize("cell, shadow, autocall, certain", [
    ("for x in y\n    pass\n", (), False, True),
    ("!ls\nfor x in y\n    pass\n", (), False, False),  # an escape: IPython transforms the cell
    ("y = (1,\n  ?x)\n", (), False, False),
    ("files = !ls\nx = (\n", (), False, False),
    ("git clone url\n", (), False, True),  # one line: no magic, no name of the notebook
    ("ls -la x y\n", (), False, False),  # a line magic the prefilter runs
    ("tok x y\n", ("tok",), False, False),  # an object of the notebook: a Macro or IPyAutocall may be bound to it
    ("exit now\n", (), False, False),  # IPython's ExitAutocall
    ("git clone url\n", (), True, False),  # autocall turned on earlier
    ("%%time\nfor x in y\n    pass\n", (), False, True),  # the magic compiles its body: the cell's SyntaxError
    ("%%prun -s cumulative\nx = (\n", (), False, True),
    ("%%time\nls -la\n", (), False, False),  # a body of one line: automagic
    ("%%capture\nx = (\n", (), False, False),  # run_cell shows its SyntaxError, Run All goes on
    ("%%time x = 1\ny = (\n", (), False, False),
])
def test_untransformed(cell: str, shadow: tuple, autocall: bool, certain: bool) -> None:
    assert ipython.untransformed(cell, shadow, autocall=autocall) is certain


@pytest.mark.parametrize("line, body, expanded", [
    ("get_ipython().run_cell_magic('time', '', 'x = f(1)\\ny = 2')", "x = f(1)\ny = 2", True),
    ("get_ipython().run_cell_magic('prun', '-q', 'x = \\'a\\\\\\\\b\\'\\n!ls\\n')", "x = 'a\\\\b'\n0  \n", True),  # masked
    ("get_ipython().run_cell_magic('time', '', u'x = \"é\\u00e9\"\\n')", 'x = "éé"\n', True),
    ("get_ipython().run_cell_magic('timeit', '', 'x = 1\\n')", None, False),  # many runs, names that do not persist
    ("get_ipython().run_cell_magic('capture', '', 'x = 1\\n')", None, False),  # its exception does not stop Run All
    ("get_ipython().run_cell_magic('writefile', 'a.py', 'x = 1\\n')", None, False),
    ("get_ipython().run_cell_magic('time', '', 'x = (\\n')", None, False),  # a body that does not compile
    ("get_ipython().run_cell_magic('time', '', r'x = 1\\n')", None, False),  # a raw string: no plain literal
    ("if a:\n    get_ipython().run_cell_magic('time', '', 'x = 1\\n')", None, False),  # not at the top level
])
def test_an_exported_time_cell_runs_its_body_in_place(line: str, body: str | None, expanded: bool) -> None:
    """`expand_cell_magics`: the body's characters keep the columns of their place in the string literal."""
    source = "a = 1\n" + line + "\nb = 2\n"
    found = ipython.expand_cell_magics(source)
    assert (found is not None) is expanded
    if found is None:
        return
    body_lines = len(ipython.LINES.findall(body))
    assert found.text == "a = 1\n" + body + ("" if body.endswith("\n") else "\n") + "b = 2\n"
    literal = line.index(", ", line.index(", ") + 1) + 2  # where the body's string literal starts
    assert found.place(2, 1) == (2, literal + 1 + (line[literal] == "u") + 1, True)  # its first character, after the quote
    assert found.place(2 + body_lines, 1) == (3, 1, False)
    assert found.place(1, 3) == (1, 3, False)
    for row, code in enumerate(found.text.splitlines()[1:1 + body_lines], 2):  # each character back at its own place
        for index, char in enumerate(code, 1):
            at = found.place(row, index)[1] - 1
            assert line[at] == char or line[at] == "\\" or char in "0 "  # an escape's backslash; a masked escape


def test_an_export_cpython_refuses_is_not_expanded() -> None:
    """A character libcst takes and CPython refuses (a leading U+0001, from the robustness test's mutations): no
    expansion, no internal error; the engine reports the SyntaxError (BL901)."""
    source = "\x01get_ipython().run_cell_magic('time', '', 'x = 1\\n')\n"
    assert ipython.expand_cell_magics(source) is None
