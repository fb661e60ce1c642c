"""Jupyter notebooks (nbformat 4): lint the code cells as one module, fix only their sources.

Code cells are joined in order so that names flow from cell to cell as they do in a kernel; each
finding is mapped back to its cell (1-based among *all* cells, markdown included) and to a line
inside it. IPython syntax (`%magic`, `!shell`, `x = !cmd`, `obj?`) is masked with placeholders of
the same length, so positions never shift. A fix rewrites only the JSON string values of the cells
it changes: outputs, metadata, key order and indentation keep every byte.

The three text-level functions have the shapes of `engine.lint_source`, `fixer.apply_edits` and
`fixer.parses`, so the runner's fix loop serves notebooks unchanged.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import json
import re
import warnings
from dataclasses import dataclass
from json.decoder import scanstring
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from bertlint import engine, fixer
from bertlint.facts import Runtime
from bertlint.ipython import LINE_MAGICS, LINES, cleanup, explain, loaded_magics, mask, untransformed, writes_script
from bertlint.report import Edit, Finding, Notice

if TYPE_CHECKING:
    from bertlint.config import Settings
    from bertlint.target import Target

_WS = re.compile(r"[ \t\n\r]*")
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}]', re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based position among all cells, markdown included
    source: str


@dataclass
class Notebook:
    text: str  # the raw JSON
    cells: list[Cell]  # code cells only, in order
    spans: list[tuple[int, int]]  # offsets of each code cell's "source" value in `text`
    accelerator: str | None = None  # the runtime's accelerator its metadata names: Colab's "accelerator", Kaggle's "kaggle": {"accelerator"}


class NotebookError(ValueError):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line, self.column = line, column


# --- Lint: cells as one module ---------------------------------------------------------------


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a cell binds in the notebook's namespace: assignments, imports, `def`/`class`, loop and
    `with` targets at the top level (also inside top-level `if`/`for`/`try`), not those local to a
    function. Statements only: targets are walked, expressions are not."""
    names: set[str] = set()
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
        targets = [*getattr(node, "targets", ()), getattr(node, "target", None)]
        targets += [item.optional_vars for item in getattr(node, "items", ())]
        names.update(n.id for target in targets if target is not None for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        for field in ("body", "orelse", "finalbody"):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                todo.extend(getattr(node, field, ()))
        for handler in getattr(node, "handlers", ()):  # not `except E as name`: Python deletes that name after the handler
            todo.extend(handler.body)
    return names


_TOP_LEVEL_AWAIT = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT  # IPython compiles a cell alone, with top-level `await` allowed


def _parsed(cell: str) -> ast.Module:
    with warnings.catch_warnings():  # the cell's SyntaxWarnings are not ours to print
        warnings.simplefilter("ignore")
        return compile(cell, "<cell>", "exec", ast.PyCF_ONLY_AST | _TOP_LEVEL_AWAIT, dont_inherit=True)


def _compiles(tree: ast.Module) -> None:
    """Raise the SyntaxError CPython raises only when it compiles the parsed cell (`return` outside a function, a keyword
    argument repeated), where it is one that every Python raises (`engine.compile_time_error`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(tree, "<cell>", "exec", _TOP_LEVEL_AWAIT, dont_inherit=True)
        except SyntaxError as exc:
            if engine.compile_time_error(exc):
                raise


class _Module:
    """The masked code cells joined into one module, with the first line of each cell in it."""

    def __init__(self, cells: Iterable[Cell], history: bool = False) -> None:
        """`history`: the cells are a kernel's input history, each run by hand after the one before, whatever it raised."""
        self.cells: list[Cell] = []
        self.starts: list[int] = []
        self.shifts: list[dict[int, int]] = []  # per cell: the columns IPython's cleanup removed from each line (indent, prompts)
        self.broken: list[tuple[Cell, SyntaxError, str | None]] = []  # with what the cell holds instead of Python
        self.uncompiled: list[int] = []  # the line of each broken cell that certainly raises SyntaxError in IPython
        bound: set[str] = set()  # the names the cells so far bind at the top level: they shadow automagic
        magics: set[str] | None = set(LINE_MAGICS)  # and the line magics there are: more after `%load_ext`
        autocall = False  # whether a cell so far may have turned IPython's autocall on
        chunks, line = [], 1
        for cell in cells:
            cleaned, removed = cleanup(cell.source)
            masked = mask(cleaned, bound, magics)
            certain = untransformed(cleaned, bound, magics, autocall)
            autocall = autocall or "autocall" in cell.source
            if "load_ext" in cell.source and magics is not None:
                extra = loaded_magics(cell.source, bound)
                magics = None if extra is None else magics | extra
            if masked is None or writes_script(cell.source):  # a script of its own: linted alone
                continue
            tree = None
            try:
                tree = _parsed(masked)
                _compiles(tree)
            except SyntaxError as exc:  # one broken cell must not hide the findings of the others
                if tree is not None or not engine.newer_syntax(masked):
                    if exc.offset:
                        exc.offset += removed.get(exc.lineno, 0)
                    self.broken.append((cell, exc, explain(cell.source, exc.lineno or 1, bound)))
                    if history or not certain:  # bertlint's reading of IPython's syntax may be what failed: no stop
                        continue
                    masked = "0\n"  # Run All stops at this cell (`facts.cell_stops`)
                    self.uncompiled.append(line)
            if tree is not None:  # None: a newer Python's syntax (a PEP 701 f-string on 3.11), linted, its names unknown here
                bound |= _top_level_names(tree)
            if masked and not masked.endswith(("\n", "\r")):
                masked += "\n"
            self.cells.append(cell)
            self.starts.append(line)
            self.shifts.append(removed)
            chunks.append(masked)
            line += len(LINES.findall(masked))
        self.text = "".join(chunks)
        self.end = line

    def locate(self, notice: Notice) -> Notice:
        """`notice` (virtual lines) at its place in its cell."""
        index = bisect.bisect_right(self.starts, notice.line) - 1
        line = notice.line - self.starts[index] + 1
        return dataclasses.replace(notice, cell=self.cells[index].number, line=line, column=notice.column + self.shifts[index].get(line, 0))

    def place(self, f: Finding) -> Finding:
        """`f` (virtual lines) inside its cell; a fix that reaches into another cell is dropped."""
        index = bisect.bisect_right(self.starts, f.line) - 1
        start, cell = self.starts[index], self.cells[index]
        removed = self.shifts[index]
        stop = self.starts[index + 1] if index + 1 < len(self.starts) else self.end
        lines = LINES.findall(cell.source)
        end_line, end_column = f.end_line, f.end_column
        if end_line >= stop:
            end_line, end_column = stop - 1, len(lines[-1].rstrip("\r\n")) + 1
        fix = f.fix
        # An edit may end where the next cell begins (one that deletes the cell's last line, break included):
        # that is the end of this cell's source, which has no line break to delete when it has no last one.
        if not cell.source.endswith(("\n", "\r")) and lines:
            cell_end = (len(lines), len(lines[-1]) + 1)
        else:
            cell_end = (len(lines) + 1, 1)
        if fix is not None and not removed and all(start <= e.line and (e.end_line < stop or (e.end_line, e.end_column) == (stop, 1)) for e in fix.edits):
            fix = dataclasses.replace(fix, edits=tuple(
                Edit(e.line - start + 1, e.column, *((e.end_line - start + 1, e.end_column) if e.end_line < stop else cell_end), e.content)
                for e in fix.edits
            ))
        else:  # also in a cell IPython dedents or strips of prompts: a fix's new text would lack what the cell keeps
            fix = None
        line, end_line = f.line - start + 1, end_line - start + 1
        column = f.column + removed.get(line, 0)
        end_column += removed.get(end_line, 0) if f.end_line < stop else 0
        return dataclasses.replace(
            f, cell=cell.number, line=line, column=column, end_line=end_line, end_column=end_column, fix=fix,
            source_line=lines[line - 1].rstrip("\r\n") if line <= len(lines) else "",
        )


def lint_cells(cells: Iterable[Cell], path: Path, settings: "Settings", codes: Iterable[str] | None = None, *,
               target: "Target", reads: list[str] | None = None, notices: list[Notice] | None = None,
               accelerator: str | None = None, history: bool = False) -> list[Finding]:
    """Findings of the code cells, each placed in its cell (`target`, `reads`, `notices`: as for `engine.lint_source`;
    `accelerator`: the one the notebook's metadata names; `history`: the cells are a kernel's input history, not a
    notebook's Run All, so a cell that does not compile stops nothing after it). A cell bertlint's parser cannot read
    (what Python compiles) is left out, with a notice, and the others are linted without it. A code cell that certainly
    does not compile in IPython stops Run All: it stands in the joined module as a stop (`facts.cell_stops`)."""
    selected = frozenset(codes) if codes is not None else settings.codes_for(path)
    cells = list(cells)
    runtime = Runtime(notebook=True, accelerator=accelerator)
    left_out: set[int] = set()
    while True:
        module = _Module((c for c in cells if c.number not in left_out), history)
        unread: list[Notice] = []
        stops = dataclasses.replace(runtime, uncompiled=tuple(module.uncompiled))
        findings = [module.place(f) for f in engine.lint_source(module.text, path, settings, selected, target=target, reads=reads,
                                                                 notices=unread, runtime=stops)] if module.cells else []
        if not unread:
            break
        whole = unread[0].line < 1  # no place in a cell (it nests too deeply): the notebook is not linted
        notice = unread[0] if whole else module.locate(unread[0])
        if notices is not None:
            notices.append(notice)
        if whole:
            break
        left_out.add(notice.cell)
    for cell in filter(lambda c: writes_script(c.source), cells):  # its lines are the script's: nothing to place
        lines = LINES.findall(cell.source)
        unread = []
        findings += [dataclasses.replace(f, cell=cell.number, source_line=lines[f.line - 1].rstrip("\r\n") if f.line <= len(lines) else "")
                     for f in engine.lint_source(mask(cell.source), path, settings, selected, target=target, reads=reads, notices=unread)]
        if notices is not None:
            notices += [dataclasses.replace(n, cell=cell.number, line=max(n.line, 1)) for n in unread]
    if "BL901" in selected:
        for cell, exc, holds in module.broken:
            lines = LINES.findall(cell.source)
            line = min(max(exc.lineno or 1, 1), max(len(lines), 1))
            text = lines[line - 1].rstrip("\r\n") if lines else ""
            message = f"SyntaxError: {exc.msg}" if holds is None else f"{holds} (SyntaxError: {exc.msg})"
            column = (exc.offset or 1) if holds is None else len(text) - len(text.lstrip()) + 1
            finding = engine.engine_finding("BL901", message, str(path), line, column, text)
            findings.append(dataclasses.replace(finding, cell=cell.number))
    return sorted(findings, key=lambda f: f.sort_key)


def linted_module(text: str, f: Finding) -> tuple[str, Finding] | None:
    """The Python text a finding of the notebook `text` was linted in (the joined code cells, or the
    `%%writefile` cell's own script) and the finding at its place there: `_Module.place` undone.
    None when its cell is not a linted code cell of this text (the notebook changed since)."""
    cell = next((c for c in parse(text).cells if c.number == f.cell), None)
    if cell is None:
        return None
    if writes_script(cell.source):
        return mask(cell.source), dataclasses.replace(f, cell=None)
    module = _Module(parse(text).cells)
    index = next((i for i, c in enumerate(module.cells) if c.number == f.cell), None)
    if index is None:
        return None
    start, removed = module.starts[index], module.shifts[index]
    return module.text, dataclasses.replace(
        f, cell=None, line=f.line + start - 1, column=f.column - removed.get(f.line, 0),
        end_line=f.end_line + start - 1, end_column=f.end_column - removed.get(f.end_line, 0),
    )


# --- The JSON text ---------------------------------------------------------------------------


def parse(text: str) -> Notebook:
    """The code cells of an nbformat-4 notebook and where their sources lie in the raw JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"invalid notebook: the file is not JSON ({exc.msg})", exc.lineno, exc.colno) from None
    version = data.get("nbformat") if isinstance(data, dict) else None
    if version != 4:
        found = f"nbformat {version}" if version is not None else "no nbformat key"
        raise NotebookError(f"invalid notebook: bertlint reads nbformat 4 notebooks, this one has {found}")
    if not isinstance(data.get("cells"), list):
        raise NotebookError('invalid notebook: it has no "cells" list')
    top = _children(text, _WS.match(text).end())
    cells_start = [start for key, start, _ in top if key == "cells"][-1]  # json.loads keeps the last
    cells, spans = [], []
    for number, (raw, (_, start, _)) in enumerate(zip(data["cells"], _children(text, cells_start)), 1):
        if not isinstance(raw, dict) or raw.get("cell_type") != "code":
            continue
        source = raw.get("source")
        if isinstance(source, list) and all(isinstance(s, str) for s in source):
            source = "".join(source)
        if not isinstance(source, str):
            raise NotebookError(f"invalid notebook: code cell {number} has no source, or one that is not text")
        cells.append(Cell(number, source))
        spans.append([(s, e) for key, s, e in _children(text, start) if key == "source"][-1])  # json.loads keeps the last
    return Notebook(text, cells, spans, _accelerator(data.get("metadata")))


def _accelerator(metadata: object) -> str | None:
    """The accelerator a notebook's metadata names: Colab's `"accelerator": "TPU"`, or for a GPU runtime its card
    (`"colab": {"gpuType": "T4"}`), Kaggle's `"kaggle": {"accelerator": "tpu1vmV38"}` or `"nvidiaTeslaT4"`."""
    if not isinstance(metadata, dict):
        return None
    kaggle, colab = metadata.get("kaggle"), metadata.get("colab")
    card = colab.get("gpuType") if isinstance(colab, dict) and metadata.get("accelerator") in ("GPU", None) else None
    for name in (card, metadata.get("accelerator"), kaggle.get("accelerator") if isinstance(kaggle, dict) else None):
        if isinstance(name, str):
            return name
    return None


def _children(text: str, pos: int) -> list[tuple[str | None, int, int]]:
    """(key, start, end) of every value in the JSON object or array at `pos`; key None in an array.
    The text is known to be valid JSON (json.loads read it first)."""
    close = "}" if text[pos] == "{" else "]"
    out: list[tuple[str | None, int, int]] = []
    pos = _WS.match(text, pos + 1).end()
    while text[pos] != close:
        key = None
        if close == "}":
            key, pos = scanstring(text, pos + 1)
            pos = _WS.match(text, _WS.match(text, pos).end() + 1).end()  # past the colon
        end = _skip(text, pos)
        out.append((key, pos, end))
        pos = _WS.match(text, end).end()
        if text[pos] == ",":
            pos = _WS.match(text, pos + 1).end()
    return out


def _skip(text: str, pos: int) -> int:
    """The end of the JSON value at `pos`: containers by bracket depth (strings skipped whole)."""
    if text[pos] not in "[{":
        return _DECODER.raw_decode(text, pos)[1]
    depth = 0
    for match in _STRUCTURE.finditer(text, pos):
        char = text[match.start()]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise NotebookError("invalid notebook: unbalanced brackets")  # unreachable after json.loads


def _encode(text: str, start: int, end: int, source: str, ascii_only: bool) -> str:
    """`source` as the JSON value replacing text[start:end], in that value's style: a string, or a
    list of lines laid out like the old one, with unchanged lines kept byte for byte."""
    if text[start] == '"':
        return json.dumps(source, ensure_ascii=ascii_only)
    lines = source.splitlines(keepends=True)  # as nbformat splits them
    if not lines:
        return "[]"
    items = _children(text, start)
    raw = {json.loads(text[s:e]): text[s:e] for _, s, e in items}
    lead = text[start + 1:items[0][1]] if items else ""
    sep = text[items[0][2]:items[1][1]] if len(items) > 1 else "," + lead
    tail = text[items[-1][2]:end - 1] if items else ""
    return "[" + lead + sep.join(raw.get(line) or json.dumps(line, ensure_ascii=ascii_only) for line in lines) + tail + "]"


def splice(nb: Notebook, sources: dict[int, str]) -> str:
    """The notebook's JSON text with only the given code cells' (by index in `nb.cells`) sources replaced."""
    text, ascii_only = nb.text, nb.text.isascii()
    for index in sorted(sources, reverse=True):
        start, end = nb.spans[index]
        text = text[:start] + _encode(nb.text, start, end, sources[index], ascii_only) + text[end:]
    return text


def from_cells(cells: Iterable[tuple[str, str]], metadata: object = None) -> str:
    """A minimal nbformat-4 JSON text of (cell_type, source) pairs and the notebook's metadata, for notebooks that live in an editor."""
    return json.dumps({
        "nbformat": 4, "nbformat_minor": 5, "metadata": metadata if isinstance(metadata, dict) else {},
        "cells": [{"cell_type": kind, "metadata": {}, "source": source} for kind, source in cells],
    })


def lint_text(text: str, path: Path, settings: "Settings", codes: Iterable[str] | None = None, *,
              target: "Target", reads: list[str] | None = None, notices: list[Notice] | None = None,
              history: bool = False) -> list[Finding]:
    """`engine.lint_source` for a notebook's JSON text (`history`: as for `lint_cells`); an invalid notebook is one BL901
    finding."""
    try:
        nb = parse(text)
    except NotebookError as exc:
        selected = frozenset(codes) if codes is not None else settings.codes_for(path)
        return [engine.engine_finding("BL901", str(exc), str(path), exc.line, exc.column, "")] if "BL901" in selected else []
    return lint_cells(nb.cells, path, settings, codes, target=target, reads=reads, notices=notices, accelerator=nb.accelerator,
                      history=history)


def apply_edits(text: str, findings: list[Finding], allowed: set[str]) -> tuple[str, list[Finding]]:
    """`fixer.apply_edits` for a notebook: each cell's fixes applied to its own source, and kept
    only if that cell still parses (a cell that was broken before has no fixes to apply)."""
    nb = parse(text)
    by_cell: dict[int, list[Finding]] = {}
    for f in findings:
        by_cell.setdefault(f.cell, []).append(f)
    sources, applied = {}, []
    for index, cell in enumerate(nb.cells):
        new, done = fixer.apply_edits(cell.source, by_cell.get(cell.number, []), allowed)
        masked = mask(cleanup(new)[0]) if done else None
        if masked is not None and fixer.parses(masked):
            sources[index] = new
            applied += done
    return (splice(nb, sources), applied) if applied else (text, [])


def parses(text: str) -> bool:
    """`fixer.parses` for a notebook: it is still one (apply_edits has checked every cell it changed)."""
    try:
        parse(text)
    except NotebookError:
        return False
    return True
