"""Propose the drift-table rows of a library from two of its wheels, for review by hand.

    python benchmarks/drift/tables.py datasets 2.21.0 3.0.0            # rows as JSON, in data/libraries.json's format
    python benchmarks/drift/tables.py datasets 2.21.0 3.0.0 --wheels DIR

Reads the wheels' source with `ast` (it imports nothing from them): the names the package exports (its
`__init__.py`: `__all__`, `from .x import name`, `from .x import *`, huggingface_hub's lazy `_SUBMOD_ATTRS`) and
the parameters of each exported function and class (`__init__`, or a dataclass's fields). What the older wheel
has and the newer one does not is proposed as removed in the newer release, the other way round as added; each
row cites the file and line of its evidence. The wheels are fetched with `pip download --no-deps` into `--wheels`
(default: $BERTLINT_WHEELS, else bertlint-wheels in the temporary folder) unless they are there already.

What a row means for users (deprecated since when, what replaces it, the fix, what the release does instead of
raising) is not in a signature: the table's rows add it by hand, from the source they cite. `tests/test_drift_tables.py`
regenerates the rows of the boundaries the committed tables name and checks that they agree.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_WHEELS = Path(os.environ.get("BERTLINT_WHEELS") or Path(tempfile.gettempdir()) / "bertlint-wheels")


def show(version: str) -> str:
    """`3.0.0` -> `3.0`, `0.9.6` -> `0.9.6` (the tables' spelling)."""
    parts = version.split(".")
    while len(parts) > 2 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def fetch(package: str, version: str, folder: Path = DEFAULT_WHEELS, timeout: float = 120) -> Path:
    """The wheel of `package==version` in `folder`, downloaded by pip when missing; RuntimeError when pip cannot."""
    stem = package.replace("-", "_")
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if found:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
               "-q", "-d", str(folder), f"{package}=={version}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"pip download {package}=={version}: {exc}") from None
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if done.returncode or not found:
        raise RuntimeError(f"pip download {package}=={version} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return found[0]


@dataclass(frozen=True)
class Export:
    """A name the package exports: where it is exported, and where it is defined (when found)."""

    name: str
    where: str  # "__init__.py:38"
    kind: str  # "functions" | "classes" | "names"
    params: frozenset[str] | None  # the keywords it names; None when not known
    kwargs: bool  # it also takes **kwargs
    defined: str  # "load.py:1815", or "" when not found


class Wheel:
    """The source of one wheel of a package, parsed on demand."""

    def __init__(self, path: Path, package: str) -> None:
        self.package = package
        self.version = path.name.split("-")[1]
        with zipfile.ZipFile(path) as archive:
            self.files = {name: archive.read(name).decode("utf-8", "replace") for name in archive.namelist()
                          if name.startswith(f"{package}/") and name.endswith(".py")}
        self._trees: dict[str, ast.Module | None] = {}

    def tree(self, module: str) -> ast.Module | None:
        """`datasets.load` -> its parsed source (a package's `__init__.py`), None when the wheel has no such module."""
        if module not in self._trees:
            base = module.replace(".", "/")
            text = self.files.get(f"{base}.py", self.files.get(f"{base}/__init__.py"))
            try:
                self._trees[module] = ast.parse(text) if text is not None else None
            except SyntaxError:
                self._trees[module] = None
        return self._trees[module]

    def file(self, module: str) -> str:
        base = module.replace(".", "/")
        name = f"{base}.py" if f"{base}.py" in self.files else f"{base}/__init__.py"
        return name.removeprefix(f"{self.package}/")

    def exports(self) -> dict[str, Export]:
        """Every name the package's `__init__.py` exports, with its definition's keywords."""
        init = self.tree(self.package)
        out: dict[str, Export] = {}
        for name, line, source in _exported(self, self.package, init):
            if name.startswith("_") or name in out:
                continue
            kind, (params, kwargs), defined = self._definition(source, name) or ("names", (None, False), "")
            out[name] = Export(name, f"__init__.py:{line}", kind, params, kwargs, defined)
        return out

    def _definition(self, module: str, name: str, depth: int = 0) -> tuple[str, tuple[frozenset[str] | None, bool], str] | None:
        """(kind, keywords, "file:line") of `name` as `module` defines it, following re-exports a few hops."""
        tree = self.tree(module)
        if tree is None or depth > 4:
            return None
        for node in reversed(tree.body):  # the last definition is the one bound (after `@overload` stubs)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                return "functions", _params(node.args), f"{self.file(module)}:{node.lineno}"
            if isinstance(node, ast.ClassDef) and node.name == name:
                return "classes", _class_params(node), f"{self.file(module)}:{node.lineno}"
        for exported, _, source in _exported(self, module, tree):
            if exported == name and source != module:
                return self._definition(source, name, depth + 1)
        return None


def _exported(wheel: Wheel, module: str, tree: ast.Module | None) -> list[tuple[str, int, str]]:
    """(name, line, module it comes from) for the names `module` re-exports or lists: `from .x import a`,
    `from .x import *` (the public names of x), `__all__`, and a lazy `_SUBMOD_ATTRS = {"x": ["a", ...]}`."""
    out: list[tuple[str, int, str]] = []
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.level:
            source = _resolve(module, node, wheel)
            for alias in node.names:
                if alias.name == "*":
                    out += [(n, node.lineno, source) for n in _public(wheel, source)]
                else:
                    out.append((alias.asname or alias.name, node.lineno, source))
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_SUBMOD_ATTRS" for t in node.targets):
            if isinstance(node.value, ast.Dict):
                for key, names in zip(node.value.keys, node.value.values):
                    if isinstance(key, ast.Constant) and isinstance(names, (ast.List, ast.Tuple)):
                        out += [(n.value, n.lineno, f"{module}.{key.value}") for n in names.elts if isinstance(n, ast.Constant)]
    return out


def _resolve(module: str, node: ast.ImportFrom, wheel: Wheel) -> str:
    """The absolute module of a relative import in `module` (a package's `__init__` counts as the package)."""
    package = module if wheel.tree(module) is not None and wheel.file(module).endswith("__init__.py") else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _public(wheel: Wheel, module: str) -> list[str]:
    """What `from module import *` binds: its `__all__` when a literal, else its public top-level names."""
    tree = wheel.tree(module)
    if tree is None:
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            if isinstance(node.value, (ast.List, ast.Tuple)):
                return [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    names = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.ImportFrom):
            names += [a.asname or a.name for a in node.names if a.name != "*"]
    return [n for n in names if not n.startswith("_")]


def _params(args: ast.arguments) -> tuple[frozenset[str], bool]:
    """(the keywords a def names, whether it also takes **kwargs)."""
    names = [a.arg for a in (*args.args, *args.kwonlyargs)]
    return frozenset(n for n in names if n not in ("self", "cls")), args.kwarg is not None


def _class_params(node: ast.ClassDef) -> tuple[frozenset[str] | None, bool]:
    """A class's keywords: its own `__init__`, else its fields when it is a dataclass; None when not known
    (an `__init__` inherited from a base is not followed)."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return _params(item.args)
    if any("dataclass" in ast.unparse(d) for d in node.decorator_list):
        return frozenset(i.target.id for i in node.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)), False
    return None, False


def propose(package: str, old: Wheel, new: Wheel) -> dict:
    """The rows of `package`'s group that the step from `old` to `new` proposes, in data/libraries.json's format."""
    before, after = old.exports(), new.exports()
    group: dict = {"symbols": {}, "keywords": {}}
    for name in sorted(before.keys() - after.keys()):
        export = before[name]
        row = {"name": name, "removed": show(new.version), "source": f"{old.version} {export.where} exports it; none in {new.version} __init__.py"}
        group["symbols"].setdefault(export.kind, []).append(row)
    for name in sorted(after.keys() - before.keys()):
        export = after[name]
        row = {"name": name, "added": show(new.version), "source": f"{new.version} {export.where} exports it; none in {old.version} __init__.py"}
        group["symbols"].setdefault(export.kind, []).append(row)
    for name in sorted(before.keys() & after.keys()):
        was, now = before[name], after[name]
        if was.params is None or now.params is None:
            continue  # a signature not known on one side proposes nothing
        arguments = {}
        for keyword in sorted(was.params - now.params):
            where = " (it takes **kwargs)" if now.kwargs else ""
            arguments[keyword] = {"removed": show(new.version), "source": f"a parameter of {old.version} {was.defined}; none in {new.version} {now.defined}{where}"}
        for keyword in sorted(now.params - was.params):
            where = " (it takes **kwargs)" if was.kwargs else ""
            arguments[keyword] = {"added": show(new.version), "source": f"a parameter of {new.version} {now.defined}; none in {old.version} {was.defined}{where}"}
        if arguments:
            group["keywords"][name] = {"callables": [f"{package}.{name}"], "arguments": arguments}
    return group


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", help="the distribution and import name (datasets, huggingface_hub, peft, ...)")
    parser.add_argument("old", help="the older release (2.21.0)")
    parser.add_argument("new", help="the newer release (3.0.0)")
    parser.add_argument("--wheels", type=Path, default=DEFAULT_WHEELS, help="where the wheels are cached")
    args = parser.parse_args(argv)
    try:
        old, new = (Wheel(fetch(args.package, v, args.wheels), args.package) for v in (args.old, args.new))
    except RuntimeError as exc:
        print(f"tables.py: {exc}", file=sys.stderr)
        return 2
    json.dump({args.package: propose(args.package, old, new)}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
