"""One bertlint run: settings, discovery, lint every file, apply fixes; nothing printed here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from bertlint import engine, fixer, notebook
from bertlint.config import Settings, load_settings
from bertlint.discovery import discover
from bertlint.report import Finding
from bertlint.rules import all_codes


@dataclass
class Outcome:
    findings: list[Finding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # unreadable paths: reported, the run goes on
    internal_errors: list[str] = field(default_factory=list)
    fixed: int = 0
    diff_text: str = ""
    files: int = 0


def settings_for(paths: list[Path], overrides: Mapping[str, Any] | None = None, config_file: Path | None = None, isolated: bool = False) -> Settings:
    start = paths[0] if paths else Path(".")
    start = start if start.is_dir() else start.parent
    return load_settings(start.resolve(), all_codes(), config_file=config_file, overrides=overrides, isolated=isolated)


def run(paths: list[Path], *, overrides: Mapping[str, Any] | None = None, config_file: Path | None = None,
        isolated: bool = False, fix: str | None = None, diff: str | None = None) -> Outcome:
    settings = settings_for(paths, overrides, config_file, isolated)
    files, problems = discover(paths, settings)
    outcome = Outcome(problems=[f"{p}: {msg}" for p, msg in problems], files=len(files))
    mode = fix or diff
    allowed = {"safe", "unsafe"} if mode == "unsafe" else {"safe"}
    for path in files:
        outcome.findings.extend(lint_path(path, settings, outcome, allowed if mode else None, write=bool(fix)))
    return outcome


def lint_path(path: Path, settings: Settings, outcome: Outcome, allowed: set[str] | None, write: bool) -> list[Finding]:
    """Lint one file (and fix it when asked); I/O errors become problems, never exceptions."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        outcome.problems.append(f"{path}: {exc.strerror or exc}")
        return []
    try:
        decoded = engine.decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return [engine.decode_error_finding(path, exc)] if "BL901" in settings.codes_for(path) else []
    try:
        findings = _kind(path)[0](decoded.text, path, settings)
    except Exception as exc:  # an internal error must not lose the other files' findings
        outcome.internal_errors.append(engine.describe_internal_error(path, exc))
        return []
    if allowed is None or not any((f.fix or f.extra.get("hidden_fix")) for f in findings):
        return findings
    text, findings, total = fix_text(decoded.text, findings, path, settings, allowed)
    if total:
        outcome.fixed += total
        if write:
            fixer.write_atomic(path, fixer.encode(text, decoded))
        else:
            outcome.diff_text += fixer.unified_diff(str(path), decoded.text, text)
    return findings


def _kind(path: Path):
    """(lint, apply_edits, parses) for the file's kind: a notebook's JSON text, or a script."""
    if path.suffix == ".ipynb":
        return notebook.lint_text, notebook.apply_edits, notebook.parses
    return engine.lint_source, fixer.apply_edits, fixer.parses


def fix_text(text: str, findings: list[Finding], path: Path, settings: Settings, allowed: set[str]) -> tuple[str, list[Finding], int]:
    """Apply fixes pass by pass until none applies or the result would not parse: (text, findings left, fixes applied)."""
    lint, apply, parses = _kind(path)
    total = 0
    for _ in range(fixer.MAX_PASSES):
        new_text, applied = apply(text, findings, allowed)
        if not applied or not parses(new_text):
            break
        text, total = new_text, total + len(applied)
        findings = lint(text, path, settings)
    return text, findings, total
