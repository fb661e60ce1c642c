"""Which transformers release a file targets: a stage of its own, run once per file before the cache
and the lint, which both receive its answer.

The target comes from the config, then the script's own pin (its PEP 723 `# /// script` block), then
the project's pin (requirements*.txt, pyproject dependencies, from the file's folder up to the project
root), then what is installed (package metadata: never an import), else the newest release bertlint knows.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertlint.versions import Version, latest, parse_version, resolve_specifier

if TYPE_CHECKING:
    from bertlint.config import Settings

Target = tuple[Version, str]  # (the release, where that came from: said in drift messages)

_REQUIREMENT = re.compile(r"^\s*transformers\s*(?:\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)", re.IGNORECASE)
# PEP 723's reference expression for an inline metadata block.
_INLINE_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


def target_version(settings: "Settings", path: Path, text: str | None = None) -> Target:
    """(version, where it came from) for the file at `path`; `text`, its source, may pin it inline."""
    if settings.transformers_version:
        return parse_version(settings.transformers_version), settings.transformers_version_from
    pinned = _inline_pin(text) if text and "# /// script" in text else None
    if pinned is not None:
        return pinned
    pinned = _pinned_near(path.resolve().parent, settings.project_root.resolve())
    if pinned is not None:
        return pinned
    installed = _installed()
    if installed is not None:
        return installed, "the installed transformers package"
    return latest(), "the latest release known to bertlint"


def _inline_pin(text: str) -> Target | None:
    """A transformers pin in the `dependencies` of the script's PEP 723 `# /// script` block."""
    for block in _INLINE_BLOCK.finditer(text):
        if block.group("type") != "script":
            continue
        toml = "".join(line[2:] if line.startswith("# ") else line[1:]
                       for line in block.group("content").splitlines(keepends=True))
        dependencies = _toml(toml).get("dependencies", [])
        lines = [item for item in dependencies if isinstance(item, str)] if isinstance(dependencies, list) else []
        return _first_pin(lines, "the script's `# /// script` block")
    return None


def _first_pin(lines: list[str], where: str) -> Target | None:
    """The first `transformers<spec>` requirement among `lines` that sets a ceiling, and what to call it."""
    for requirement in filter(None, map(_REQUIREMENT.match, lines)):
        version = resolve_specifier(requirement.group("spec"))
        if version is not None:
            spec = re.sub(r"\s+", "", requirement.group("spec"))
            return version, f"the pin transformers{spec} in {where}"
    return None


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith(os.pardir) else rel


@functools.lru_cache(maxsize=1024)
def _candidates(directory: Path, listing: int | None) -> tuple[Path, ...]:
    """The requirement files of a folder, requirements.txt first; keyed on the folder's mtime (`listing`)."""
    try:
        found = sorted(directory.glob("requirements*.txt"), key=lambda p: (p.name != "requirements.txt", p.name))
    except OSError:
        return ()
    pyproject = directory / "pyproject.toml"
    return tuple(found) + ((pyproject,) if pyproject.is_file() else ())


def _pinned_near(directory: Path, root: Path) -> Target | None:
    """A pin in requirements*.txt or pyproject dependencies, from the script's folder up to the project root."""
    current = directory
    while True:
        try:
            listing = current.stat().st_mtime_ns
        except OSError:
            listing = None
        for candidate in _candidates(current, listing):
            try:
                state = candidate.stat()
            except OSError:
                continue
            pinned = _pin_in(candidate, state.st_mtime_ns, state.st_size)
            if pinned is not None:
                return pinned
        if current == root or current.parent == current or root not in current.parents:
            return None
        current = current.parent


@functools.lru_cache(maxsize=256)
def _pin_in(path: Path, mtime_ns: int, size: int) -> Target | None:
    """The first transformers pin in one file; keyed on its state, so a long-lived server sees edits."""
    return _first_pin(_requirement_lines(path), _display(path))


def _requirement_lines(path: Path) -> list[str]:
    """The requirement lines of a requirements file, or a pyproject's dependency lists."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return _pyproject_dependencies(text) if path.name == "pyproject.toml" else text.splitlines()


def _toml(text: str) -> dict[str, Any]:
    """A TOML document, or {} when it does not parse (a broken pin is no pin)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _pyproject_dependencies(text: str) -> list[str]:
    if "transformers" not in text:
        return []
    doc = _toml(text)
    project = doc.get("project", {})
    groups = [project.get("dependencies", [])]
    groups += list(project.get("optional-dependencies", {}).values()) + list(doc.get("dependency-groups", {}).values())
    return [item for group in groups if isinstance(group, list) for item in group if isinstance(item, str)]


@functools.cache
def _installed() -> Version | None:
    """From the first `transformers-X.Y.Z.dist-info` folder on sys.path, as importlib.metadata
    finds it, without the ~30 ms that importing importlib.metadata costs every run."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("transformers-") and name.endswith(".dist-info"):
                return parse_version(name.removeprefix("transformers-"))
    return None
