"""One bertlint run, stage by stage, each handing its result on: settings, the walk (discovery), each
file's target release, the cache, the lint and its fixes. Nothing is printed here."""

from __future__ import annotations

import functools
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from bertlint import cache  # engine, fixer and notebook (libcst) load where a file is linted: not in a run the cache answers
from bertlint.config import Settings, load_settings
from bertlint.discovery import discover
from bertlint.report import Finding, Notice
from bertlint.rules import all_codes, preview_codes
from bertlint.target import Target, Targets


@dataclass(repr=False, eq=False)
class Outcome:
    """What a run found and met: findings, problems, notices, files fixed and the releases targeted."""

    findings: list[Finding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable paths: reported, the run goes on
    warnings: list[str] = field(default_factory=list)  # broken links and loops skipped: no file was left out
    internal_errors: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)  # files or cells not linted (bertlint's parser cannot read them): no finding, no exit code
    fixed: int = 0
    diff_text: str = ""
    files: int = 0
    targets: dict[Target, int] = field(default_factory=dict)  # the releases the files target, and how many each

    def merge(self, part: Outcome) -> None:
        """Add one file's outcome (its `files` count is already in ours)."""
        self.findings += part.findings
        self.problems += part.problems
        self.internal_errors += part.internal_errors
        self.notices += part.notices
        self.fixed += part.fixed
        self.diff_text += part.diff_text


def settings_for(paths: list[Path], overrides: Mapping[str, Any] | None = None, config_file: Path | None = None, isolated: bool = False) -> Settings:
    start = paths[0] if paths else Path(".")
    start = start if start.is_dir() else start.parent
    return load_settings(start.resolve(), all_codes(), preview_codes=preview_codes(), config_file=config_file, overrides=overrides, isolated=isolated)


def run(paths: list[Path], *, overrides: Mapping[str, Any] | None = None, config_file: Path | None = None,
        isolated: bool = False, fix: str | None = None, diff: str | None = None, use_cache: bool = True,
        cache_dir: Path | None = None, jobs: int | None = None, progress: Callable[[int, int], None] | None = None) -> Outcome:
    """`progress(done, total)` is called as files finish; `jobs` defaults to the machine's cores."""
    settings = settings_for(paths, overrides, config_file, isolated)
    files, outcome = _discover(paths, settings)
    allowed = _allowed(fix or diff)
    results = cache.Cache(settings, cache_dir) if use_cache else None
    targets = Targets(settings)  # the run's: what a folder pins is looked up once
    parts: dict[Path, Outcome] = {}
    todo = []
    for path in files:
        hit = _target_stage(path, targets, outcome, results)
        if hit is not None and (allowed is None or not any(f.fix for f in hit)):
            parts[path] = Outcome(findings=hit)
        else:
            todo.append(path)
    job = (settings, targets, allowed, bool(fix), results is not None)
    for path, part, key, inputs in _lint_all(todo, job, jobs or _cores(), progress, len(files) - len(todo), len(files)):
        parts[path] = part
        if key is not None and not part.fixed and not part.internal_errors and not part.notices:  # findings of the bytes on disk (a file not linted is tried again, as ruff does not cache a parse error)
            results.store(path, key, part.findings, inputs)
    for path in files:
        outcome.merge(parts[path])
    if results is not None:
        results.save()
    return outcome


def run_stdin(data: bytes, name: Path, *, overrides: Mapping[str, Any] | None = None, config_file: Path | None = None,
              isolated: bool = False, fix: str | None = None, diff: str | None = None) -> tuple[Outcome, bytes]:
    """Lint source read from standard input as the file `name` would be (its configuration and
    per-file ignores; never cached): -> (outcome, the source with `fix`'s fixes applied)."""
    settings = settings_for([name], overrides, config_file, isolated)
    target = target_of(settings, name, data)
    outcome = Outcome(files=1, targets={target: 1})
    fixed = [data]
    outcome.findings = lint_path(name, data, target, settings, outcome, _allowed(fix or diff), fixed.append if fix else None)
    return outcome, fixed[-1]


