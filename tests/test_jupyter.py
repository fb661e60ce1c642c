"""The IPython extension, in a real InteractiveShell and in a real Jupyter kernel (nbclient)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types

import pytest

IPython = pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

LOAD = 'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'
BUGGY = 'enc = tok(["a b", "c"], pad_to_max_length=True, max_length=8)\n'  # BL101, an error
CLEAN = 'enc = tok(["a b", "c"], padding="max_length", truncation=True, max_length=8)\n'
# Stands in for transformers in the kernel: the cells must run, offline and fast.
FAKE = textwrap.dedent('''\
    import sys, types
    fake = types.ModuleType("transformers")
    class AutoTokenizer:
        @classmethod
        def from_pretrained(cls, name):
            return cls()
        def __call__(self, texts, **kwargs):
            return {"input_ids": [[101, 102]] * len(texts)}
    fake.AutoTokenizer = AutoTokenizer
    sys.modules["transformers"] = fake
''')


@pytest.fixture
def shell(monkeypatch, tmp_path):
    (tmp_path / "bertlint.toml").write_text("preview = true\n")  # the session's config: every rule runs
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "transformers", types.ModuleType("transformers"))  # restored afterwards
    InteractiveShell.clear_instance()
    ip = InteractiveShell.instance()
    ip.run_cell(FAKE, store_history=True)
    ip.run_cell("%load_ext bertlint", store_history=True)
    yield ip
    ip.run_cell("%unload_ext bertlint")
    InteractiveShell.clear_instance()


def run(ip, cell):
    """(result, rich outputs, stdout) of one cell."""
    with capture_output() as cap:
        result = ip.run_cell(cell, store_history=True)  # as a kernel runs the cells it is sent
    return result, cap.outputs, cap.stdout


def shown(outputs) -> str:
    return "".join(o.data.get("text/plain", "") for o in outputs)


def test_a_finding_shows_under_the_cell_that_holds_it_only(shell):
    _, outputs, _ = run(shell, LOAD)
    assert outputs == []  # the tokenizer load is clean
    result, outputs, _ = run(shell, BUGGY)
    [block] = outputs
    where = f"In [{result.execution_count}], line 1"  # the cell as its prompt numbers it
    assert f"{where}:25: BL101" in block.data["text/plain"] and where in block.data["text/html"]
    assert 'href="https://github.com/bertlint/bertlint/blob/main/rules/BL101.md"' in block.data["text/html"]
    _, outputs, _ = run(shell, "x = 1\n")
    assert outputs == []  # the earlier cell's finding is not shown again


def test_names_from_earlier_cells_resolve(shell):
    """The tokenizer of cell 2 makes `tok(...)` in a later cell a tokenizer call; alone it is nothing."""
    _, outputs, _ = run(shell, BUGGY)
    assert outputs == []  # `tok` is not known yet: no finding
    run(shell, LOAD)
    _, outputs, _ = run(shell, BUGGY)
    assert "BL101" in shown(outputs)


def test_clean_twin_shows_nothing(shell):
    run(shell, LOAD)
    _, outputs, _ = run(shell, CLEAN)
    assert outputs == []


def test_whole_session_magic(shell):
    run(shell, LOAD)
    run(shell, BUGGY)
    _, outputs, _ = run(shell, "%bertlint")
    assert "1 finding(s) in the 5 cell(s) run so far" in shown(outputs) and "BL101" in shown(outputs)


def test_strict_mode_stops_a_cell_with_error_findings(shell):
    run(shell, LOAD)
    _, _, said = run(shell, "%bertlint strict")
    assert "before it runs" in said
    result, outputs, _ = run(shell, BUGGY.replace("enc =", "stopped ="))
    assert type(result.error_before_exec).__name__ == "CellRejected"
    assert "stopped" not in shell.user_ns
    assert "the cell was not run" in shown(outputs)
    result, outputs, _ = run(shell, CLEAN)  # a clean cell runs
    assert result.error_before_exec is None and "enc" in shell.user_ns


def test_off_and_on(shell):
    run(shell, LOAD)
    run(shell, "%bertlint off")
    _, outputs, _ = run(shell, BUGGY)
    assert outputs == []
    run(shell, "%bertlint on")
    _, outputs, _ = run(shell, BUGGY)
    assert "BL101" in shown(outputs)


def test_an_internal_error_never_breaks_the_cell(shell, monkeypatch):
    from bertlint import notebook

    monkeypatch.setattr(notebook, "lint_text", lambda *a, **k: 1 / 0)
    with capture_output() as cap:
        result = shell.run_cell(LOAD + "ran = True\n", store_history=True)
    assert result.success and shell.user_ns["ran"] is True
    assert "bertlint: internal error, nothing linted: ZeroDivisionError" in cap.stderr


def test_a_cell_the_parser_cannot_read_is_said_on_stderr_not_shown_as_a_finding(shell):
    """Python runs a cell indented with a tab then spaces; libcst cannot read it: a warning naming the cell's line,
    no finding, and the cells after it are linted as before."""
    with capture_output() as cap:
        result = shell.run_cell("def f(xs):\n    out = []\n    for x in xs:\n\t    out.append(x)\n    return out\n", store_history=True)
    assert result.success and cap.outputs == []
    assert f"cell {result.execution_count}:4:1: not linted: Python 3." in cap.stderr
    run(shell, LOAD)
    _, outputs, _ = run(shell, BUGGY)
    assert "BL101" in shown(outputs)


def test_loading_the_extension_imports_no_framework():
    code = textwrap.dedent('''
        import sys
        from IPython.core.interactiveshell import InteractiveShell
        ip = InteractiveShell.instance()
        ip.run_cell("%load_ext bertlint")
        ip.run_cell("x = [1, 2]")
        ip.run_cell("%bertlint")
        print(sorted(m for m in ("torch", "transformers", "tensorflow") if m in sys.modules))
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_a_real_notebook_through_a_jupyter_kernel(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in (FAKE, "%load_ext bertlint", LOAD, BUGGY, CLEAN)]
    (tmp_path / "bertlint.toml").write_text("preview = true\n")  # the kernel runs in tmp_path: every rule runs
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    html = ["".join(o.get("data", {}).get("text/html", "") for o in cell.outputs) for cell in nb.cells]
    assert "BL101" in html[3] and "In [4], line 1" in html[3]
    assert [i for i, text in enumerate(html) if "bertlint" in text] == [3], html
    assert json.dumps(nb.cells[4].outputs) == "[]"
