"""bertlint's reading of notebook cells against a real IPython's, over every code cell of the notebooks
under the given folders (the precision corpora by default), or over the generated cells of issue 26.

A cell disagrees when bertlint reports BL901 (no Python) for it and IPython runs it, or the other way
round. IPython's verdict is `ipython_runs` (tests/ipython_oracle.py, which the tests share):
`transform_cell` gives Python that compiles, and so do the statements the Python-running magics of
the result are given. The cells of a notebook are read in order, the names each binds put in
IPython's namespace before the next (they shadow automagic), as bertlint does. Needs IPython (the `test` extra); the lint path never imports it.

    python benchmarks/ipython_cells.py [FOLDER ...] [--generated] [--show N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests")]

from bertlint import notebook  # noqa: E402
from bertlint.config import load_settings  # noqa: E402
from bertlint.rules import all_codes  # noqa: E402
from bertlint.target import target_version  # noqa: E402
from ipython_oracle import generated_cells, ipython_failing, ipython_runs  # noqa: E402

CORPORA = (Path("/work/corpus"), Path("/work/corpus-community"))
PARSER = "bertlint's parser (libcst) cannot read"  # engine's BL901 for a file Python compiles


def bertlint_broken(text: str, path: Path) -> dict[int, str]:
    """The cells (1-based among all) bertlint reports BL901 for in the notebook `text`, with its message."""
    settings = load_settings(path.parent, all_codes(), isolated=True)
    return {f.cell: f.message for f in notebook.lint_text(text, path, settings, ["BL901"], target=target_version(settings, path, text))}


def _report(name: str, count: str, disagree: list[tuple[str, bool, str, str]], show: int) -> None:
    """The disagreements (where, IPython fails, the cell, bertlint's BL901 message): BL901 from libcst, the
    parser, which cannot read some Python that compiles, counted apart from those of reading IPython syntax."""
    parser = [d for d in disagree if d[3].startswith(PARSER)]
    print(f"{name}: {count}, {len(disagree)} disagreements with IPython: {sum(1 for d in disagree if not d[1])} BL901 "
          f"where IPython runs the cell ({len(parser)} of them from bertlint's parser, libcst), "
          f"{sum(1 for d in disagree if d[1])} cells IPython cannot run that bertlint lints")
    for where, fails, source, _ in [d for d in disagree if d not in parser][:show] + parser[:1]:
        print(f"--- {where}: {'IPython fails, bertlint parses' if fails else 'IPython runs, bertlint BL901'}\n{source[:600]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=list(CORPORA))
    parser.add_argument("--generated", action="store_true", help="the generated cells (`generated_cells`) instead of folders")
    parser.add_argument("--show", type=int, default=20, help="print this many disagreeing cells (default 20)")
    args = parser.parse_args()
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    if args.generated:
        cells = list(generated_cells())
        disagree = []
        for number, cell in enumerate(cells, 1):
            broken = bertlint_broken(notebook.from_cells([("code", cell)]), Path("generated.ipynb"))
            if ipython_runs(shell, cell) is bool(broken):
                disagree.append((f"generated cell {number}", not broken, cell, broken.get(1, "")))
        _report("generated", f"{len(cells)} cells", disagree, args.show)
        return
    for folder in args.folders:
        cells = notebooks = 0
        disagree = []
        for path in sorted(folder.rglob("*.ipynb")):
            text = path.read_text(encoding="utf-8", errors="replace")
            try:
                nb = notebook.parse(text)
            except notebook.NotebookError:
                continue
            notebooks += 1
            cells += len(nb.cells)
            broken = bertlint_broken(text, path)
            disagree += [(f"{path} cell {cell.number}", fails, cell.source, broken.get(cell.number, ""))
                         for cell, fails in zip(nb.cells, ipython_failing(shell, [c.source for c in nb.cells])) if fails is not (cell.number in broken)]
        _report(str(folder), f"{notebooks} notebooks, {cells} code cells", disagree, args.show)


if __name__ == "__main__":
    main()
