"""Which transformers version a script targets, and what that version accepts.

The target comes from the config, then a notebook's own install cell (`!pip install transformers==4.30.0`:
notebook.py reads it), then the script's own pin (its PEP 723 `# /// script` block), then
the project's pin, then what is installed (package metadata: never an import), else the newest
release bertlint knows. What each release accepts is data
(`data/versions.json`), read once; the BL6xx rules are generic readers of it.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import libcst as cst

    from bertlint.config import Settings
    from bertlint.facts import Facts
    from bertlint.rules import Context

Version = tuple[int, ...]

_REQUIREMENT = re.compile(r"^\s*transformers\s*(?:\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)", re.IGNORECASE)
# PEP 723's reference expression for an inline metadata block.
_INLINE_BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_SPECIFIER = re.compile(r"^\s*(?P<op>===|==|~=|!=|<=|>=|<|>)\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?\s*$")


def parse_version(text: str) -> Version:
    parts = tuple(int(p) for p in re.findall(r"\d+", text)[:3])
    return parts + (0,) * (3 - len(parts))


def show(version: Version) -> str:
    """`(4, 41, 0)` -> `4.41`: the form release notes use."""
    parts = list(version)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))


@functools.cache
def data() -> dict[str, Any]:
    from importlib.resources import files  # 8 ms to import: not paid by a run the cache answers

    return json.loads((files("bertlint") / "data" / "versions.json").read_text(encoding="utf-8"))


def latest() -> Version:
    return parse_version(data()["latest"])


# --------------------------------------------------------------------------- the target version


def target_version(settings: "Settings", path: Path, text: str | None = None) -> tuple[Version, str]:
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


def _inline_pin(text: str) -> tuple[Version, str] | None:
    """A transformers pin in the `dependencies` of the script's PEP 723 `# /// script` block."""
    for block in _INLINE_BLOCK.finditer(text):
        if block.group("type") != "script":
            continue
        toml = "".join(line[2:] if line.startswith("# ") else line[1:]
                       for line in block.group("content").splitlines(keepends=True))
        dependencies = _toml(toml).get("dependencies", [])
        lines = [item for item in dependencies if isinstance(item, str)] if isinstance(dependencies, list) else []
        return first_pin(lines, "the script's `# /// script` block")
    return None


def first_pin(lines: list[str], where: str) -> tuple[Version, str] | None:
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


def _pinned_near(directory: Path, root: Path) -> tuple[Version, str] | None:
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
def _pin_in(path: Path, mtime_ns: int, size: int) -> tuple[Version, str] | None:
    """The first transformers pin in one file; keyed on its state, so a long-lived server sees edits."""
    return first_pin(_requirement_lines(path), _display(path))


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


def resolve_specifier(spec: str) -> Version | None:
    """The newest known release a specifier allows (`>=4.40,<4.41` -> 4.40), or None when it sets no ceiling."""
    clauses = [_SPECIFIER.match(part) for part in spec.split(",")]
    if not clauses or not all(clauses):
        return None
    ops = {c.group("op") for c in clauses}
    if not ops & {"==", "===", "~=", "<=", "<"}:
        return None  # `>=4.40` alone: whatever is newest, i.e. not a pin
    pinned = [parse_version(c.group("version")) for c in clauses]
    candidates = set(pinned) | {(int(major), minor, 0) for major, newest in data()["releases"].items() for minor in range(newest + 1)}
    allowed = [v for v in candidates if all(_allows(c, v) for c in clauses)]
    return max(allowed) if allowed else None


def _allows(clause: re.Match, version: Version) -> bool:
    op, text = clause.group("op"), clause.group("version")
    bound = parse_version(text)
    if clause.group("star"):  # `==4.40.*`
        prefix = tuple(int(p) for p in text.split("."))
        same = version[: len(prefix)] == prefix
        return same if op == "==" else not same
    if op == "~=":  # `~=4.40` -> >=4.40,==4.*; `~=4.40.1` -> >=4.40.1,==4.40.*
        length = max(len(text.split(".")) - 1, 1)
        return version >= bound and version[:length] == bound[:length]
    return {
        "==": version == bound, "===": version == bound, "!=": version != bound,
        "<=": version <= bound, ">=": version >= bound, "<": version < bound, ">": version > bound,
    }[op]


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


# --------------------------------------------------------------------------- what a release accepts


@dataclass(frozen=True)
class Lifecycle:
    """One argument or symbol: when it arrived, was deprecated, was removed, and what replaces it."""

    name: str  # a keyword, a symbol, or a glob over symbol names ("TF*")
    added: Version | None
    deprecated: Version | None
    removed: Version | None
    replacement: str | None
    rename: bool  # the replacement takes the same value: renaming is a safe fix
    note: str
    source: str
    extra: dict[str, Any]

    def status(self, version: Version) -> str | None:
        """"removed", "deprecated", or None where the name is current (or not yet there) in `version`."""
        if self.added is not None and version < self.added:
            return None
        if self.removed is not None and version >= self.removed:
            return "removed"
        if self.deprecated is not None and version >= self.deprecated:
            return "deprecated"
        return None

    def exists(self, version: Version) -> bool:
        return (self.added is None or version >= self.added) and (self.removed is None or version < self.removed)


