"""Which transformers release a file targets: a stage of its own, run once per file before the cache
and the lint, which both receive its answer.

In this order (the README has the table):
1. `transformers-version` in the configuration (or `--config`);
2. a notebook's own install cells (`!pip install transformers==4.30.0`, `%pip`, the automagic one-line
   `pip install ...`, `%%bash` bodies: what `ipython.commands` finds), or the script's own pin (its
   PEP 723 `# /// script` block);
3. the project's pin, from the file's folder up to the project root: requirements*.txt, pyproject.toml,
   setup.cfg, environment.yml, Pipfile;
4. the transformers installed where the project runs: its own virtual environment (`.venv`, `venv` or
   `env` at the project root), else the environment bertlint runs in, else an activated virtual
   environment on PATH (package metadata: never an import). The last is what a pre-commit hook, whose
   own environment has no transformers, shares with the terminal it was started from;
5. else the newest release bertlint knows, said as such (with how to pin).
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertlint.ipython import commands, install_requirements
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
    if path.suffix == ".ipynb":
        pinned = _notebook_pin(text) if text and "install" in text else None
    else:
        pinned = _inline_pin(text) if text and "# /// script" in text else None
    if pinned is not None:
        return pinned
    pinned = _pinned_near(path.resolve().parent, settings.project_root.resolve())
    if pinned is not None:
        return pinned
    return _installed_for(settings.project_root.resolve()) or (latest(), LATEST)


LATEST = "the latest release known to bertlint"
HOW_TO_PIN = "pin it with `transformers-version` in [tool.bertlint] or transformers==X.Y in requirements.txt"


def _installed_for(root: Path) -> Target | None:
    """The transformers installed where the project at `root` runs, and which environment that is."""
    for name in (".venv", "venv", "env"):
        if (root / name / "pyvenv.cfg").is_file():
            found = _installed_in(tuple(_site_packages(root / name)))
            if found is not None:
                return found, f"the transformers installed in the project's environment {name}/"
    found = _installed_in(tuple(sys.path))
    if found is not None:
        return found, "the installed transformers package"
    own = Path(sys.prefix).resolve()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        env = Path(folder).parent
        if folder and (env / "pyvenv.cfg").is_file() and env.resolve() != own:
            found = _installed_in(tuple(_site_packages(env)))
            if found is not None:
                return found, f"the transformers installed in the active environment {env}"
    return None


def _site_packages(env: Path) -> list[str]:
    return [str(p) for p in (*env.glob("lib/python3*/site-packages"), env / "Lib" / "site-packages")]


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


def _notebook_pin(text: str) -> Target | None:
    """The first transformers pin that an install command of a notebook's code cells sets, named by its
    cell (1-based among all cells, as findings count them). Automagic is taken as on for a one-line
    `pip install` cell: that no earlier cell binds the name `pip` is the lint's to check (its BL901)."""
    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError):
        return None
    for number, cell in enumerate(cells if isinstance(cells, list) else (), 1):
        source = cell.get("source") if isinstance(cell, dict) and cell.get("cell_type") == "code" else None
        source = "".join(source) if isinstance(source, list) and all(isinstance(s, str) for s in source) else source
        for command in commands(source) if isinstance(source, str) and "install" in source else ():
            pinned = _first_pin(install_requirements(command), f"cell {number} (`{' '.join(command.split())[:60]}`)")
            if pinned is not None:
                return pinned
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
    return tuple(found) + tuple(directory / name for name in _OTHER_FILES if (directory / name).is_file())


_OTHER_FILES = ("pyproject.toml", "setup.cfg", "environment.yml", "environment.yaml", "Pipfile")
_CONDA_ITEM = re.compile(r"^\s*-\s*(?P<name>transformers)\s*(?P<spec>(?<![<>!~=])=(?!=)\s*[\d.*]+|[<>=!~].*)?\s*$", re.IGNORECASE)


def _pinned_near(directory: Path, root: Path) -> Target | None:
    """A pin in the project's requirement files, from the script's folder up to the project root."""
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
    """A file's transformers requirements as `transformers<spec>` lines (requirements.txt's own form)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if path.name == "pyproject.toml":
        return _pyproject_dependencies(text)
    if path.name == "Pipfile":
        return _pipfile_dependencies(text)
    if path.name.startswith("environment."):
        return [_conda_requirement(m) for m in map(_CONDA_ITEM.match, text.splitlines()) if m and m.group("spec")]
    return text.splitlines()  # requirements*.txt; setup.cfg's install_requires lines read the same


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


def _conda_requirement(item: re.Match) -> str:
    """`- transformers=4.30` (conda: 4.30.*) or `- transformers==4.30.0` (its pip list) as a requirement."""
    spec = item.group("spec").replace(" ", "")
    if spec.startswith("=") and not spec.startswith("=="):
        spec = "==" + spec[1:] + (".*" if spec.count(".") < 2 and not spec.endswith("*") else "")
    return f"transformers{spec}"


def _pipfile_dependencies(text: str) -> list[str]:
    """`transformers = "==4.30.0"` or `{version = "<4.31"}` in a Pipfile's packages; `"*"` pins nothing."""
    if "transformers" not in text:
        return []
    doc = _toml(text)
    out = []
    for group in ("packages", "dev-packages"):
        value = doc.get(group, {}).get("transformers") if isinstance(doc.get(group), dict) else None
        spec = value.get("version") if isinstance(value, dict) else value
        if isinstance(spec, str) and spec.strip() != "*":
            out.append(f"transformers{spec.strip()}")
    return out


def _pyproject_dependencies(text: str) -> list[str]:
    if "transformers" not in text:
        return []
    doc = _toml(text)
    project = doc.get("project", {})
    groups = [project.get("dependencies", [])]
    groups += list(project.get("optional-dependencies", {}).values()) + list(doc.get("dependency-groups", {}).values())
    return [item for group in groups if isinstance(group, list) for item in group if isinstance(item, str)]


@functools.cache
def _installed_in(paths: tuple[str, ...]) -> Version | None:
    """From the first `transformers-X.Y.Z.dist-info` folder on `paths`, as importlib.metadata finds it
    on sys.path, without the ~30 ms that importing importlib.metadata costs every run."""
    for entry in paths:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith("transformers-") and name.endswith(".dist-info"):
                return parse_version(name.removeprefix("transformers-"))
    return None