def add_noqa(paths: list[Path], *, overrides: Mapping[str, Any] | None = None, config_file: Path | None = None,
             isolated: bool = False) -> Outcome:
    """Suppress every finding where it stands (ruff's `--add-noqa`, to adopt bertlint on old code):
    `fixed` counts the lines that got a directive; `findings` holds what could not be suppressed."""
    from bertlint import engine, fixer, notebook

    settings = settings_for(paths, overrides, config_file, isolated)
    files, outcome = _discover(paths, settings)
    targets = Targets(settings)
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as exc:
            outcome.problems.append(f"{path}: {exc.strerror or exc}")
            continue
        target = target_of(settings, path, data, targets)
        outcome.targets[target] = outcome.targets.get(target, 0) + 1
        findings = lint_path(path, data, target, settings, outcome, None, None)
        if all(f.code in ("BL901", "BL902") for f in findings):  # nothing to suppress (or the file did not decode)
            outcome.findings += findings
            continue
        decoded = engine.decode(data)
        sources: dict[int | None, str | None] = {None: decoded.text}
        if path.suffix == ".ipynb":  # the findings of a notebook sit in its cells
            sources = {cell.number: notebook.mask(cell.source) for cell in notebook.parse(decoded.text).cells}
        edits = [edit for cell, source in sources.items() if source
                 for edit in engine.noqa_fixes([f for f in findings if f.cell == cell], source)]
        lint, apply, parses = _kind(path)
        text, applied = apply(decoded.text, edits, {"safe"})
        if applied and parses(text):
            try:
                fixer.write_in_place(path, data, fixer.encode(text, decoded))
            except fixer.NotWritten as exc:
                outcome.problems.append(f"{path}: {exc}")
            else:
                outcome.fixed += len(applied)
                findings = lint(text, path, settings, target=target)  # what could not be suppressed
        outcome.findings += findings
    return outcome


def _discover(paths: list[Path], settings: Settings) -> tuple[list[Path], Outcome]:
    """The files to lint, and an outcome that starts with what finding them ran into."""
    files, problems, warnings = discover(paths, settings)
    return files, Outcome(problems=[f"{p}: {msg}" for p, msg in problems], warnings=[f"{p}: {msg}" for p, msg in warnings], files=len(files))


def _allowed(mode: str | None) -> set[str] | None:
    """The fix applicabilities a run may apply: none, safe, or safe and unsafe."""
    return ({"safe", "unsafe"} if mode == "unsafe" else {"safe"}) if mode else None


POOL_MIN_FILES = 4  # fewer are linted in-process: a forked pool pays off from 2-3 files of 300 lines, not for small ones
POOL_MIN_BYTES = 32 * 1024  # less source is linted in-process (~0.2 s): starting the workers would cost more
CHUNKS_PER_WORKER = 4  # files go to the workers in this many batches each, of about equal bytes: few messages, even loads

_Job = tuple[Settings, Targets, "set[str] | None", bool, bool]  # settings, the run's targets, fixes allowed, write, cache keys wanted
_Done = tuple[Path, Outcome, "str | None", list]  # path, its outcome, cache key of the bytes linted, other files read


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _lint_all(paths: list[Path], job: _Job, jobs: int, progress: Callable[[int, int], None] | None, done: int, total: int) -> Iterator[_Done]:
    """Lint `paths` in this process, or over a process pool when there are enough of them to pay for
    one, sent in batches (largest files first) so that thousands of tiny files cost a few messages,
    not one each. A worker that dies costs its batch an internal error, not the run."""
    if progress is not None:
        progress(done, total)
    sized = sorted(((_size(path), path) for path in paths), key=lambda item: item[0], reverse=True)
    if jobs < 2 or len(paths) < POOL_MIN_FILES or sum(size for size, _ in sized) < POOL_MIN_BYTES:
        for path in paths:
            yield _check(path, job)
            done += 1
            if progress is not None:
                progress(done, total)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    workers = min(jobs, len(paths))
    # fork on Linux: the workers inherit the lint modules and the rules, imported here once, instead of
    # each importing them again (~0.3 s of CPU a worker); elsewhere fork is unsafe or missing, and
    # the platform's default start method is used
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else None)
    if context.get_start_method() == "fork":
        from bertlint import engine, fixer, notebook  # noqa: F401 (imported for the workers)
        from bertlint.rules import all_rules

        all_rules()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = {pool.submit(_check_batch, batch, job): batch for batch in _batches(sized, workers * CHUNKS_PER_WORKER)}
        for future in as_completed(futures):
            try:
                yield from future.result()
            except BrokenProcessPool as exc:
                from bertlint import engine

                for path in futures[future]:
                    yield path, Outcome(internal_errors=[engine.describe_internal_error(path, exc)]), None, []
            done += len(futures[future])
            if progress is not None:
                progress(done, total)