def _lifecycle(row: dict[str, Any]) -> Lifecycle:
    known = {"name", "added", "deprecated", "removed", "replacement", "rename", "note", "source"}
    return Lifecycle(
        row["name"], *(parse_version(row[k]) if row.get(k) else None for k in ("added", "deprecated", "removed")),
        row.get("replacement"), bool(row.get("rename")), row.get("note", ""), row["source"],
        {k: v for k, v in row.items() if k not in known},
    )


@functools.cache
def keywords(group: str) -> tuple[dict[str, Lifecycle], str]:
    """(keyword -> lifecycle, error template) for a callable's keywords ("TrainingArguments", "Trainer")."""
    table = data()["keywords"][group]
    return {name: _lifecycle({"name": name, **row}) for name, row in table["arguments"].items()}, table["error"]


def replacement_at(table: dict[str, Lifecycle], entry: Lifecycle, version: Version) -> str | None:
    """The replacement to use in `version`, following chains (`evaluate_during_training` -> `evaluation_strategy`
    -> `eval_strategy`), or None when nothing replaces it there."""
    name, seen = entry.replacement, {entry.name}
    while name in table and name not in seen and table[name].status(version) and table[name].replacement:
        seen.add(name)
        name = table[name].replacement
    if name is None or (name in table and not table[name].exists(version)):
        return None
    return name


@functools.cache
def symbols(group: str) -> tuple[tuple[Lifecycle, ...], dict[str, str]]:
    """(symbols in match order, error templates) of a group of transformers symbols ("optimizer", "tensorflow")."""
    table = data()["symbols"][group]
    return tuple(_lifecycle(row) for row in table["names"]), {k: v for k, v in table.items() if k.endswith("_error")}


def lifecycle_text(entry: Lifecycle, status: str, ctx: "Context") -> str:
    """`was removed in 4.51 (target ...)` / `is deprecated since 4.32 and removed in 5.0 (target ...)`."""
    target = f"target {show(ctx.version)} from {ctx.version_source}"
    if status == "removed":
        return f"was removed in {show(entry.removed)} ({target})"
    until = f" and removed in {show(entry.removed)}" if entry.removed else ""
    return f"is deprecated since {show(entry.deprecated)}{until} ({target})"


# --------------------------------------------------------------------------- where a symbol is used


@dataclass
class SymbolUse:
    """Where a file reaches a transformers symbol: an import alias, or `module.Symbol` attribute uses."""

    entry: Lifecycle
    name: str  # the symbol's own name ("AdamW")
    module: str  # "transformers", "transformers.optimization"
    node: cst.CSTNode  # where the finding sits: the import alias, else the first attribute use
    statement: cst.CSTNode | None  # the import statement line; None for attribute uses
    attributes: list[cst.Attribute]  # every `module.Symbol` use in the file

    def error(self, templates: dict[str, str]) -> str:
        """What the line raises once the symbol is gone: an import error, or an attribute error for `module.Symbol`."""
        if self.statement is None:
            key = "attribute_error"
        else:
            gone = self.module != "transformers" and _framework_module(self.module)
            key = "submodule_error" if gone and "submodule_error" in templates else "import_error"
        return templates[key].format(name=self.name, module=self.module)


def _framework_module(module: str) -> bool:
    """Whether a transformers submodule is itself TensorFlow/Flax/Keras code (`modeling_tf_utils`,
    `optimization_tf`, `keras_callbacks`, `models.bert.modeling_flax_bert`), gone with that framework; a
    module that stays (`transformers.utils`, `transformers.models.bert`) only loses the name."""
    tokens = {t for part in module.split(".")[1:] for t in part.split("_")}
    return bool(tokens & {"tf", "flax", "keras"})


def symbol_uses(facts: "Facts", group: str) -> list[SymbolUse]:
    """One use per symbol name of the group, the import first. A name the file binds again is guarded
    (`try: from transformers import AdamW` / `except ImportError: from torch.optim import AdamW`): skipped."""
    entries, _ = symbols(group)
    bindings: dict[str, set[str]] = {}
    for qualname, alias, _stmt in facts.import_nodes:
        bindings.setdefault(_local_name(alias), set()).add(qualname)
    found: dict[str, SymbolUse] = {}
    for qualname, alias, stmt in facts.import_nodes:
        entry = _match(entries, qualname)
        local = _local_name(alias)
        if entry is not None and len(bindings[local]) == 1 and len(facts.module_scope.events.get(local, ())) <= 1:
            module, name = qualname.rsplit(".", 1)
            found.setdefault(name, SymbolUse(entry, name, module, alias, stmt, []))
    for attribute, scope, _order in facts.attr_loads:
        qualname = facts.qualname(attribute, scope)
        entry = _match(entries, qualname) if qualname and qualname.rsplit(".", 1)[0] in facts.imports.values() else None
        if entry is not None:
            module, name = qualname.rsplit(".", 1)
            found.setdefault(name, SymbolUse(entry, name, module, attribute, None, [])).attributes.append(attribute)
    return list(found.values())


def _local_name(alias: cst.ImportAlias) -> str:
    """The name an import binds: `as` name, else the head of `import a.b`."""
    import libcst as cst  # here, not at the top: a run the cache answers never loads libcst

    node = alias.asname.name if alias.asname is not None else alias.name
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else ""


def _match(entries: tuple[Lifecycle, ...], qualname: str | None) -> Lifecycle | None:
    if not qualname or not qualname.startswith("transformers."):
        return None
    name = qualname.rsplit(".", 1)[-1]
    return next((e for e in entries if fnmatch.fnmatchcase(name, e.name)), None)
