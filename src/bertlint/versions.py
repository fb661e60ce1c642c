"""What each transformers release accepts: versions, and the lifecycle of its arguments and symbols.

Pure knowledge (`data/versions.json`, read once; the libraries around transformers in the same format in
`data/libraries.json`, one group per library): which release a specifier allows, when a keyword or a
symbol arrived, was deprecated or removed, and what replaces it. The BL6xx rules are generic readers of
it; which release a file targets is `target`'s business.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

Version = tuple[int, ...]

_SPECIFIER = re.compile(r"^\s*(?P<op>===|==|~=|!=|<=|>=|<|>)\s*(?P<version>\d+(?:\.\d+)*)(?P<star>\.\*)?\s*$")


def parse_version(text: str) -> Version:
    parts = tuple(int(p) for p in re.findall(r"\d+", text)[:3])
    return parts + (0,) * (3 - len(parts))


class Unknown(tuple):
    """A release that cannot be known (transformers installed from a fork's branch, not from a release). It holds the
    newest known release so that nothing breaks on it, and notes every comparison made with it (`compared`): the
    engine drops what a rule reported after comparing it, so a rule whose answer depends on the release stays silent
    and one that only passes it along (to a helper that does not compare it here) keeps its findings."""

    compared = False

    def _noted(self, compare, other):
        self.compared = True
        return compare(self, other)

    def __lt__(self, other):
        return self._noted(tuple.__lt__, other)

    def __le__(self, other):
        return self._noted(tuple.__le__, other)

    def __gt__(self, other):
        return self._noted(tuple.__gt__, other)

    def __ge__(self, other):
        return self._noted(tuple.__ge__, other)

    def __eq__(self, other):
        return self._noted(tuple.__eq__, other)

    def __ne__(self, other):
        return self._noted(tuple.__ne__, other)

    __hash__ = tuple.__hash__


def unknown(library: str = "transformers") -> Unknown:
    return Unknown(latest(library))


def show(version: Version) -> str:
    """`(4, 41, 0)` -> `4.41`: the form release notes use; `unknown` for an `Unknown` release."""
    if isinstance(version, Unknown):
        return "unknown"
    parts = list(version)
    while len(parts) > 2 and parts[-1] == 0:
        parts.pop()
    return ".".join(map(str, parts))


@functools.cache
def data(library: str = "transformers") -> dict[str, Any]:
    """The release knowledge of `library`: versions.json for transformers, its group of libraries.json otherwise, or of
    removed.json for a library whose removed APIs only stop a run (scikit-learn, torchtext: its releases alone)."""
    if library == "transformers":
        return data_file("versions.json")
    groups = data_file("libraries.json")
    return groups[library] if library in groups else data_file("removed.json")["libraries"][library]


@functools.cache
def data_file(name: str) -> dict[str, Any]:
    """A data file of the package, read once (libraries.json serves five libraries, removed.json this module and
    `knowledge`); from beside this module: importlib.resources costs ~5 ms to import, for a package that is always on disk."""
    return json.loads(Path(__file__).with_name("data").joinpath(name).read_text(encoding="utf-8"))


def latest(library: str = "transformers") -> Version:
    return parse_version(data(library)["latest"])


def resolve_specifier(spec: str, library: str = "transformers") -> Version | None:
    """The newest known release a specifier allows (`>=4.40,<4.41` -> 4.40), or None when it sets no ceiling."""
    clauses = [_SPECIFIER.match(part) for part in spec.split(",")]
    if not clauses or not all(clauses):
        return None
    ops = {c.group("op") for c in clauses}
    if not ops & {"==", "===", "~=", "<=", "<"}:
        return None  # `>=4.40` alone: whatever is newest, i.e. not a pin
    pinned = [parse_version(c.group("version")) for c in clauses]
    candidates = set(pinned) | {(int(major), minor, 0) for major, newest in data(library)["releases"].items() for minor in range(newest + 1)}
    tests = [_test(c) for c in clauses]  # each clause read once, not once per candidate
    allowed = [v for v in candidates if all(test(v) for test in tests)]
    return max(allowed) if allowed else None


def satisfies(spec: str, version: Version) -> bool | None:
    """Does `version` satisfy `spec` (`<1.0,>=0.11.0`)? None when the specifier does not parse."""
    clauses = [_SPECIFIER.match(part) for part in spec.split(",")]
    return all(_test(c)(version) for c in clauses) if clauses and all(clauses) else None


@functools.cache
def required_by(release: Version, library: str) -> str | None:
    """The specifier of `library` that the transformers minor release `release` requires (its wheel's unconditional
    `Requires-Dist`, `data/requires.json`), or None when it names none."""
    return data_file("requires.json")["releases"].get(f"{release[0]}.{release[1]}", {}).get(library)


@functools.cache
def newest_admitting(library: str, pins: tuple[tuple[str, Version], ...], ceiling: Version, spec: str = "") -> tuple[Version, dict[str, str]] | None:
    """The newest minor release of `library`, at most `ceiling`, one of whose releases listed in `data/admits.json`
    allows `spec` (what the project's pinned releases require of `library`) and whose own requirements (its wheel's
    `Requires-Dist`) admit every release `pins` names (package -> pinned release: transformers 4.39.3, accelerate
    0.28.0), with those requirements of the pinned packages (package -> specifier; a package it requires without a
    bound or not at all is absent): what a resolver installing the pinned releases takes of a library the project leaves
    unpinned. None where the table cannot tell: the ceiling is newer than its newest minor, or a minor it could not read
    (or whose requirement does not parse) is met before one that admits."""
    minors = data_file("admits.json")["libraries"].get(library, {})
    known = sorted(((parse_version(minor), minor) for minor in minors), reverse=True)
    if not known or ceiling[:2] > known[0][0][:2]:
        return None
    for release, minor in known:
        if release[:2] > ceiling[:2]:
            continue
        listed = sorted(minors[minor].items(), key=lambda item: parse_version(item[0]), reverse=True)
        answers = [_admits(requires, pins) and (satisfies(spec, parse_version(name)) if spec else True) for name, requires in listed]
        if True in answers:  # the newest of its releases that admits them
            requires = listed[answers.index(True)][1]
            return release, {package: requires[package] for package, _ in pins if package in requires}
        if not listed or None in answers:
            return None
    return None


@functools.cache
def bounded_by(library: str) -> frozenset[str]:
    """The packages some release of `library` listed in `data/admits.json` requires with a bound (trl: transformers,
    accelerate, datasets): a pin of any other package admits all its releases."""
    return frozenset(package for releases in data_file("admits.json")["libraries"].get(library, {}).values()
                     for requires in releases.values() for package in requires)


def requirement_of(package: str, release: Version, library: str) -> str | None:
    """What the release `package`==`release` requires of `library` (its wheel's unconditional `Requires-Dist`,
    `data/admits.json`): its specifier, "" when it sets no bound; None when the table does not list that release."""
    for name, requires in data_file("admits.json")["libraries"].get(package, {}).get(f"{release[0]}.{release[1]}", {}).items():
        if parse_version(name) == release:
            return requires.get(library, "")
    return None


def _admits(requires: dict[str, str], pins: tuple[tuple[str, Version], ...]) -> bool | None:
    """Do the requirements `requires` (package -> specifier) admit every pinned release of `pins`? False where one
    excludes it, else None where one does not parse."""
    answers = [satisfies(requires[package], pinned) if package in requires else True for package, pinned in pins]
    return False if False in answers else None if None in answers else True


def _test(clause: re.Match) -> Callable[[Version], bool]:
    """Does a release meet the clause (`>=4.40`)?"""
    op, text = clause.group("op"), clause.group("version")
    bound = parse_version(text)
    if clause.group("star"):  # `==4.40.*`
        prefix = tuple(int(p) for p in text.split("."))
        return (lambda version: version[: len(prefix)] == prefix) if op == "==" else (lambda version: version[: len(prefix)] != prefix)
    if op == "~=":  # `~=4.40` -> >=4.40,==4.*; `~=4.40.1` -> >=4.40.1,==4.40.*
        length = max(len(text.split(".")) - 1, 1)
        return lambda version: version >= bound and version[:length] == bound[:length]
    compare = _COMPARE[op]
    return lambda version: compare(version, bound)


_COMPARE = {"==": operator.eq, "===": operator.eq, "!=": operator.ne, "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}


# --------------------------------------------------------------------------- what a release accepts


@dataclass(frozen=True, repr=False)
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
def keywords(group: str, library: str = "transformers") -> tuple[dict[str, Lifecycle], str]:
    """(keyword -> lifecycle, error template) for a callable's keywords ("TrainingArguments", "Trainer")."""
    table = data(library)["keywords"][group]
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


def older_spelling(table: dict[str, Lifecycle], name: str, version: Version) -> Lifecycle | None:
    """The keyword that `name` renamed and that `version` still has (`evaluation_strategy` for `eval_strategy`
    on 4.40): what to write on a release older than `name`, or None."""
    return next((e for e in table.values() if e.replacement == name and e.exists(version)), None)


@functools.cache
def symbols(group: str, library: str = "transformers") -> tuple[tuple[Lifecycle, ...], dict[str, str]]:
    """(symbols in match order, error templates) of a group of a library's symbols ("optimizer", "tensorflow")."""
    table = data(library)["symbols"][group]
    return tuple(_lifecycle(row) for row in table["names"]), {k: v for k, v in table.items() if k.endswith("_error")}


def removed_at(group: str, version: Version, library: str = "transformers") -> frozenset[str]:
    """The names of a group of a library's symbols that `version` no longer has ("encode_methods": the tokenizer's
    `encode_plus` and `batch_encode_plus` on 5.x)."""
    entries, _ = symbols(group, library)
    return frozenset(e.name for e in entries if e.status(version) == "removed")


def symbol_removed(group: str, name: str, version: Version, library: str = "transformers") -> bool:
    """Whether `version` no longer has the symbol `name` (qualified or not) of a group whose entries may be globs
    ("tensorflow": `TFBertModel` matches "TF*")."""
    short = name.rsplit(".", 1)[-1]
    return any(fnmatch.fnmatchcase(short, pattern) for pattern in removed_at(group, version, library))


def lifecycle_text(entry: Lifecycle, status: str, version: Version, version_source: str, library: str = "") -> str:
    """`was removed in 4.51 (target ...)` / `is deprecated since 4.32 and removed in 5.0 (target ...)`;
    with `library`, the versions are named by it (`was removed in datasets 3.0`)."""
    lib = f"{library} " if library else ""
    target = f"target {lib}{show(version)} from {version_source}"
    if status == "removed":
        return f"was removed in {lib}{show(entry.removed)} ({target})"
    until = f" and removed in {lib}{show(entry.removed)}" if entry.removed else ""
    return f"is deprecated since {lib}{show(entry.deprecated)}{until} ({target})"