def _batches(sized: list[tuple[int, Path]], count: int) -> list[list[Path]]:
    """(size, path) pairs, largest first, in about `count` batches of about equal bytes (a file larger
    than a batch's share is a batch of its own)."""
    share = max(1, sum(size for size, _ in sized) // count)
    batches: list[list[Path]] = []
    room = 0
    for size, path in sized:
        if room <= 0:
            batches.append([])
            room = share
        batches[-1].append(path)
        room -= max(size, 1)
    return batches


def _check_batch(paths: list[Path], job: _Job) -> list[_Done]:
    return [_check(path, job) for path in paths]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _check(path: Path, job: _Job) -> _Done:
    """Read and lint one file into its own outcome; when caching, also the key of the bytes
    linted and the state of the other files the lint read."""
    settings, targets, allowed, write, keyed = job
    part = Outcome()
    try:
        data = path.read_bytes()
    except OSError as exc:
        part.problems.append(f"{path}: {exc.strerror or exc}")
        return path, part, None, []
    from bertlint import fixer

    target, reads = target_of(settings, path, data, targets), []
    part.findings = lint_path(path, data, target, settings, part, allowed, functools.partial(fixer.write_in_place, path, data) if write else None, reads)
    if not keyed:
        return path, part, None, []
    return path, part, cache.file_key(data, target), cache.snapshot(reads)


def target_of(settings: Settings, path: Path, data: bytes, targets: Targets | None = None) -> Target:
    """The release the file whose bytes are `data` targets (a `# /// script` pin, a notebook's install cell, or the
    install line a notebook export kept, is read from them); `targets`: the run's, which knows the folders already
    looked at."""
    pinned = b"# /// script" in data or b"install" in data
    return (targets if targets is not None else Targets(settings))(path, data.decode("utf-8", "replace") if pinned else None)


def _target_stage(path: Path, targets: Targets, outcome: Outcome, results: cache.Cache | None) -> list[Finding] | None:
    """Count the release the file targets, and return its cached findings, or None when it must be linted."""
    try:
        data = path.read_bytes()
    except OSError:
        return None  # the lint reports it
    target = target_of(targets.settings, path, data, targets)
    outcome.targets[target] = outcome.targets.get(target, 0) + 1
    return results.lookup(path, cache.file_key(data, target)) if results is not None else None


def lint_path(path: Path, data: bytes, target: Target, settings: Settings, outcome: Outcome, allowed: set[str] | None,
              write: Callable[[bytes], None] | None, reads: list[str] | None = None) -> list[Finding]:
    """Lint one file's bytes and apply the `allowed` fixes: `write` takes the fixed bytes (and may raise
    `fixer.NotWritten`), or without it they become a diff in `outcome`. Errors are recorded in
    `outcome`, never raised. The other files the lint read (or looked for) are added to `reads`: its
    findings depend on them."""
    from bertlint import engine, fixer

    try:
        decoded = engine.decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return [engine.decode_error_finding(path, exc)] if "BL901" in settings.codes_for(path) else []
    try:
        findings = _kind(path)[0](decoded.text, path, settings, target=target, reads=reads, notices=outcome.notices)
    except Exception as exc:  # an internal error must not lose the other files' findings
        outcome.internal_errors.append(engine.describe_internal_error(path, exc))
        return []
    if allowed is None or not any((f.fix or f.extra.get("hidden_fix")) for f in findings):
        return findings
    text, fixed_findings, total = fix_text(decoded.text, findings, path, settings, allowed, target)
    if not total:
        return fixed_findings
    if write is None:
        outcome.diff_text += fixer.unified_diff(str(path), decoded.text, text)
    else:
        try:
            write(fixer.encode(text, decoded))
        except fixer.NotWritten as exc:  # the file as it is on disk keeps its findings
            outcome.problems.append(f"{path}: {exc}")
            return findings
    outcome.fixed += total
    return fixed_findings


def _kind(path: Path, notebook_text: bool | None = None):
    """(lint, apply_edits, parses) for a notebook's JSON text or a script: by the file's suffix unless
    `notebook_text` says (an editor's notebook need not be a `.ipynb` file)."""
    if notebook_text if notebook_text is not None else path.suffix == ".ipynb":
        from bertlint import notebook

        return notebook.lint_text, notebook.apply_edits, notebook.parses
    from bertlint import engine, fixer

    return engine.lint_source, fixer.apply_edits, fixer.parses


def fix_text(text: str, findings: list[Finding] | None, path: Path, settings: Settings, allowed: set[str],
             target: Target, notebook_text: bool | None = None) -> tuple[str, list[Finding], int]:
    """Apply fixes pass by pass until none applies or the result would not parse: (text, findings left,
    how many of the findings of `text` are fixed). `findings` None: lint `text` first; `notebook_text`
    as for `_kind`. A finding that one fix brings about and a later pass fixes (BL101's `padding=` then
    wants BL105's `truncation=`) is not counted: "1 fixable" never turns into "Fixed 2 findings"."""
    from bertlint import fixer

    lint, apply, parses = _kind(path, notebook_text)
    if findings is None:
        findings = lint(text, path, settings, target=target)
    before, original = findings, text
    for _ in range(fixer.MAX_PASSES):
        new_text, applied = apply(text, findings, allowed)
        if not applied or not parses(new_text):
            break
        text = new_text
        findings = lint(text, path, settings, target=target)
    if text == original:
        return text, findings, 0
    left = Counter((f.code, f.message) for f in findings)  # positions move with the fixes; code and message stay
    gone = 0
    for finding in before:
        key = (finding.code, finding.message)
        if left[key]:
            left[key] -= 1
        else:
            gone += 1
    return text, findings, max(gone, 1)  # the text changed: something was fixed
