"""Lint one source: decode, parse once, extract facts once, run the rules, place and filter findings."""

from __future__ import annotations

import ast
import functools
import io
import math
import re
import sys
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from bertlint.facts import NEVER, RUNS, Facts, Runtime, liveness, walk
from bertlint.ipython import Expansion, expand_cell_magics, mask_script
from bertlint.parsing import parse_module
from bertlint.patterns import Lazy
from bertlint.report import Edit, Finding, Fix, Notice
from bertlint.versions import Unknown
from bertlint.rules import ENGINE_CODES, Context, Report, all_codes, selected_rules

if TYPE_CHECKING:
    from bertlint.config import Settings
    from bertlint.target import Target

NOQA = Lazy(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_IGNORE = Lazy(r"#\s*bertlint:\s*ignore\[(?P<codes>[^\]]*)\]")
_SKIP_FILE = re.compile(r"#\s*bertlint:\s*skip-file\b")
_BL_CODE = Lazy(r"^BL\d+$")  # a bertlint code, or one meant to be (BLE001 is flake8-blind-except's)
_BRACKET = re.compile(r"[()\[\]{}]")
_NEWLINE = re.compile("\n")
MAX_SOURCE_CHARS = 2 * 2**20  # libcst needs ~470 bytes of memory per character (2 MiB: 0.95 GiB) and parses ~100 KB/s: a larger file is generated data, not a training script


@dataclass(repr=False, eq=False)
class Decoded:
    """A file's text as Python decodes it, with what --fix needs to write it back."""

    text: str
    encoding: str
    bom: bool
    newline: str


def decode(data: bytes) -> Decoded:
    """Decode like Python does (BOM, PEP 263 cookie); remember the BOM and line endings for --fix."""
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in str(exc):
            raise
        encoding = "utf-8"  # no cookie and not UTF-8: decoding names the offending byte, tokenize does not
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    newline = "\r\n" if "\r\n" in text[:10000] else "\n"
    return Decoded(text, "utf-8" if encoding == "utf-8-sig" else encoding, bom, newline)


@dataclass(repr=False, eq=False)
class Suppression:
    """One suppression comment (`# noqa`, `# bertlint: ignore[...]`) and the codes it has silenced."""

    line: int
    codes: frozenset[str] | None  # None: a blanket `# noqa`
    column: int
    end_column: int
    used: set[str] = field(default_factory=set)
    written: tuple[str, ...] = ()  # the codes as written, in order (other tools' codes included)
    noqa: bool = True  # `# noqa: ...` rather than `# bertlint: ignore[...]`


LINE_END = re.compile(r"\r\n|\r|\n")


def source_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines as Python's parser counts them: str.splitlines also breaks at form feeds, U+2028 and other
    separators that are ordinary characters inside a Python line, which would shift every line after them."""
    parts = LINE_END.split(text) if not keepends else re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)
    if keepends:
        return [p for p in parts if p]
    return parts[:-1] if parts and parts[-1] == "" else parts


def _comments(source: str) -> list[tuple[int, int, str]]:
    """(line, 0-based column, text) of every comment; a suppression quoted in a string is no comment."""
    try:
        return [(t.start[0], t.start[1], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):  # the parser accepted it, tokenize did not: scan the lines
        return [(n, line.index("#"), line[line.index("#") :]) for n, line in enumerate(source_lines(source), 1) if "#" in line]


def suppressions(source: str) -> dict[int, list[Suppression]]:
    """`# noqa[: codes]` and `# bertlint: ignore[codes]` comments by 1-based line."""
    out: dict[int, list[Suppression]] = {}
    if "noqa" not in source and "bertlint" not in source:
        return out
    for number, start, comment in _comments(source):
        for pattern in (NOQA, _IGNORE):
            for match in pattern.finditer(comment):
                raw = match.group("codes")
                written = tuple(c.strip() for c in re.split(r"[\s,]+", raw or "") if c.strip())
                codes = None if raw is None else frozenset(c.upper() for c in written)
                column = start + match.start() + 1
                out.setdefault(number, []).append(Suppression(number, codes, column, column + len(match.group(0)), written=written, noqa=pattern is NOQA))
    return out


def _unused(code: str, entry: Suppression, known: Iterable[str], selected: frozenset[str]) -> str | None:
    """What BL902 says of a code that suppressed nothing, or None to say nothing: the codes of other
    tools (`# noqa: E501`, BLE001) are theirs; a bertlint code not selected might fire in another run.
    An unknown bertlint code (BL999, a prefix like BL1, anything in `# bertlint: ignore[...]`) suppresses
    nothing ever, as ruff's RUF102 says of an invalid code in a `# noqa`."""
    if code not in known:
        if entry.noqa and not _BL_CODE.match(code):
            return None
        return f"unknown code {code} in a suppression: bertlint has no such rule (`bertlint rules` lists them; a suppression names whole codes)"
    if code == "BL902" or (code not in selected and code not in ENGINE_CODES):
        return None
    return f"unused suppression of {code}: nothing on this line raises it"


def _without(entry: Suppression, code: str, line: str) -> Fix | None:
    """The fix for an unused code: rewrite the comment without it, or delete the comment when nothing is left."""
    kept = [c for c in entry.written if c.upper() != code]
    if line[entry.end_column - 1 : entry.end_column].isalnum():
        return None  # the directive's codes run into more text (`BL1O1` read as BL1): a rewrite would garble it
    if kept:
        text = f"# noqa: {', '.join(kept)}" if entry.noqa else f"# bertlint: ignore[{', '.join(kept)}]"
        return Fix("safe", "remove the unused code", (Edit(entry.line, entry.column, entry.line, entry.end_column, text),))
    before, after = line[: entry.column - 1], line[entry.end_column - 1 :]
    if after.strip() and not after.lstrip().startswith("#"):
        return None  # words follow the directive inside the comment: they would be left as code
    if not before.strip() and not after.strip():  # a comment line of its own goes, line break included
        edit = Edit(entry.line, 1, entry.line + 1, 1, "")
    else:
        edit = Edit(entry.line, len(before.rstrip()) + 1, entry.line, entry.end_column, "")
    return Fix("safe", "remove the unused suppression", (edit,))


NoqaSlot = tuple[int, int, str]  # (1-based start column, end column, what goes before the codes)


def noqa_slots(source: str, lines: Iterable[int]) -> dict[int, NoqaSlot]:
    """Where a suppression of more codes goes on each of `lines` (1-based) that can take a comment:
    `  # noqa: CODES` at the end of the line, or `, CODES` after the codes of its `# noqa: ...`.
    A line that ends inside a string or after a backslash cannot take one and is left out."""
    wanted = set(lines)
    if not wanted:
        return {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return {}
    ends = {t.start[0] for t in tokens if t.type in (tokenize.NEWLINE, tokenize.NL)}  # lines that end outside a string
    comments = {t.start[0]: t for t in tokens if t.type == tokenize.COMMENT}
    text_lines = source_lines(source)
    slots = {}
    for number in wanted & ends:
        comment = comments.get(number)
        existing = NOQA.search(comment.string) if comment is not None else None
        if existing is not None and existing.group("codes"):
            column = comment.start[1] + existing.end() + 1
            slots[number] = (column, column, ", ")
        else:
            line = text_lines[number - 1]
            slots[number] = (len(line.rstrip()) + 1, len(line) + 1, "  # noqa: ")
    return slots


def noqa_fixes(findings: list[Finding], source: str) -> list[Finding]:
    """For `--add-noqa`: one finding per line, whose fix writes `# noqa: CODES` there or adds the codes
    to the line's `# noqa: ...` (see `noqa_slots`); BL901 (no parse) and BL902 (about a suppression
    itself) are not suppressed."""
    by_line: dict[int, list[Finding]] = {}
    for f in findings:
        if f.code not in ("BL901", "BL902"):
            by_line.setdefault(f.line, []).append(f)
    slots = noqa_slots(source, by_line)
    out = []
    for number, group in sorted(by_line.items()):
        if number not in slots:
            continue
        start, end, before = slots[number]
        codes = ", ".join(sorted({f.code for f in group}))
        fix = Fix("safe", f"add `# noqa: {codes}`", (Edit(number, start, number, end, before + codes),))
        out.append(replace(group[0], fix=fix, extra={}))
    return out


def lint_source(source: str, path: Path, settings: "Settings", codes: Iterable[str] | None = None, *, target: "Target",
                reads: list[str] | None = None, notices: list[Notice] | None = None, runtime: Runtime = Runtime()) -> list[Finding]:
    """All findings for one decoded source text, suppression applied, sorted. `target` is the
    transformers release the file targets (`target.target_version`), resolved by the caller; the other
    files the lint read or looked for (a label CSV, a local checkpoint's config.json) go to `reads`.
    A text Python compiles and bertlint's parser cannot read is not linted: no finding, a `Notice` in
    `notices` (none is a syntax error of the user's). `runtime.notebook`: the text is a notebook's code
    cells joined, each compiled alone by the caller as IPython does (top-level `await`), so the whole is not."""
    selected = frozenset(codes) if codes is not None else settings.codes_for(path)
    display = str(path)
    if _SKIP_FILE.search(source):
        return []
    masked = None if runtime.notebook else mask_script(source)
    if masked is not None and masked != source and _compile_error(source) is not None:  # a cell script: linted as IPython runs it
        findings = lint_source(masked, path, settings, selected, target=target, reads=reads, notices=notices, runtime=replace(runtime, cells=True))
        return _unmasked(findings, source, masked)
    refusal = _refused(source)
    expanded = None if refusal is not None or runtime.notebook else expand_cell_magics(source)
    if expanded is not None:  # a notebook's export whose `%%time` cells run their bodies: linted as that code, in its place
        inner: list[Notice] = []
        findings = lint_source(expanded.text, path, settings, selected, target=target, reads=reads, notices=inner, runtime=replace(runtime, cells=True))
        for notice in inner:
            _notice(notices, replace(notice, line=expanded.place(notice.line, notice.column)[0]) if notice.line > 0 else notice)
        return _expanded(findings, source, expanded)
    if refusal is None:
        try:
            module = parse_module(source)
            refusal = None if runtime.notebook else _compile_time_error(source)
            if refusal is None:
                return _analyse(module, source, path, settings, selected, target, reads, runtime)
        except cst.ParserSyntaxError as exc:  # CPython's message is clearer (libcst says "Syntax Error @ 1:1" for a TabError)
            cpython = _compile_error(source)
            if cpython is None:
                _notice(notices, Notice(display, *_unreadable(source, exc)))
                return []
            refusal = _refusal(cpython)
        except (RecursionError, MemoryError) as exc:
            if _compile_error(source) is None:
                _notice(notices, Notice(display, f"Python {PYTHON} compiles it, but it nests too deeply for bertlint's parser (libcst) "
                                                 f"to analyse ({type(exc).__name__})", 0, 1))
                return []
            refusal = f"the file nests too deeply or is too large to analyse ({type(exc).__name__})", 1, 1
        except SyntaxError as exc:  # a literal libcst parses but CPython refuses (`"\N{bogus}"`), met by a rule reading its value
            refusal = _refusal(_compile_error(source) or exc)
    if "BL901" not in selected:
        return []
    message, line, column = refusal
    lines = source_lines(source)
    return [engine_finding("BL901", message, display, line, column, lines[line - 1] if 0 < line <= len(lines) else "")]


def _unmasked(findings: list[Finding], source: str, masked: str) -> list[Finding]:
    """The findings of a cell script's masked text at their place in `source`: its own line shown, and no fix that
    touches a masked line (its IPython syntax keeps every byte)."""
    lines, masks = source_lines(source), source_lines(masked)
    changed = {number for number, (line, other) in enumerate(zip(lines, masks), 1) if line != other}
    out = []
    for f in findings:
        fix = f.fix
        if fix is not None and any(changed & set(range(e.line, e.end_line + 1)) for e in fix.edits):
            fix = None
        out.append(replace(f, fix=fix, source_line=lines[f.line - 1] if 0 < f.line <= len(lines) else f.source_line))
    return out


def _expanded(findings: list[Finding], source: str, expanded: Expansion) -> list[Finding]:
    """The findings of an export's expanded text (`ipython.expand_cell_magics`) at their place in `source`: one in a
    magic's body on the call's line, at the column of its character in the string literal, without a fix (its text is
    the literal's, escaped); one after it back by the lines the body added, its fix too where no edit reaches a body."""
    lines = source_lines(source)
    out = []
    for f in findings:
        line, column, inside = expanded.place(f.line, f.column)
        end_line, end_column, end_inside = expanded.place(f.end_line, f.end_column)
        fix = f.fix
        if fix is not None:
            edits = [(expanded.place(e.line, e.column), expanded.place(e.end_line, e.end_column), e.content) for e in fix.edits]
            fix = None if inside or any(a[2] or b[2] for a, b, _ in edits) else replace(fix, edits=tuple(
                Edit(a[0], a[1], b[0], b[1], content) for a, b, content in edits))
        if end_inside and not inside or (end_line, end_column) < (line, column):
            end_line, end_column = line, column + 1
        out.append(replace(f, line=line, column=column, end_line=end_line, end_column=end_column, fix=fix,
                           source_line=lines[line - 1] if 0 < line <= len(lines) else f.source_line))
    return sorted(out, key=lambda f: f.sort_key)


PYTHON = "{}.{}.{}".format(*sys.version_info[:3])  # the Python running bertlint: what "Python compiles it" was checked with


def _notice(notices: list[Notice] | None, notice: Notice) -> None:
    if notices is not None:
        notices.append(notice)


def _unreadable(source: str, exc: cst.ParserSyntaxError) -> tuple[str, int, int]:
    """(message, line, column) for a source the running Python compiles and libcst cannot parse: its tokenizer refuses
    an indent that mixes a tab and spaces (CPython counts a tab to the next multiple of 8 columns and accepts it) and
    reports it at 1:1, so the line is found here."""
    why = next((text for text in str(exc).splitlines()[1:] if text.strip()), "").removeprefix("tokenizer error: ") or "no reason given"
    if "dedent" in why or "indent" in why:
        mixed = next((number for number, line in enumerate(source_lines(source), 1)
                      if {" ", "\t"} <= set(line[: len(line) - len(line.lstrip(" \t"))])), None)
        if mixed is not None:
            return (f"Python {PYTHON} compiles it, but bertlint's parser (libcst) cannot read the indent of this line, which mixes "
                    f"a tab and spaces (libcst: {why}); indenting with spaces only lets bertlint lint it"), mixed, 1
    return f"Python {PYTHON} compiles it, but bertlint's parser (libcst) cannot read it here (libcst: {why})", exc.editor_line, exc.editor_column


def newer_syntax(source: str) -> bool:
    """Does libcst read `source`, which the running Python's parser refuses? Then it is the syntax of a newer Python
    (a PEP 701 f-string or a PEP 695 `type` statement, valid from 3.12, met by bertlint on 3.11), linted as libcst
    reads it: whether it runs depends on the Python it runs on, which bertlint does not know. What no Python parses
    (`1 = x`, `print 'x'`) libcst refuses too."""
    try:
        cst.parse_module(source)
    except Exception:
        return False
    return True


# The SyntaxErrors CPython raises only when it compiles what it parsed (compile.c, symtable.c, future.c) that mean the
# same on every Python bertlint runs on: worded alike in 3.10 to 3.13, and raised there for the same code. A file or cell
# that raises one runs nothing (a cell stops Run All there). Left out, and so linted as if it compiled: what one Python
# refuses and another accepts ("asynchronous comprehension outside of an asynchronous function" inside an async
# function's comprehension: refused by 3.10, accepted from 3.11; `__debug__` as a parameter: refused from 3.12), and
# limits ("too many statically nested blocks").
COMPILE_TIME_ERRORS = (
    r"'return' outside function$", r"'yield' outside function$", r"'await' outside function$",
    r"'await' outside async function$", r"'async with' outside async function$", r"'async for' outside async function$",
    r"'yield from' inside async function$", r"'return' with value in async generator$",
    r"'yield' inside (?:list|set|dict) comprehension$", r"'yield' inside generator expression$",
    r"'break' outside loop$", r"'continue' not properly in loop$",
    r"keyword argument repeated: \w+$", r"duplicate argument '\w+' in function definition$",
    r"nonlocal declaration not allowed at module level$", r"no binding for nonlocal '\w+' found$",
    r"name '\w+' is (?:assigned to before|used prior to) (?:global|nonlocal) declaration$",
    r"name '\w+' is parameter and (?:global|nonlocal)$", r"name '\w+' is nonlocal and global$",
    r"annotated name '\w+' can't be (?:global|nonlocal)$",
    r"from __future__ imports must occur at the beginning of the file$", r"future feature \w+ is not defined$",
    r"default 'except:' must be last$",
)


@functools.cache
def _compile_time_errors() -> re.Pattern[str]:
    """`COMPILE_TIME_ERRORS` as one pattern, compiled the first time a file fails to compile (most runs never)."""
    return re.compile("|".join(f"(?:{pattern})" for pattern in COMPILE_TIME_ERRORS))


def compile_time_error(exc: SyntaxError) -> bool:
    """Is `exc`, raised compiling a source the running Python parsed, one of `COMPILE_TIME_ERRORS`?"""
    return _compile_time_errors().match(str(exc.msg)) is not None


def _compile_time_error(source: str) -> tuple[str, int, int] | None:
    """(message, line, column) of the SyntaxError CPython raises only when it compiles what it parsed (`return` or `yield`
    outside a function, `break` outside a loop, `nonlocal` at module level, a keyword argument repeated, a parameter
    named twice: `COMPILE_TIME_ERRORS`): the file runs nothing. None when it compiles, when the running Python cannot
    parse what libcst read (`newer_syntax`: not this Python's to judge), or when the error is none of those."""
    with warnings.catch_warnings():  # its SyntaxWarnings are not ours to print
        warnings.simplefilter("ignore")
        try:
            compile(source, "<source>", "exec", dont_inherit=True)  # one pass, no AST objects: the common case
        except SyntaxError as exc:
            try:
                compile(source, "<source>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
            except (SyntaxError, RecursionError, MemoryError, ValueError):
                return None  # the parser refuses it: not a compile-time error (`newer_syntax`, or libcst's to report)
            return _refusal(exc) if compile_time_error(exc) else None
        except (RecursionError, MemoryError, ValueError):
            pass
    return None


def _refused(source: str) -> tuple[str, int, int] | None:
    """(message, line, column) when the source must not reach libcst, else None. Its native parser
    overflows its stack (a crash, not an exception) on nesting that CPython refuses cleanly, so a
    suspicious source (deep brackets, very long logical lines) is compiled by CPython first."""
    if len(source) > MAX_SOURCE_CHARS:
        size = math.ceil(len(source) * 10 / 2**20) / 10  # rounded up: never "2.0 MiB, more than the 2 MiB"
        return (f"the file has {size} MiB of code, more than the {MAX_SOURCE_CHARS >> 20} MiB bertlint analyses, so it was not "
                "checked; if it is generated, exclude it (`extend-exclude` in the config, or `--extend-exclude`)"), 1, 1
    if "\x00" in source:  # CPython refuses it anywhere; libcst accepts it in a string, whose value then cannot be read
        before = source[: source.index("\x00")]
        return "SyntaxError: source code string cannot contain null bytes", before.count("\n") + 1, len(before) - before.rfind("\n")
    depth = max(accumulate(1 if c in "([{" else -1 for c in _BRACKET.findall(source)), default=0)
    if depth <= 100 and max(map(len, source.replace("\\\n", "").splitlines()), default=0) <= 2000:
        return None
    exc = _compile_error(source)
    if isinstance(exc, (RecursionError, MemoryError)) or (isinstance(exc, SyntaxError) and "too many" in str(exc.msg)):
        return _refusal(exc)  # "too many nested parentheses", "too many levels of indentation"
    return None


def _compile_error(source: str) -> BaseException | None:
    """What CPython's own parser raises on the source, or None when it compiles (or cannot say:
    null bytes, which libcst reports)."""
    try:
        with warnings.catch_warnings():  # its SyntaxWarnings are not ours to print
            warnings.simplefilter("ignore")
            compile(source, "<source>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        return exc
    except ValueError:
        pass
    return None


def _refusal(exc: BaseException) -> tuple[str, int, int]:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg}", exc.lineno or 1, exc.offset or 1
    return f"the file nests too deeply to analyse (CPython's own parser raises {type(exc).__name__})", 1, 1


def _analyse(module: cst.Module, source: str, path: Path, settings: "Settings", selected: frozenset[str], target: "Target",
             reads: list[str] | None, runtime: Runtime) -> list[Finding]:
    """Facts once, every selected rule, then positions and suppressions."""
    libraries = getattr(target, "libraries", {})
    releases = tuple((library, release) for library, (release, _) in (("transformers", target), *libraries.items()) if not isinstance(release, Unknown))
    facts = Facts(module, source, path, replace(runtime, releases=releases))
    ctx = Context(facts, settings, *target, libraries=libraries)
    unknown = [release for release, _ in (target, *ctx.libraries.values()) if isinstance(release, Unknown)]
    for code, rule in selected_rules(selected):
        if rule.needs and not facts.imported(*rule.needs):
            continue
        ctx.rule, before = rule, len(ctx.reports)
        for release in unknown:
            release.compared = False
        rule.check(ctx)
        if any(release.compared for release in unknown):  # judged against a release that cannot be known (a fork's branch)
            del ctx.reports[before:]
    if reads is not None:
        reads += facts.inputs
    return _place(ctx.reports, facts, source, str(path), selected)


def engine_finding(code: str, message: str, path: str, line: int, column: int, text: str, end_column: int | None = None, fix: Fix | None = None) -> Finding:
    name, severity, summary = ENGINE_CODES[code]
    help_text = {
        "BL901": "fix what stops Python from compiling the file; bertlint checks the rest of it once it compiles",
        "BL902": "remove the unused suppression",
    }[code]
    return Finding(code, name, severity, message, help_text, path, line, column, line, end_column or column + 1, fix=fix, source_line=text)


def _place(reports: list[Report], facts: Facts, source: str, path: str, selected: frozenset[str]) -> list[Finding]:
    """Turn reports into positioned findings, drop suppressed ones and those in code that never runs (`liveness`: after
    a statement that certainly stops the run in its scope, a definition that no code that runs names; where the run
    only probably never gets there, the findings that say their own line fails; an `if` arm the file's own values rule
    out), and report unused suppressions."""
    lines = source_lines(source)
    comments = suppressions(source)
    findings: list[Finding] = []
    if reports:
        live = liveness(facts)  # what a rule finds in code that never runs cannot happen
        positions = positions_of(facts.module, [
            node for r in reports for node in (r.node, r.anchor, *(rep.node for rep in (r.fix[2] if r.fix else ()))) if node is not None
        ], source)
        seen: set[tuple] = set()
        for report in reports:
            rng = positions.get(report.node)
            if rng is None:
                continue
            line, column = rng.start.line, rng.start.column + 1
            end_line, end_column = rng.end.line, rng.end.column + 1
            key = (report.rule.code, line, column)
            if key in seen:
                continue
            seen.add(key)
            anchor = positions.get(report.anchor) if report.anchor is not None else None
            candidates = {line} | ({anchor.start.line} if anchor is not None else set())
            if _suppressed(report.rule.code, candidates, comments):
                continue
            reach = live.reach(report.runs or report.node)
            if reach == NEVER or reach > RUNS and report.rule.fails_at_its_line:
                continue
            fix = _fix(report, positions, facts) if report.fix else None
            findings.append(
                Finding(
                    report.rule.code, report.rule.name, report.severity, report.message, report.help, path,
                    line, column, end_line, end_column, fix=fix,
                    source_line=lines[line - 1] if 0 < line <= len(lines) else "",
                )
            )
    if "BL902" in selected:
        known = set(all_codes())
        for number, entries in comments.items():
            for entry in entries:
                for code in sorted((entry.codes or frozenset()) - entry.used):
                    message = _unused(code, entry, known, selected)
                    if message is not None:
                        findings.append(engine_finding("BL902", message, path, number, entry.column, lines[number - 1],
                                                       entry.end_column, fix=_without(entry, code, lines[number - 1])))
    findings.sort(key=lambda f: f.sort_key)
    return findings


def positions_of(module: cst.Module, nodes: Iterable[cst.CSTNode] | None = None, source: str | None = None) -> Mapping[cst.CSTNode, CodeRange]:
    """libcst's PositionProvider table, for the whole module or for (at least) `nodes`.

    Computed directly: through `MetadataWrapper.resolve`, libcst 1.x also walks the whole tree for
    an empty batch of providers. Position-tracking codegen costs about 1.5 parses, so with `nodes`
    it runs only on the top-level statements that hold them, each as a module of its own. The lines
    before such a statement come from CPython's line numbers when `source` (the module's text) is
    given and its code is found there (`_statement_lines`), else from counting the lines of the code of
    every statement before it (plain codegen, five times cheaper than position tracking, and what
    dominated a one-file run before: 12 ms of 84 on benchmarks/data/train_classifier.py)."""
    if nodes is None:
        return _positions_and_code(module)[0]
    wanted = {id(node): node for node in nodes}
    found: dict[cst.CSTNode, CodeRange] = {}
    located = _statement_lines(module, source) if wanted and source is not None else None
    offset = 0 if located else sum(module.code_for_node(line).count("\n") for line in module.header)
    for index, stmt in enumerate(module.body):
        if not wanted:
            break
        here = [wanted.pop(id(node)) for node in walk(stmt) if id(node) in wanted]  # each node looked at once
        if here:
            alone = cst.Module(body=(stmt,), default_indent=module.default_indent, default_newline=module.default_newline)
            table, code = _positions_and_code(alone)  # `code`: the statement's, as `module.code_for_node(stmt)` writes it
            if located and not located.holds(index, code):
                located = None  # CPython's lines do not place this statement's code: count the lines instead
                offset = sum(module.code_for_node(line).count("\n") for line in (*module.header, *module.body[:index]))
            start = located.lines_before[index] if located else offset
            for node in here:
                if node in table:
                    begin, end = table[node].start, table[node].end
                    found[node] = CodeRange((begin.line + start, begin.column), (end.line + start, end.column))
                else:
                    wanted[id(node)] = node
        if not located:
            offset += module.code_for_node(stmt).count("\n")
    if wanted:  # nodes the code walk skips (a comment in the header or in a statement's whitespace)
        table = positions_of(module)
        found.update((node, table[node]) for node in wanted.values() if node in table)
    return found


def _positions_and_code(module: cst.Module) -> tuple[dict[cst.CSTNode, CodeRange], str]:
    """libcst's PositionProvider table of `module` and its code, from one position-tracking codegen (what
    `PositionProvider._gen_impl` runs, its tokens kept): `_StatementLines.holds` reads the code of a statement without
    a second, plain codegen of it (~1.5 ms of 9 for `positions_of` on the bench script)."""
    provider = PositionProvider()
    state = PositionProvidingCodegenState(default_indent=module.default_indent, default_newline=module.default_newline, provider=provider)
    module._codegen(state)
    return provider._computed, "".join(state.tokens)


@dataclass(repr=False, eq=False)
class _StatementLines:
    """Where each top-level statement of a module starts in its source text, from CPython's parse."""

    source: str
    line_starts: list[int]  # the offset of each line's first character ("\n" ends a line, as libcst counts)
    lines_before: list[int]  # per top-level statement: the lines before its code (its leading blank and comment lines included)

    def holds(self, index: int, code: str) -> bool:
        """Is the statement's code (`Module.code_for_node`) in the source where its line says?"""
        line = self.lines_before[index]
        if not 0 <= line < len(self.line_starts):
            return False
        start = self.line_starts[line]
        last = start + len(code) - 1 == len(self.source)  # the file's last statement, without its final newline
        return self.source.startswith(code[:-1] if last else code, start)


def _statement_lines(module: cst.Module, source: str) -> _StatementLines | None:
    """The lines before each top-level statement, read off CPython's AST: a statement's first line (its first decorator's,
    for a decorated definition) less its leading lines. None where CPython's statements do not pair with libcst's
    (a syntax only libcst reads), or lines may end with a lone carriage return (CPython counts it, libcst does not), or a
    file over half the size cap: its AST (~50 bytes a character) would add to the peak memory that the cap bounds (1,054
    MiB instead of 951 on the bench's 2 MiB file with 29,182 findings, where every statement holds one and nothing is saved)."""
    if "\r" in source or len(source) > MAX_SOURCE_CHARS // 2:
        return None
    try:
        with warnings.catch_warnings():  # its SyntaxWarnings are not ours to print
            warnings.simplefilter("ignore")
            body = compile(source, "<source>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True).body
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    lines_before, at = [], 0
    for stmt in module.body:
        if at >= len(body):
            return None
        first = body[at]
        line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
        leading = len(stmt.leading_lines) + sum(len(d.leading_lines) for d in getattr(stmt, "decorators", ())[:1])
        lines_before.append(line - 1 - leading)
        at += len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
    if at != len(body):
        return None
    line_starts = [0, *(match.end() for match in _NEWLINE.finditer(source))]
    return _StatementLines(source, line_starts, lines_before)


def _suppressed(code: str, lines: set[int], comments: dict[int, list[Suppression]]) -> bool:
    hit = False
    for line in lines:
        for entry in comments.get(line, ()):
            if entry.codes is None or code in entry.codes:
                if entry.codes is not None:
                    entry.used.add(code)
                hit = True
    return hit


def _fix(report: Report, positions, facts: Facts) -> Fix | None:
    applicability, message, replacements = report.fix
    edits = []
    for rep in replacements:
        rng = positions.get(rep.node)
        if rng is None:
            return None
        text = rep.new if isinstance(rep.new, str) else facts.module.code_for_node(rep.new)
        if rep.after:
            edits.append(Edit(rng.end.line, rng.end.column + 1, rng.end.line, rng.end.column + 1, text))
        else:
            edits.append(Edit(rng.start.line, rng.start.column + 1, rng.end.line, rng.end.column + 1, text))
    return Fix(applicability, message, tuple(edits))


def decode_error_finding(path: Path, exc: Exception) -> Finding:
    """A file we cannot decode is a BL901 finding, like one we cannot parse."""
    if isinstance(exc, UnicodeDecodeError):
        line = exc.object[: exc.start].count(b"\n") + 1
        message = f"the file is not valid {exc.encoding} (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); declare its encoding with a `# -*- coding: ... -*-` line or save it as UTF-8"
        return engine_finding("BL901", message, str(path), line, 1, "")
    return engine_finding("BL901", f"the file cannot be decoded: {exc}", str(path), 1, 1, "")


def describe_internal_error(path: Path, exc: BaseException) -> str:
    """`internal error in rule BLxxx on FILE:LINE`, naming the innermost rule frame of the traceback
    and the line of the innermost syntax node the failing frames were looking at."""
    import traceback

    rule = "the engine"
    for frame in traceback.extract_tb(exc.__traceback__):
        name = Path(frame.filename).stem
        if name.startswith("bl") and name[2:].isdigit():
            rule = f"rule {name.upper()}"
    line = _error_line(exc)
    where = f"{path}:{line}" if line is not None else str(path)
    return f"internal error in {rule} on {where}: {type(exc).__name__}: {exc} (please report it at https://github.com/bertlint/bertlint/issues with the file)"


def _error_line(exc: BaseException) -> int | None:
    module, nodes = None, []
    tb = exc.__traceback__
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if isinstance(value, (Facts, Context)):
                module = value.module if isinstance(value, Facts) else value.facts.module
            node = getattr(value, "node", value)
            if isinstance(node, cst.CSTNode) and not isinstance(node, cst.Module):
                nodes.append(node)
        tb = tb.tb_next
    if module is None:
        return None
    try:
        positions = positions_of(module, nodes)
    except Exception:  # describing one error must not raise another
        return None
    return next((positions[node].start.line for node in reversed(nodes) if node in positions), None)
