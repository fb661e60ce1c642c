"""The command line: `bertlint [check] PATHS`, `bertlint rule CODE`, `bertlint rules`.

Exit codes like ruff: 0 clean, 1 findings, 2 usage/config/internal error.
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path

import click

from bertlint import __version__
from bertlint.collector import collect_rarely


class _DefaultGroup(click.Group):
    """`bertlint train.py` means `bertlint check train.py`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def main(self, args=None, **kwargs):
        """Run from the command line (no `args`), end with `os._exit` once the output is flushed:
        tearing down libcst's many objects would cost a one-file run ~40 ms. Called with `args`
        (tests, other programs), return or raise as usual."""
        if args is not None:
            return super().main(args, **kwargs)
        collect_rarely()
        try:
            super().main(**kwargs)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (exc.code is not None)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more to say
                pass
        os._exit(code)


def _codes(value: str | None) -> list[str] | None:
    return [c.strip() for c in value.split(",") if c.strip()] if value else None


@click.group(cls=_DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="bertlint", message="%(prog)s %(version)s")
def main() -> None:
    """bertlint: find the mistakes in training scripts before the GPU hour is spent."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "--output-format", "fmt", type=click.Choice(["full", "concise", "json", "lsp", "sarif", "github"]), default="full", show_default=True, help="Output format.")
@click.option("--output-file", "-o", type=click.Path(path_type=Path, dir_okay=False), help="Write the report to this file.")
@click.option("--select", help="Comma-separated codes or prefixes to enable (replaces the configured set).")
@click.option("--extend-select", help="Codes or prefixes to enable on top of the configured set.")
@click.option("--ignore", help="Codes or prefixes to disable.")
@click.option("--preview/--no-preview", default=None, help="Also run the preview rules (those not yet measured precise enough to be on by default).")
@click.option("--per-file-ignores", multiple=True, help="PATTERN:CODES, repeatable.")
@click.option("--exclude", multiple=True, help="Gitignore-style pattern to skip (replaces the default list).")
@click.option("--extend-exclude", multiple=True, help="Gitignore-style pattern to skip, on top of the defaults.")
@click.option("--force-exclude", is_flag=True, default=None, help="Apply the exclusions to paths named on the command line too (what the pre-commit hook uses).")
@click.option("--config", "config_file", type=click.Path(path_type=Path, dir_okay=False), help="Use this pyproject.toml or bertlint.toml.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--gpu-memory", help="GPU memory budget for BL502, e.g. 24 or 24GiB (default 16 GiB).")
@click.option("--imbalance-ratio", type=float, help="Majority:minority ratio from which BL401 fires (default 3.0).")
@click.option("--transformers-version", help="Target transformers version (default: the script's or the project's pin, else the installed one).")
@click.option("--fix", is_flag=True, help="Apply safe fixes.")
@click.option("--unsafe-fixes", is_flag=True, help="Also apply unsafe fixes (with --fix), and show them as fixable.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff and write nothing.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODES` to every line with a finding (to adopt bertlint on existing code).")
@click.option("--show-fixes", is_flag=True, help="Show the fix of each fixable finding.")
@click.option("--statistics", is_flag=True, help="Print one line per code with its count instead of the findings.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when --fix changed something, even if no finding remains.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary line.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="BERTLINT_CACHE_DIR", help="Where the result cache lives (default: .bertlint_cache in the project root).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Processes for large runs (default: the machine's cores).")
@click.option("--verify", "verify_codes", is_flag=False, flag_value="ALL", default=None, metavar="[=CODES]",
              help="Confirm findings by running a probe for each in a child process (needs the `verify` extra: `pip install '.[verify]'` in a bertlint clone); `--verify=BL201,BL104` probes only those.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True, help="Where --verify runs its probes.")
@click.option("--verify-timeout", type=click.FloatRange(min=1), default=120.0, show_default=True, help="Seconds each --verify probe may run.")
@click.option("--show-files", is_flag=True, help="List the files a run would lint, and exit.")
@click.option("--show-settings", is_flag=True, help="Print the settings resolved for the first path (with its target transformers version), and exit.")
@click.option("--stdin-filename", type=click.Path(path_type=Path), help="Read the source from standard input (PATHS `-` or none) and lint it as this file; with --fix the fixed source goes to stdout and the report to stderr.")
def check(paths: tuple[Path, ...], fmt: str, output_file: Path | None, select, extend_select, ignore, preview, per_file_ignores,
          exclude, extend_exclude, force_exclude, config_file, isolated, gpu_memory, imbalance_ratio, transformers_version,
          fix, unsafe_fixes, diff, add_noqa, show_fixes, statistics, exit_zero, exit_non_zero_on_fix, quiet, no_cache, cache_dir, jobs, verify_codes, device, verify_timeout,
          show_files, show_settings, stdin_filename) -> None:
    """Lint PATHS (files or directories; default: the current directory; `-`: standard input)."""
    from bertlint import runner
    from bertlint.config import ConfigError
    from bertlint.discovery import DiscoveryError
    from bertlint.report import format_findings, statistics as stats_table, summary_line

    if verify_codes is not None:
        verify_codes, paths = _verify_selection(verify_codes, paths)
        from bertlint.verify import missing_requirements

        if (why := missing_requirements()) is not None:
            click.echo(f"bertlint: error: {why}", err=True)
            sys.exit(2)

    stdin = paths == (Path("-"),) or (stdin_filename is not None and not paths)
    if Path("-") in paths and not stdin:
        raise click.UsageError("`-` (standard input) cannot be mixed with other paths")
    if stdin and verify_codes is not None:
        raise click.UsageError("--verify needs the script on disk, not on standard input")
    if add_noqa and (stdin or fix or diff or verify_codes is not None):
        raise click.UsageError("--add-noqa edits files on disk and cannot be combined with -, --fix, --diff or --verify")
    overrides = {
        "select": _codes(select), "extend_select": _codes(extend_select), "ignore": _codes(ignore), "preview": preview,
        "per_file_ignores": _per_file(per_file_ignores), "exclude": list(exclude) or None,
        "extend_exclude": list(extend_exclude) or None, "force_exclude": force_exclude, "gpu_memory": gpu_memory,
        "imbalance_ratio": imbalance_ratio, "transformers_version": transformers_version,
    }
    progress = _Progress() if fmt in ("full", "concise") and sys.stderr.isatty() and not stdin else None
    given = {k: v for k, v in overrides.items() if v is not None}
    modes = {
        "fix": None if diff else ("unsafe" if (fix and unsafe_fixes) else ("safe" if fix else None)),  # --diff writes nothing
        "diff": "unsafe" if (diff and unsafe_fixes) else ("safe" if diff else None),
    }
    fixed_source = None
    try:
        targets = [stdin_filename or Path("-")] if stdin else list(paths) or [Path(".")]
        if show_files or show_settings:
            _show(runner.settings_for(targets, given, config_file, isolated), targets, show_settings)
        for selector in runner.settings_for(targets, given, config_file, isolated).preview_ignored:
            click.echo(f"bertlint: warning: selection {selector} has no effect because preview is not enabled "
                       "(pass --preview, or set preview = true in the config)", err=True)
        if add_noqa:
            outcome = runner.add_noqa(list(paths) or [Path(".")], overrides=given, config_file=config_file, isolated=isolated)
        elif stdin:
            outcome, fixed_source = runner.run_stdin(sys.stdin.buffer.read(), stdin_filename or Path("-"), overrides=given,
                                                     config_file=config_file, isolated=isolated, **modes)
        else:
            outcome = runner.run(list(paths) or [Path(".")], overrides=given, config_file=config_file, isolated=isolated,
                                 use_cache=not no_cache, cache_dir=cache_dir, jobs=jobs, progress=progress, **modes)
    except (ConfigError, DiscoveryError) as exc:
        click.echo(f"bertlint: error: {exc}", err=True)
        sys.exit(2)
    finally:
        if progress is not None:
            progress.close()
    for warning in outcome.warnings:
        click.echo(f"bertlint: warning: {warning}", err=True)
    for problem in outcome.problems:
        click.echo(f"bertlint: error: {problem}", err=True)
    for error in outcome.internal_errors:
        click.echo(f"bertlint: {error}", err=True)
    for notice in outcome.notices:  # ruff's "Failed to lint": a warning; the exit code is the findings'
        click.echo(f"bertlint: warning: {notice}", err=True)
    findings = outcome.findings
    if not unsafe_fixes:
        for finding in findings:
            if finding.fix is not None and finding.fix.applicability == "unsafe":
                finding.extra["hidden_fix"] = finding.fix
                finding.fix = None
    if verify_codes is not None and not (diff or statistics):  # neither shows a finding's verdict
        from bertlint.verify import verify

        settings = runner.settings_for(list(paths) or [Path(".")], given, config_file, isolated)
        verify(findings, settings, codes=verify_codes or None, device=device, timeout=verify_timeout)
    to_file = output_file is not None
    to_stderr = modes["fix"] is not None and stdin  # stdout carries the fixed source
    if to_stderr:
        sys.stdout.buffer.write(fixed_source)
    color = fmt == "full" and not to_file and (sys.stderr if to_stderr else sys.stdout).isatty()
    if diff:
        text = outcome.diff_text
    elif statistics:
        text = stats_table(findings)
    else:
        text = format_findings(findings, fmt, color=color, show_fixes=show_fixes, notices=outcome.notices)
    if fmt in ("full", "concise") and not quiet and not diff:
        summary = summary_line(findings, fixed=0 if add_noqa else outcome.fixed, not_linted=len({n.path for n in outcome.notices}))
        if add_noqa:
            added = f"Added {outcome.fixed} noqa directive{'s' * (outcome.fixed != 1)}."
            summary = f"{added} {summary}" if findings else added
        gap = "\n\n" if fmt == "full" else "\n"
        settings_for = functools.partial(runner.settings_for, list(paths) or [Path(".")], given, config_file, isolated)
        summary += "".join(f"\n{line}" for line in [_target_line(outcome.targets), _library_line(findings, settings_for)] if line)
        text = f"{text.rstrip()}{gap}{summary}\n" if text.strip() else summary + "\n"
    if to_file:
        try:
            if not output_file.parent.is_dir():
                output_file.parent.mkdir(parents=True)
            output_file.write_text(text + ("\n" if text and not text.endswith("\n") else ""), encoding="utf-8")
        except OSError as exc:
            reason = f"{exc.filename} is a file, not a folder" if isinstance(exc, FileExistsError) else exc.strerror or exc
            click.echo(f"bertlint: error: cannot write the report to {output_file}: {reason}", err=True)
            sys.exit(2)
    elif text:
        click.echo(text, nl=not text.endswith("\n"), err=to_stderr)
    if outcome.problems or outcome.internal_errors:
        sys.exit(2)
    if exit_zero or diff:
        sys.exit(1 if diff and outcome.diff_text else 0)
    sys.exit(1 if findings or (exit_non_zero_on_fix and outcome.fixed) else 0)


def _target_line(targets: dict) -> str:
    """`Target: transformers 4.40 (the pin ... in requirements.txt).`, or one entry per release."""
    from bertlint import target, versions

    if not targets:
        return ""

    def said(version, source) -> str:
        return f"{source}: {target.HOW_TO_PIN}" if source == target.LATEST else source

    if len(targets) == 1:
        [(version, source)] = targets
        return f"Target: transformers {versions.show(version)} ({said(version, source)})."
    rows = sorted(targets.items(), key=lambda kv: (-kv[1], kv[0]))
    return "Targets: " + "; ".join(f"transformers {versions.show(v)} for {n} file{'s' * (n != 1)} ({said(v, s)})" for (v, s), n in rows) + "."


def _library_line(findings: list, settings_for) -> str:
    """`Library targets: datasets 4.0 (the pin datasets==4.0.0 in requirements.txt).`: the release of each library
    that a finding of its drift rule (BL612-BL616, libraries.json's `code`) was judged against, when there is one."""
    if not any(f.code.startswith("BL61") for f in findings):
        return ""  # no drift finding: the tables are not even read (a run the cache answers stays quick)
    from bertlint import target, versions

    codes = {versions.data(library)["code"]: library for library in target.AROUND}
    files = {(codes[f.code], f.path) for f in findings if f.code in codes and Path(f.path).is_file()}
    if not files:
        return ""
    settings, texts, counts = settings_for(), {}, {}
    for library, path in sorted(files):
        if path not in texts:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
            texts[path] = target.target_version(settings, Path(path), text)
        pin = (library, *texts[path].of(library))
        counts[pin] = counts.get(pin, 0) + 1
    several = len(counts) > len({library for library, _, _ in counts})
    return "Library targets: " + "; ".join(
        f"{library} {versions.show(version)}" + (f" for {n} file{'s' * (n != 1)}" if several else "") + f" ({source})"
        for (library, version, source), n in sorted(counts.items())) + "."


def _show(settings, targets: list[Path], show_settings: bool) -> None:
    """`--show-settings` (for the first target) or `--show-files`, then exit."""
    if show_settings:
        click.echo(_settings_text(settings, targets[0]), nl=False)
        sys.exit(0)
    from bertlint.discovery import discover

    files, problems, warnings = discover(targets, settings)
    for path in files:
        click.echo(str(path))
    for path, warning in warnings:
        click.echo(f"bertlint: warning: {path}: {warning}", err=True)
    for path, problem in problems:
        click.echo(f"bertlint: error: {path}: {problem}", err=True)
    sys.exit(2 if problems else 0)


def _settings_text(settings, path: Path) -> str:
    """`--show-settings`: what applies to `path`, one TOML `key = value` line each."""
    from bertlint import versions
    from bertlint.target import target_version

    target = target_version(settings, path, path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None)
    version, source = target
    rows = {
        "config-file": str(settings.config_path) if settings.config_path else "(none)",
        "project-root": str(settings.project_root),
        "select": sorted(settings.codes_for(path) if not path.is_dir() else settings.select),
        "preview": settings.preview,
        "per-file-ignores": {pattern: sorted(codes) for pattern, codes in settings.per_file_ignores},
        "exclude": list(settings.exclude), "extend-exclude": list(settings.extend_exclude),
        "respect-gitignore": settings.respect_gitignore, "force-exclude": settings.force_exclude,
        "gpu-memory": f"{settings.gpu_memory_gib:g}GiB", "imbalance-ratio": settings.imbalance_ratio,
        "learning-rate": settings.lr_ranges,
        "transformers-version": f"{versions.show(version)} ({source})",
        # the libraries around it, found the same way (`library-versions` in the configuration first)
        "library-versions": {name: f"{versions.show(v)} ({s})" for name, (v, s) in target.libraries.items()},
    }
    return f"# settings for {path}\n" + "".join(f"{key} = {_toml_value(value)}\n" for key, value in rows.items())


def _toml_value(value) -> str:
    """A TOML value for the plain data of the settings (strings, booleans, numbers, lists, tables)."""
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)


