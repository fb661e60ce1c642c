"""What a finding is, and how findings are written out (the bottom of the import graph)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

SEVERITIES = ("error", "warning", "info")
PAGE_URL = "https://github.com/bertlint/bertlint/blob/main/rules/{code}.md"


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions; end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """An edit that removes a finding, safe or unsafe to apply."""

    applicability: str  # "safe" | "unsafe"
    message: str
    edits: tuple[Edit, ...]


@dataclass
class Finding:
    """One diagnostic. Positions are 1-based; end_column is exclusive, like ruff's."""

    code: str
    name: str
    severity: str
    message: str
    help: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = None
    verification: dict[str, Any] | None = None
    cell: int | None = None
    source_line: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


@dataclass(frozen=True)
class Notice:
    """A file, or a notebook cell, that bertlint did not lint, and why: a limit of bertlint's (its parser cannot
    read what Python compiles), not a finding of the user's code. Reported as tools report their own trouble:
    on stderr, in SARIF's `toolExecutionNotifications`, in the editor's log; it never changes the exit code."""

    path: str
    message: str
    line: int = 1  # 0: no place in the file (it is not linted as a whole)
    column: int = 1
    cell: int | None = None

    def __str__(self) -> str:
        return f"{_location(self) if self.line > 0 else self.path}: not linted: {self.message}"


# --- Writing findings out -------------------------------------------------------------------
# Everything below is stdlib-only at import time (rich is imported lazily for colour), so the
# CLI's start-up cost does not grow with the number of output formats.

FORMATS: tuple[str, ...] = ("full", "concise", "json", "lsp", "sarif", "github")

INFORMATION_URI = "https://github.com/bertlint/bertlint"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

# One table per consumer's vocabulary: full (rich style), lsp, sarif, github.
_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}
_LSP_SEVERITY = {"error": 1, "warning": 2, "info": 3}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def fix_to_dict(fix: Fix | None) -> dict[str, Any] | None:
    """The JSON shape of a fix (1-based positions), shared by the json and lsp formats."""
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.message,
        "edits": [
            {"line": e.line, "column": e.column, "end_line": e.end_line, "end_column": e.end_column,
             "content": e.content}
            for e in fix.edits
        ],
    }


def finding_to_dict(f: Finding) -> dict[str, Any]:
    """The `json` format's object for one finding; `cell`/`verification` only when set."""
    out: dict[str, Any] = {
        "code": f.code, "name": f.name, "severity": f.severity, "message": f.message,
        "help": f.help, "path": f.path, "line": f.line, "column": f.column,
        "end_line": f.end_line, "end_column": f.end_column, "fix": fix_to_dict(f.fix),
        "url": PAGE_URL.format(code=f.code),
    }
    if f.cell is not None:
        out["cell"] = f.cell
    if f.verification is not None:
        out["verification"] = f.verification
    return out


def verification_text(v: dict[str, Any]) -> str:
    """One human line for a verification result, e.g. `verified on cpu in 2.1 s: <evidence>`."""
    status = v.get("status")
    evidence = v.get("evidence") or ""
    if status == "could_not_run":
        return f"could not run: {evidence}"
    head = "verified" if status == "confirmed" else "not confirmed"
    if v.get("device"):
        head += f" on {v['device']}"
    if v.get("seconds") is not None:
        head += f" in {float(v['seconds']):.1f} s"
    return f"{head}: {evidence}"


def verification_tag(v: dict[str, Any]) -> str:
    """The verdict in brackets for one-line formats, e.g. `[confirmed on cpu in 0.4 s]`; the evidence is left out."""
    if v.get("status") == "could_not_run":
        return f"[could not run: {v.get('evidence') or 'no reason given'}]"
    head = "confirmed" if v.get("status") == "confirmed" else "not confirmed"
    where = f" on {v['device']}" if v.get("device") else ""
    took = f" in {float(v['seconds']):.1f} s" if v.get("seconds") is not None else ""
    return f"[{head}{where}{took}]"


def _location(f: Finding | Notice) -> str:
    """`path:line:col`, or `path:cell N:line:col` for a notebook cell."""
    cell = f"cell {f.cell}:" if f.cell is not None else ""
    return f"{f.path}:{cell}{f.line}:{f.column}"


def _painter(color: bool):
    """Return paint(text, style) -> text, wrapping in ANSI codes only when colour is asked for."""
    if not color:
        return lambda text, style: text
    from rich.color import ColorSystem
    from rich.style import Style

    return lambda text, style: Style.parse(style).render(text, color_system=ColorSystem.STANDARD)


def _header(f: Finding, paint, marker: bool) -> str:
    fixable = " [*]" if marker and f.fix is not None else ""
    return (f"{paint(_location(f), 'bold')}: {paint(f.code, _STYLE.get(f.severity, 'bold'))}"
            f"{paint(fixable, 'cyan')} {f.message}")


