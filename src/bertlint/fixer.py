"""Apply fixes to source text: non-overlapping edits, re-linted until stable, verified to parse."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

import libcst as cst

from bertlint.engine import LINE_END, Decoded, source_lines
from bertlint.report import Finding

MAX_PASSES = 10
def _offsets(text: str) -> list[int]:
    """Where each line starts, counting lines as the parser does."""
    return [0] + [m.end() for m in LINE_END.finditer(text)]


def apply_edits(text: str, findings: list[Finding], allowed: set[str]) -> tuple[str, list[Finding]]:
    """Apply each finding's fix unless it overlaps one already taken (that one waits for the next pass)."""
    starts = _offsets(text)

    def offset(line: int, column: int) -> int:
        return starts[min(line - 1, len(starts) - 1)] + column - 1

    chosen: list[tuple[int, int, str]] = []
    applied: list[Finding] = []
    for finding in sorted(findings, key=lambda f: f.sort_key):
        fix = finding.fix or finding.extra.get("hidden_fix")
        if fix is None or fix.applicability not in allowed:
            continue
        spans = [(offset(e.line, e.column), offset(e.end_line, e.end_column), e.content) for e in fix.edits]
        if any(not (end <= s or start >= e) or (start == end == s) for start, end, _ in spans for s, e, _ in chosen):
            continue  # conflicts with a fix already chosen in this pass: deferred
        chosen.extend(spans)
        applied.append(finding)
    for start, end, content in sorted(chosen, key=lambda span: span[0], reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def parses(text: str) -> bool:
    try:
        cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError):
        return False
    return True


def encode(text: str, decoded: Decoded) -> bytes:
    """Back to bytes with the original encoding and BOM; newlines a fix inserted become CRLF in a CRLF-only file
    (a file that mixes endings keeps every original byte, and the fix's newlines stay as written)."""
    if decoded.newline == "\r\n" and "\n" not in decoded.text.replace("\r\n", ""):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    data = text.encode(decoded.encoding)
    return (b"\xef\xbb\xbf" + data) if decoded.bom else data


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename over it: never a half-written file."""
    directory = path.parent
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".bertlint-tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(source_lines(before, keepends=True), source_lines(after, keepends=True), path, path)
    )
