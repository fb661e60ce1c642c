"""Which transformers version a script targets: config, then the project's pin, then what is installed.

Never imports transformers: the installed version comes from package metadata.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bertlint.config import Settings

LATEST = (5, 23, 0)  # the newest release the rules' version facts were checked against
_PIN = re.compile(r"^\s*transformers\s*(?:\[[^\]]*\])?\s*(?P<op>==|~=|===|<=)\s*(?P<version>\d+(?:\.\d+){0,2})", re.IGNORECASE | re.MULTILINE)


def parse_version(text: str) -> tuple[int, ...]:
    parts = tuple(int(p) for p in re.findall(r"\d+", text)[:3])
    return parts + (0,) * (3 - len(parts))


def target_version(settings: "Settings", path: Path) -> tuple[tuple[int, ...], str]:
    """(version, where it came from) for the file at `path`."""
    if settings.transformers_version:
        return parse_version(settings.transformers_version), f"transformers-version in {settings.config_path or 'the settings'}"
    pinned = _pinned_near(path.resolve().parent, settings.project_root.resolve())
    if pinned is not None:
        return pinned
    installed = _installed()
    if installed is not None:
        return installed, "the installed transformers package"
    return LATEST, "the latest release known to bertlint"


@functools.lru_cache(maxsize=256)
def _pinned_near(directory: Path, root: Path) -> tuple[tuple[int, ...], str] | None:
    """A pin in requirements*.txt or pyproject dependencies, from the script's folder up to the project root."""
    current = directory
    while True:
        try:
            candidates = sorted(current.glob("requirements*.txt")) + [current / "pyproject.toml"]
        except OSError:
            candidates = []
        for candidate in candidates:
            try:
                text = candidate.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if candidate.name == "pyproject.toml":
                text = "\n".join(s.strip().strip("\"',") for s in text.splitlines())
            match = _PIN.search(text)
            if match:
                return parse_version(match.group("version")), f"the pin in {candidate}"
        if current == root or current.parent == current or root not in current.parents:
            return None
        current = current.parent


@functools.cache
def _installed() -> tuple[int, ...] | None:
    from importlib import metadata

    try:
        return parse_version(metadata.version("transformers"))
    except metadata.PackageNotFoundError:
        return None