def _snippet(f: Finding, paint) -> list[str]:
    """The source line under a line-number gutter, with the span underlined by carets."""
    src = f.source_line
    if not src:
        return []
    start = max(f.column, 1)
    end = f.end_column if f.end_line == f.line else len(src) + 1
    # Keep tabs in the padding so the carets line up under tab-indented code.
    pad = "".join(c if c == "\t" else " " for c in src[: start - 1])
    carets = paint("^" * max(end - start, 1), _STYLE.get(f.severity, "bold"))
    num = str(f.line)
    bar = paint(" " * len(num) + " |", "blue")
    return [bar, paint(f"{num} |", "blue") + f" {src}", f"{bar} {pad}{carets}", bar]


def _full(f: Finding, paint, show_fixes: bool) -> str:
    lines = [_header(f, paint, marker=True), *_snippet(f, paint)]
    if f.help:
        lines.append(f"  = {paint('help', 'bold')}: {f.help}")
    if f.verification is not None:
        lines.append(f"  = {verification_text(f.verification)}")
    if show_fixes and f.fix is not None:
        lines.append(f"  = fix ({f.fix.applicability}): {f.fix.message}")
        lines += [f"      {e.line}:{e.column}-{e.end_line}:{e.end_column} -> {e.content!r}"
                  for e in f.fix.edits]
    return "\n".join(lines) + "\n"


def _range0(line: int, column: int, end_line: int, end_column: int) -> dict[str, Any]:
    """An LSP Range: 0-based lines and characters."""
    return {"start": {"line": line - 1, "character": column - 1},
            "end": {"line": end_line - 1, "character": end_column - 1}}


def _lsp(findings: list[Finding]) -> dict[str, list[dict[str, Any]]]:
    """URI -> Diagnostic[]; help and the fix travel in `data` for code actions."""
    out: dict[str, list[dict[str, Any]]] = {}
    for f in findings:
        uri = Path(f.path).resolve().as_uri()
        rng = _range0(f.line, f.column, f.end_line, f.end_column)
        data = {"name": f.name, "help": f.help, "fix": fix_to_dict(f.fix)}
        diag: dict[str, Any] = {
            "range": rng, "severity": _LSP_SEVERITY[f.severity], "code": f.code,
            "codeDescription": {"href": PAGE_URL.format(code=f.code)}, "source": "bertlint",
            "message": f.message, "data": data,
        }
        if f.cell is not None:
            data["cell"] = f.cell
        if f.verification is not None:
            data["verification"] = f.verification
            diag["relatedInformation"] = [
                {"location": {"uri": uri, "range": rng},
                 "message": verification_text(f.verification)}
            ]
        out.setdefault(uri, []).append(diag)
    return out


def _artifact_uri(path: str) -> str:
    """A relative posix URI reference where the path lies under the cwd, else a file: URI."""
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri()
    return quote(p.as_posix(), safe="/")


def _region(line: int, column: int, end_line: int, end_column: int) -> dict[str, int]:
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _notification(notice: Notice) -> dict[str, Any]:
    """A SARIF notification (a tool's own trouble, not a result) for a file or cell not linted."""
    where: dict[str, Any] = {"artifactLocation": {"uri": _artifact_uri(notice.path)}}
    if notice.line > 0:
        where["region"] = _region(notice.line, notice.column, notice.line, notice.column)
    out: dict[str, Any] = {
        "level": "warning", "message": {"text": f"not linted: {notice.message}"}, "descriptor": {"id": "not-linted"},
        "locations": [{"physicalLocation": where}],
    }
    if notice.cell is not None:
        out["properties"] = {"cell": notice.cell}
    return out


