"""The IPython extension: `%load_ext bertlint` lints each cell as it runs, in Jupyter, Colab and IPython.

Every cell the kernel runs is linted after it runs, together with the cells run before it (so the
tokenizer loaded three cells ago is known), and the findings that sit in that cell are shown under
it: a compact HTML block where the front end renders HTML, plain text in terminal IPython. The cells
are the kernel's input history (`In`), in the order they ran and numbered as the prompts number
them, cells run before the extension was loaded included.

`%bertlint` lints the whole session so far; `%bertlint strict` lints each cell *before* it runs and
rejects one with error findings (IPython's `InputRejected`: the cell does not run); `%bertlint on`
goes back to linting after each cell; `%bertlint off` stops; `%bertlint verify` runs the `--verify`
probes on the session's code in a child process. Nothing here imports torch or transformers, and an
internal error is one line on stderr: a finding never breaks the user's cell, outside strict mode.
"""

from __future__ import annotations

import ast
import html
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bertlint import notebook
from bertlint.report import PAGE_URL, Finding, Notice, verification_text
from bertlint.runner import settings_for
from bertlint.target import target_version

MODES = ("on", "strict", "off")
USAGE = "usage: %bertlint [on | strict | off | verify]  (no argument: lint the whole session so far)"


class Findings:
    """What a cell's findings look like: HTML for front ends that render it, text for a terminal."""

    def __init__(self, findings: list[Finding], title: str) -> None:
        self.findings = findings
        self.title = title

    def __repr__(self) -> str:
        lines = [f"bertlint: {self.title}"]
        for f in self.findings:
            lines += [f"{_where(f)}:{f.column}: {f.code} {f.message}", *([f"    {f.source_line.strip()}"] if f.source_line else []),
                      f"    help: {f.help}", *([f"    {verification_text(f.verification)}"] if f.verification else [])]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows = []
        for f in self.findings:
            verdict = f"<div>{html.escape(verification_text(f.verification))}</div>" if f.verification else ""
            rows.append(
                f'<div style="margin:2px 0;padding:2px 6px;border-left:3px solid {_COLOUR.get(f.severity, "#888")}">'
                f'<a href="{PAGE_URL.format(code=f.code)}" target="_blank"><code>{f.code}</code></a> '
                f"<b>{html.escape(f.name)}</b> ({_where(f)}): {html.escape(f.message)}"
                f'<pre style="margin:2px 0">{html.escape(f.source_line)}</pre>'
                f"<div>help: {html.escape(f.help)}</div>{verdict}</div>"
            )
        return f'<div class="bertlint"><div><b>bertlint</b>: {html.escape(self.title)}</div>{"".join(rows)}</div>'


_COLOUR = {"error": "#d73a49", "warning": "#dbab09", "info": "#0366d6"}


def _where(f: Finding) -> str:
    """`In [4], line 2`: the cell as its prompt numbers it."""
    return (f"In [{f.cell}], " if f.cell is not None else "") + f"line {f.line}"


