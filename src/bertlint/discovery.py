"""File discovery: which files a run lints.

Explicit paths are linted even where the exclusions name them, unless ``force-exclude`` is set (as
ruff does: pre-commit names every staged file); directories are walked, skipping ``exclude``/
``extend-exclude`` matches and, when asked, what ``.gitignore`` files ignore.
Unreadable things become *problems* rather than exceptions: one bad directory must not stop a run.
Broken symbolic links and link loops met while walking are *warnings*: they lead to no file, so
nothing is left unlinted (named on the command line, a broken link is an error like any missing path).
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertlint.config import Glob, Settings, relative_posix

__all__ = ["SOURCE_SUFFIXES", "DiscoveryError", "discover"]

SOURCE_SUFFIXES: tuple[str, ...] = (".py", ".ipynb")

# (absolute posix directory ending in "/", pathspec.GitIgnoreSpec), shallowest first
_Ignores = tuple[tuple[str, Any], ...]


class DiscoveryError(Exception):
    """A path given on the command line does not exist."""


def discover(paths: Sequence[Path], settings: Settings) -> tuple[list[Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
    """Files to lint (sorted, each real file once), (path, message) problems for what could not be read,
    and (path, message) warnings for the broken links and link loops skipped in walked folders."""
    for p in paths:
        if not os.path.exists(p):
            raise DiscoveryError(f"{p}: No such file or directory")
    walker = _Walker(settings)
    for p in paths:
        walker.add_root(Path(p))
    walker.walk_deferred()
    return walker.result()


class _Walker:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = os.path.abspath(settings.project_root)
        self.found: dict[str, tuple[bool, str, Path]] = {}  # realpath -> (via symlink, sort key, path)
        self.problems: dict[Path, str] = {}
        self.warnings: dict[Path, str] = {}
        self.visited: set[str] = set()  # real directories already walked
        self.deferred: list[tuple[Path, _Ignores]] = []  # symlinked directories, walked last
        self.gitignore_cache: dict[str, Any] = {}

    @functools.cached_property
    def excludes(self) -> list[Glob]:
        """Compiled when a folder is walked or a named file is checked: one file named alone needs none."""
        return [Glob(p) for p in (*self.settings.exclude, *self.settings.extend_exclude)]

    def result(self) -> tuple[list[Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
        files = sorted(path for _, _, path in self.found.values())
        return files, sorted(self.problems.items()), sorted(self.warnings.items())

    def add_root(self, path: Path) -> None:
        if self.settings.force_exclude and self._named_excluded(path):
            return
        if os.path.isdir(path):
            self._walk(path, self._parent_ignores(path), via_symlink=False)
        elif os.path.isfile(path):
            self._add_file(path, via_symlink=False)
        else:
            self.problems[path] = "not a regular file or directory"

    def walk_deferred(self) -> None:
        """Symlinked directories go last, so a file is reported under its physical path and a
        target already walked (or an ancestor: a loop) is not walked again."""
        while self.deferred:
            link, ignores = self.deferred.pop(0)
            self._walk(link, ignores, via_symlink=True)

    def _add_file(self, path: Path, via_symlink: bool, real: str | None = None) -> None:
        real = real or os.path.realpath(path)
        entry = (via_symlink, str(path), path)
        if real not in self.found or entry[:2] < self.found[real][:2]:
            self.found[real] = entry

    def _walk(self, directory: Path, ignores: _Ignores, via_symlink: bool) -> None:
        """Walk a root or a symlinked directory: resolve it once, then scan with plain strings."""
        real = os.path.realpath(directory)
        if real in self.visited:
            parent_real = os.path.realpath(directory.parent)
            if via_symlink and (parent_real == real or parent_real.startswith(real.rstrip(os.sep) + os.sep)):
                self.warnings[directory] = "symbolic link loop (points to an ancestor directory); not followed"
            return
        abs_posix = Path(os.path.abspath(directory)).as_posix()
        rel = relative_posix(directory, self.root)
        self._scan(str(directory), real, abs_posix, "" if rel == "." else rel, ignores, via_symlink)

    def _scan(self, path: str, real: str, abs_posix: str, rel: str, ignores: _Ignores, via_symlink: bool) -> None:
        # Strings, not Path objects, and no realpath per entry: this loop runs for every file.
        if real in self.visited:
            return
        self.visited.add(real)
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            self.problems[Path(path)] = _reason(exc)
            return
        if self.settings.respect_gitignore and any(e.name == ".gitignore" for e in entries):
            spec = self._gitignore(path)
            if spec is not None:
                ignores = (*ignores, (abs_posix.rstrip("/") + "/", spec))
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError as exc:  # e.g. a link to itself (ELOOP)
                self._unreadable_link(Path(entry.path), exc)
                continue
            if not is_dir and not name.endswith(SOURCE_SUFFIXES):
                continue
            child_abs = f"{abs_posix.rstrip('/')}/{name}"
            child_rel = f"{rel.rstrip('/')}/{name}" if rel else name
            if not (is_dir or is_file):
                if entry.is_symlink():
                    try:
                        os.stat(entry.path)
                    except OSError as exc:
                        self._unreadable_link(Path(entry.path), exc)
            elif self._excluded(child_rel, child_abs, is_dir, ignores):
                continue
            elif is_dir and entry.is_symlink():
                self.deferred.append((Path(entry.path), ignores))
            elif is_dir:
                self._scan(entry.path, os.path.join(real, name), child_abs, child_rel, ignores, via_symlink)
            else:
                link_real = os.path.realpath(entry.path) if entry.is_symlink() else os.path.join(real, name)
                self._add_file(Path(entry.path), via_symlink, link_real)

    def _unreadable_link(self, path: Path, exc: OSError) -> None:
        """A link that leads nowhere (or round in a loop) is a warning; one that cannot be followed
        for another reason (a folder on its way that cannot be read) is a problem."""
        if exc.errno in (errno.ENOENT, errno.ELOOP):
            self.warnings[path] = "broken symbolic link; skipped" if exc.errno == errno.ENOENT else "symbolic link loop; skipped"
        else:
            self.problems[path] = _reason(exc)

    def _named_excluded(self, path: Path) -> bool:
        """Whether an exclusion matches a path given on the command line, or a folder above it inside the project."""
        absolute = Path(os.path.abspath(path))
        for current in (absolute, *absolute.parents):
            rel = relative_posix(current, self.root)
            if rel == "." or rel.startswith("/"):  # the project root, or outside it
                return False
            if any(g.match(rel, is_dir=current != absolute or os.path.isdir(current), abs_path=current.as_posix()) for g in self.excludes):
                return True
        return False

    def _excluded(self, rel: str, abs_posix: str, is_dir: bool, ignores: _Ignores) -> bool:
        if any(g.match(rel, is_dir=is_dir, abs_path=abs_posix) for g in self.excludes):
            return True
        return _gitignored(abs_posix, is_dir, ignores)

    def _gitignore(self, directory: str) -> Any:
        key = os.path.abspath(directory)
        if key not in self.gitignore_cache:
            spec = None
            path = os.path.join(directory, ".gitignore")
            try:
                with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                    lines = fh.read().splitlines()
            except FileNotFoundError:
                lines = None
            except OSError as exc:
                self.problems[Path(path)] = _reason(exc)
                lines = None
            if lines is not None:
                import pathspec  # only paid for when a .gitignore exists

                spec = pathspec.GitIgnoreSpec.from_lines(lines)
            self.gitignore_cache[key] = spec
        return self.gitignore_cache[key]

    def _parent_ignores(self, directory: Path) -> _Ignores:
        """.gitignore files above a walked root count too: up to the git root, or else up to
        the project root when the directory is inside it."""
        if not self.settings.respect_gitignore:
            return ()
        start = Path(os.path.abspath(directory))
        top = next((d for d in start.parents if os.path.exists(d / ".git")), None)
        if top is None and start != Path(self.root) and Path(self.root) in start.parents:
            top = Path(self.root)
        if top is None or os.path.exists(start / ".git"):
            return ()
        chain = [d for d in start.parents if d == top or top in d.parents]
        ignores: list[tuple[str, Any]] = []
        for d in reversed(chain):  # shallowest first
            spec = self._gitignore(str(d))
            if spec is not None:
                ignores.append((d.as_posix().rstrip("/") + "/", spec))
        # A directory named explicitly is linted even when it lies in an ignored tree
        # (as explicit files are); its own .gitignore files still apply.
        if _gitignored(start.as_posix(), True, tuple(ignores)):
            return ()
        return tuple(ignores)


def _gitignored(abs_posix: str, is_dir: bool, ignores: _Ignores) -> bool:
    for prefix, spec in reversed(ignores):  # the deepest .gitignore with a matching rule decides
        if abs_posix.startswith(prefix):
            verdict = spec.check_file(abs_posix[len(prefix):] + ("/" if is_dir else "")).include
            if verdict is not None:
                return verdict
    return False


def _reason(exc: OSError) -> str:
    return "symbolic link loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