def _sarif(findings: list[Finding], notices: list[Notice]) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run; rules are the distinct codes present, sorted. Files not linted are
    the invocation's `toolExecutionNotifications` (the run still succeeded)."""
    from bertlint import __version__

    codes = sorted({f.code: f.name for f in findings}.items())
    index = {code: i for i, (code, _) in enumerate(codes)}
    level = {f.code: _SARIF_LEVEL[f.severity] for f in findings}
    rules = [
        {"id": code, "name": name, "helpUri": PAGE_URL.format(code=code),
         "shortDescription": {"text": name}, "defaultConfiguration": {"level": level[code]}}
        for code, name in codes
    ]
    results = []
    for f in findings:
        location = {"uri": _artifact_uri(f.path)}
        result: dict[str, Any] = {
            "ruleId": f.code, "ruleIndex": index[f.code], "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": location,
                "region": _region(f.line, f.column, f.end_line, f.end_column)}}],
        }
        props = {k: v for k, v in (("cell", f.cell), ("verification", f.verification))
                 if v is not None}
        if props:
            result["properties"] = props
        if f.fix is not None:
            result["fixes"] = [{
                "description": {"text": f.fix.message},
                "artifactChanges": [{"artifactLocation": location, "replacements": [
                    {"deletedRegion": _region(e.line, e.column, e.end_line, e.end_column),
                     "insertedContent": {"text": e.content}}
                    for e in f.fix.edits]}],
                "properties": {"applicability": f.fix.applicability},
            }]
        results.append(result)
    driver = {"name": "bertlint", "version": __version__, "informationUri": INFORMATION_URI,
              "rules": rules}
    run: dict[str, Any] = {"tool": {"driver": driver}, "results": results}
    if notices:
        run["invocations"] = [{"executionSuccessful": True, "toolExecutionNotifications": [_notification(n) for n in notices]}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _gh_escape(text: str, prop: bool = False) -> str:
    """GitHub workflow-command escaping; property values also escape `:` and `,`."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _github(f: Finding) -> str:
    props = {"file": f.path, "line": f.line, "col": f.column, "endLine": f.end_line,
             "endColumn": f.end_column, "title": f"{f.code} {f.name}"}
    joined = ",".join(f"{k}={_gh_escape(str(v), prop=True)}" for k, v in props.items())
    message = f.message + (f"\n{verification_text(f.verification)}" if f.verification is not None else "")
    return f"::{_GITHUB_COMMAND[f.severity]} {joined}::{_gh_escape(message)}"


def _github_notice(notice: Notice) -> str:
    """A file not linted as GitHub shows a tool's own warning: an annotation on the file, titled for what it is."""
    props = {"file": notice.path, **({"line": notice.line, "col": notice.column} if notice.line > 0 else {}), "title": "bertlint: not linted"}
    joined = ",".join(f"{k}={_gh_escape(str(v), prop=True)}" for k, v in props.items())
    return f"::warning {joined}::{_gh_escape(notice.message)}"


def format_findings(findings: list[Finding], fmt: str = "full", *, color: bool = False,
                    show_fixes: bool = False, notices: list[Notice] = ()) -> str:
    """Render findings, in sort_key order, in one of FORMATS; colour only for full/concise. `notices` (files not
    linted) go where the format carries a tool's own messages: SARIF's notifications, a GitHub warning annotation;
    json and lsp hold findings only (the command line prints the notices on stderr, as ruff prints "Failed to lint")."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")
    ordered = sorted(findings, key=lambda f: f.sort_key)
    if fmt == "json":
        return json.dumps([finding_to_dict(f) for f in ordered], indent=2, default=str) + "\n"
    if fmt == "lsp":
        return json.dumps(_lsp(ordered), indent=2, default=str) + "\n"
    if fmt == "sarif":
        return json.dumps(_sarif(ordered, list(notices)), indent=2, default=str) + "\n"
    if fmt == "github":
        return "".join(_github(f) + "\n" for f in ordered) + "".join(_github_notice(n) + "\n" for n in notices)
    paint = _painter(color)
    if fmt == "concise":
        return "".join(_header(f, paint, marker=False) + (f" {verification_tag(f.verification)}" if f.verification else "") + "\n" for f in ordered)
    return "\n".join(_full(f, paint, show_fixes) for f in ordered)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _counted(findings: list[Finding]) -> str:
    """`3 errors, 2 warnings and 1 info`: the findings per severity, most severe first (biome's plural `infos`)."""
    parts = [_plural(n, severity) for severity in SEVERITIES if (n := sum(f.severity == severity for f in findings))]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def summary_line(findings: list[Finding], *, fixed: int = 0, files: int | None = None, not_linted: int = 0) -> str:
    """ruff's closing line, counted per severity; `findings` are those remaining, `fixed` how many were fixed
    (their severities are not known here, so they are `findings`); `not_linted`: the files with a part not linted."""
    remaining = len(findings)
    fixable = sum(f.fix is not None for f in findings)
    if remaining == 0:
        text = f"Fixed {_plural(fixed, 'finding')}." if fixed else "All checks passed!"
    elif fixed:
        text = f"Found {_plural(fixed + remaining, 'finding')} ({fixed} fixed; {_counted(findings)} remaining)."
    else:
        hidden = sum(f.fix is None and "hidden_fix" in f.extra for f in findings)  # unsafe fixes not enabled
        how = [f"{fixable} fixable with `--fix`"] * bool(fixable) + [f"{hidden} more with `--unsafe-fixes`" if fixable else f"{hidden} fixable with `--fix --unsafe-fixes`"] * bool(hidden)
        text = f"Found {_counted(findings)}" + (f" ({'; '.join(how)})." if how else ".")
    if files is not None:
        text += f" Checked {_plural(files, 'file')}."
    if not_linted:
        text += f" Not linted: {_plural(not_linted, 'file')} (see the warning{'s' * (not_linted != 1)} above)."
    return text


def statistics(findings: list[Finding]) -> str:
    """`--statistics`: one row per code, most frequent first: count, code, [*] if fixable, name."""
    rows: dict[str, list] = {}
    for f in findings:
        row = rows.setdefault(f.code, [0, False, f.name])
        row[0] += 1
        row[1] = row[1] or f.fix is not None
    if not rows:
        return ""
    ordered = sorted(rows.items(), key=lambda kv: (-kv[1][0], kv[0]))
    cw = len(str(ordered[0][1][0]))
    kw = max(len(code) for code in rows)
    return "".join(
        f"{count:>{cw}}\t{code:<{kw}}\t{'[*]' if fixable else '[ ]'} {name}\n"
        for code, (count, fixable, name) in ordered
    )