class Session:
    """The cells this kernel ran, and what the extension was asked to do with the next ones."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell
        self.mode = "on"
        self.rejected: str | None = None  # strict mode's verdict on the cell about to run
        self.guard = _Guard(self)

    # --- IPython's events ------------------------------------------------------------------
    def pre_run_cell(self, info: Any) -> None:
        self.rejected = None
        if self.mode != "strict" or _is_own_magic(info.raw_cell):
            return
        errors = [f for f in self._safely(lambda: self.lint([*self.history(), info.raw_cell], last=True)) if f.severity == "error"]
        if errors:
            self._show(Findings(errors, "error findings: the cell was not run (`%bertlint on` runs cells again)"))
            self.rejected = f"bertlint: {len(errors)} error finding(s) in this cell; it was not run"

    def post_run_cell(self, result: Any) -> None:
        raw = result.info.raw_cell if result.info is not None else ""
        if self.mode != "on" or result.error_before_exec is not None or not raw.strip() or _is_own_magic(raw):
            return  # off, never ran (rejected, a syntax error), or nothing to say
        cells = self.history()
        if len(cells) < result.execution_count:  # run without storing history (`store_history=False`)
            cells.append(raw)
        found = self._safely(lambda: self.lint(cells, last=True))
        if found:
            self._show(Findings(found, f"{len(found)} finding(s) in this cell"))

    # --- linting ---------------------------------------------------------------------------
    def path(self) -> Path:
        """The notebook's own path where the front end says it (Jupyter's session name), else the cwd's."""
        name = os.environ.get("JPY_SESSION_NAME", "")
        return Path(name) if name.endswith(".ipynb") else Path.cwd() / "session.ipynb"

    def history(self) -> list[str]:
        """The raw cells this kernel ran, in order; cell N is the prompt's `In [N]`."""
        return list(self.shell.history_manager.input_hist_raw[1:]) if self.shell.history_manager else []

    def lint(self, cells: list[str], last: bool = False) -> list[Finding]:
        """Findings of `cells` run in order: all of them, or only those in the `last` cell."""
        path = self.path()
        settings = settings_for([path.parent])
        text = notebook.from_cells(("code", source) for source in cells)
        notices: list[Notice] = []  # cells bertlint's parser cannot read: said on stderr, as the command line says them
        findings = notebook.lint_text(text, path, settings, target=target_version(settings, path, text), notices=notices, history=True)
        for notice in notices:
            if not last or notice.cell == len(cells):
                print(f"bertlint: warning: {notice}", file=sys.stderr)
        return [f for f in findings if f.cell == len(cells)] if last else findings

    def verify(self) -> list[Finding]:
        """Run `bertlint --verify` on the session's code in a child process (torch is imported there)."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / self.path().name
            path.write_text(notebook.from_cells(("code", source) for source in self.history()), encoding="utf-8")
            done = subprocess.run([sys.executable, "-m", "bertlint", "--verify", "--no-cache", "--format", "json", str(path)],
                                  capture_output=True, text=True, cwd=Path.cwd())
        if done.returncode not in (0, 1):
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
        fields = Finding.__dataclass_fields__
        return [Finding(**{k: v for k, v in item.items() if k in fields and k != "fix"}) for item in json.loads(done.stdout)]

    # --- %bertlint -------------------------------------------------------------------------
    def magic(self, line: str) -> None:
        word = line.strip()
        if word in MODES:
            self.mode = word
            print(f"bertlint: {_MODE_TEXT[word]}")
        elif word == "":
            cells = self.history()
            found = self._safely(lambda: self.lint(cells))
            self._show(Findings(found, f"{len(found)} finding(s) in the {len(cells)} cell(s) run so far"))
        elif word == "verify":
            found = self._safely(self.verify)
            self._show(Findings(found, f"{len(found)} finding(s) in the session, probed with --verify"))
        else:
            print(USAGE, file=sys.stderr)

    def _show(self, findings: Findings) -> None:
        from IPython.display import display

        display(findings)

    def _safely(self, work: Any) -> list[Finding]:
        try:
            return work()
        except Exception as exc:  # the user's cell comes first
            print(f"bertlint: internal error, nothing linted: {type(exc).__name__}: {exc}", file=sys.stderr)
            return []


_MODE_TEXT = {
    "on": "linting each cell after it runs",
    "strict": "linting each cell before it runs; a cell with error findings is not run",
    "off": "not linting cells (`%bertlint on` to resume)",
}


class _Guard(ast.NodeTransformer):
    """Strict mode's stop: IPython runs AST transformers after `pre_run_cell`, and a cell whose
    transformer raises `InputRejected` is reported and not run."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def visit(self, node: ast.AST) -> ast.AST:
        reason, self.session.rejected = self.session.rejected, None
        if reason is not None:
            raise _rejection(reason)
        return node


def _rejection(reason: str) -> Exception:
    """IPython's `InputRejected`, shown as its one line rather than a traceback into this module."""
    from IPython.core.error import InputRejected

    class CellRejected(InputRejected):
        def _render_traceback_(self) -> list[str]:
            return [str(self)]

    return CellRejected(reason)


def _is_own_magic(cell: str) -> bool:
    return cell.lstrip().startswith(("%bertlint", "%load_ext bertlint", "%reload_ext bertlint"))


_SESSIONS: dict[int, Session] = {}  # one per shell: what loading and unloading pair up


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext bertlint` (the package hands IPython this function)."""
    if id(shell) in _SESSIONS:
        return
    session = _SESSIONS[id(shell)] = Session(shell)
    shell.events.register("pre_run_cell", session.pre_run_cell)
    shell.events.register("post_run_cell", session.post_run_cell)
    shell.ast_transformers.append(session.guard)
    shell.register_magic_function(session.magic, magic_kind="line", magic_name="bertlint")


def unload_ipython_extension(shell: Any) -> None:
    session = _SESSIONS.pop(id(shell), None)
    if session is None:
        return
    shell.events.unregister("pre_run_cell", session.pre_run_cell)
    shell.events.unregister("post_run_cell", session.post_run_cell)
    shell.ast_transformers.remove(session.guard)