def _verify_selection(value: str, paths: tuple[Path, ...]) -> tuple[list[str], tuple[Path, ...]]:
    """`--verify[=CODES]` -> (codes, [] for all; paths). `--verify train.py` makes click take the path
    as the option's value: it is given back to PATHS."""
    from bertlint.config import expand_selector
    from bertlint.rules import all_codes

    if value == "ALL":
        return [], paths
    try:
        return sorted(set().union(*(expand_selector(c.strip().upper(), all_codes()) for c in value.split(",") if c.strip()))), paths
    except ValueError:
        if value == "-" or Path(value).exists():
            return [], (*paths, Path(value))
        raise click.BadParameter(f"expected rule codes such as BL201,BL104, got {value!r}", param_hint="--verify") from None


class _Progress:
    """A progress bar on stderr that appears only once a run has lasted a while: short runs stay quiet.
    Refreshed by hand, not by rich's thread, so that the process pool forks a single-threaded process."""

    DELAY = 2.0  # seconds: a run shorter than this shows no bar

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.bar = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if done >= total or time.monotonic() - self.start < self.DELAY:
                return
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True, auto_refresh=False)
            self.bar.start()
            self.task = self.bar.add_task("linting", total=total)
        self.bar.update(self.task, completed=done, refresh=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def _per_file(values: tuple[str, ...]) -> dict[str, list[str]] | None:
    if not values:
        return None
    out: dict[str, list[str]] = {}
    for value in values:
        pattern, sep, codes = value.rpartition(":")
        if not sep or not pattern:
            raise click.BadParameter(f"expected PATTERN:CODES, got {value!r}", param_hint="--per-file-ignores")
        out.setdefault(pattern, []).extend(_codes(codes) or [])
    return out


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), envvar="BERTLINT_CACHE_DIR", help="Also remove this cache folder.")
def clean(paths: tuple[Path, ...], cache_dir: Path | None) -> None:
    """Remove the result caches in PATHS (default: the current directory) and below."""
    from bertlint.cache import clean as remove_caches

    for folder in remove_caches([*(paths or [Path(".")]), *([cache_dir] if cache_dir is not None else [])]):
        click.echo(f"Removed {folder}")


