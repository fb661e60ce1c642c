"""Apply fixes to source text: non-overlapping edits, re-linted until stable, verified to parse."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import libcst as cst

from bertlint.engine import LINE_END, Decoded, source_lines
from bertlint.ipython import mask_script
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
    """Does libcst read `text` (a cell script as IPython runs it: `ipython.mask_script`)?"""
    try:
        cst.parse_module(mask_script(text) or text)
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


class NotWritten(Exception):
    """The fixed bytes were not written; the message says why and ends "not fixed"."""


def write_in_place(path: Path, before: bytes, after: bytes) -> None:
    """Replace the bytes of `path`, linted as `before`, by `after`, or raise NotWritten (the file untouched).

    In place, through the open file, rather than a temporary file renamed over it: the only write that
    keeps the file itself — every hard link to it, its owner, mode, ACLs and extended attributes, the
    symbolic links that lead to it and the editors watching it — and the only one that the file's
    own mode governs (a rename asks the directory, which is how a mode-444 file got rewritten).
    What a rename gave, no half-written file, comes from: refusing a file whose mode allows no
    write (root could open it), comparing the bytes on disk with `before` just before writing
    (a file deleted or saved by an editor since it was read is left alone), reserving the room
    for a longer text before a byte changes (a full disk fails here), and writing `before` back
    should the write itself fail."""
    try:
        fd = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))  # follows a symbolic link; never creates
    except FileNotFoundError:
        raise NotWritten("deleted since it was read: not fixed") from None
    except OSError as exc:
        raise NotWritten(f"{_why(exc)}: not fixed") from None
    try:
        if not os.fstat(fd).st_mode & 0o222:
            raise NotWritten("read-only: not fixed")
        if _read_all(fd) != before:
            raise NotWritten("changed since it was read: not fixed")
        try:
            if len(after) > len(before) and hasattr(os, "posix_fallocate"):
                try:  # the new tail only: blocks past the end hold nothing to lose
                    os.posix_fallocate(fd, len(before), len(after) - len(before))
                except OSError as exc:
                    if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                        raise
            _write_all(fd, after)
            os.fsync(fd)
        except OSError as exc:
            try:
                _write_all(fd, before)
            except OSError:
                raise NotWritten(f"{_why(exc)}; writing the original back failed too: check the file") from None
            raise NotWritten(f"{_why(exc)}: not fixed") from None
    finally:
        os.close(fd)


def _why(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "read-only"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    return exc.strerror or str(exc)


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    """`data` from the start of the file, then cut the file where it ends."""
    os.lseek(fd, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.ftruncate(fd, len(data))


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib  # for --diff only

    return "".join(
        difflib.unified_diff(source_lines(before, keepends=True), source_lines(after, keepends=True), path, path)
    )