@main.command()
@click.argument("code")
def rule(code: str) -> None:
    """Print the reference page of a rule."""
    from bertlint import pages

    text = pages.page(code.upper())
    if text is None:
        click.echo(f"bertlint: error: unknown rule code {code!r}; `bertlint rules` lists them", err=True)
        sys.exit(2)
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(text))
    else:
        click.echo(text)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def list_rules(fmt: str) -> None:
    """List every rule: code, name, severity, fixability, and (json) whether it is a preview rule and its measured precision."""
    import json

    from bertlint.rules import all_codes, describe, measured, preview_reason

    rows = []
    for code in all_codes():
        name, severity, summary, fix = describe(code)
        figures = measured(code)
        rows.append({"code": code, "name": name, "severity": severity, "fix": fix, "summary": summary,
                     "preview": preview_reason(code) is not None,
                     "precision": {k: figures[k] for k in ("judged", "right", "precision")}})
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        marker = {"safe": "[*]", "unsafe": "[~]"}.get(row["fix"], "   ")
        click.echo(f"{row['code']}  {marker} {row['severity']:<7}  {row['name']:<42} {row['summary']}")


@main.command()
def server() -> None:
    """Run the language server on stdio (needs the `lsp` extra: `pip install '.[lsp]'` in a bertlint clone)."""
    try:
        from bertlint import lsp
    except ImportError as exc:
        package = (exc.name or "").split(".")[0]
        if package not in ("pygls", "lsprotocol"):
            raise
        click.echo(f"bertlint: error: the language server needs {package}: pip install '.[lsp]' in a clone of bertlint (not on PyPI yet)", err=True)
        sys.exit(2)
    lsp.serve()
