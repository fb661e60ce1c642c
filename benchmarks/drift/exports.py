"""Regenerate `src/bertlint/data/exports.json`: every name `from MODULE import NAME` can import, over all releases.

    python benchmarks/drift/exports.py datasets DATASETS_GIT_DIR  # a clone (or bare mirror) of huggingface/datasets
    python benchmarks/drift/exports.py torch                      # the torch installed here
    python benchmarks/drift/exports.py transformers WHEEL_DIR     # wheels fetched there by `pip download --no-deps`
    python benchmarks/drift/exports.py transformers-removed WHEEL_DIR  # data/removed.json's transformers imports (below)

Each command rewrites its module's entry and keeps the others.

For `datasets`: for every release tag from 1.0.0 on (and the default branch), the names `src/datasets/__init__.py`
binds (its imports, assignments, functions and classes; a star import adds its module's `__all__`, else every name that
module binds, at any depth: too many, never too few) and the package's own modules and folders (`from datasets import
arrow_reader` imports a submodule). For `torch.utils.data`: the names of the torch installed here (`dir()`, and its
submodules), plus those of earlier releases that it no longer has (`DATALOADER2`: 1.11-1.13's experimental loader).
For `transformers`: the first and the last release of every minor version from 2.0.0 on (the package index's `0.1` is
another project), each wheel fetched with `pip download --no-deps` into WHEEL_DIR (kept there, so a rerun reads them
again) and read without installing it: the names its `transformers/__init__.py` binds in any branch (the `if
is_torch_available():` imports of 2.x-3.x, the `TYPE_CHECKING` imports of 4.x-5.x) and every identifier it writes as a
string (the lazy `_import_structure` lists, under every `is_*_available()` branch), a star import's names as for
datasets, every public name `utils/dummy_*.py` binds (a list 4.x builds with `dir()`: `DummyObject` too), the
package's own modules and folders, and where the init builds its structure from the model folders (`define_import_structure`, 4.48 on) the
`__all__` of every module under `models/` and what it decorates `@requires` (`@export`). Too many names,
never too few: `facts/stops.py` says a file stops at `from MODULE import NAME` only for a NAME outside the union.

`transformers-removed` writes the other side into `data/removed.json`: the modules a release removed
(`transformers.modeling_bert`, moved to `transformers.models.bert` in 4.0; `transformers_module_removals`), and the names `from transformers import NAME` imported
in some release and no longer imports, by the release that first lacks them (of the releases read, the one after the last
that had the name), for the stop "an API the target release removed that no rule reports". Only names the newest
release read lacks by the reading above AND that the transformers installed here (which must be that release) refuses
(`getattr` raises: 5.x serves some old names through a module `__getattr__`, `XLNetTokenizerFast` among them); names a
drift rule reports (the `symbols` tables of versions.json: `AdamW`, `TF*`, `create_optimizer`, ...) are left out.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import re
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "src" / "bertlint" / "data" / "exports.json"
# torch.utils.data names of releases before the installed one that it dropped (torch 1.11-1.13 `__init__.py`:
# `from torch.utils.data.dataloader_experimental import DataLoader2`; `communication` and `backward_compatibility`
# subpackages; the datapipes' `_decorator`/`_typing` helpers).
DATALOADER2 = ["DataLoader2", "dataloader_experimental", "communication", "backward_compatibility", "_decorator", "_typing"]


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True).stdout


def _source(repo: str, ref: str, module: str) -> str:
    path = "src/" + module.replace(".", "/")
    return _git(repo, "show", f"{ref}:{path}/__init__.py") or _git(repo, "show", f"{ref}:{path}.py")


def _bound(repo: str, ref: str, module: str, public: bool, depth: int = 0) -> set[str]:
    text = _source(repo, ref, module)
    if not text:
        return set()
    package = module if _git(repo, "show", f"{ref}:src/{module.replace('.', '/')}/__init__.py") else module.rsplit(".", 1)[0]
    found, listed = set(), None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                listed = set(ast.literal_eval(node.value))
            except ValueError:
                pass
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*":
                    found.add((alias.asname or alias.name).split(".")[0])
                elif isinstance(node, ast.ImportFrom) and node.level and depth < 5:
                    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                    found |= _bound(repo, ref, f"{base}.{node.module}" if node.module else base, True, depth + 1)
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and not public:
                found.add(node.module.split(".")[0])  # `from .x import y` binds the submodule `x` in the package too
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
    return (listed if listed is not None else {n for n in found if not n.startswith("_")}) if public else found


def datasets_names(repo: str) -> tuple[list[str], list[str]]:
    tags = [t for t in _git(repo, "tag").split() if t[:1].isdigit() and int(t.split(".")[0]) >= 1]
    names: set[str] = set()
    for ref in [*tags, "HEAD"]:
        names |= _bound(repo, ref, "datasets", False)
        for entry in _git(repo, "ls-tree", "--name-only", ref, "src/datasets/").split():
            name = entry.rsplit("/", 1)[-1]
            if name.endswith(".py") or "." not in name:
                names.add(name.removesuffix(".py"))
    return sorted(names), sorted(tags, key=lambda t: [int(p) if p.isdigit() else 0 for p in t.split(".")])


def _releases() -> list[str]:
    """The first and the last release of every minor version of transformers from 2.0.0 on, from the package index."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "transformers"], capture_output=True, text=True).stdout
    listed = re.search(r"Available versions: (.*)", out).group(1).split(", ")
    minors: dict[tuple[int, int], list[tuple[int, ...]]] = {}
    for version in listed:
        if re.fullmatch(r"\d+\.\d+\.\d+", version) and int(version.split(".")[0]) >= 2:
            parts = tuple(int(p) for p in version.split("."))
            minors.setdefault(parts[:2], []).append(parts)
    picked = {p for patches in minors.values() for p in (min(patches), max(patches))}
    return [".".join(map(str, p)) for p in sorted(picked)]


def _wheel(folder: Path, version: str) -> zipfile.ZipFile:
    path = folder / f"transformers-{version}-py3-none-any.whl"
    if not path.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(folder),
                        f"transformers=={version}"], check=True)
    return zipfile.ZipFile(path)


def _module_names(text: str, strings: bool) -> set[str]:
    """The names a module's text binds at any depth (too many, never too few) and, with `strings`, every identifier it
    writes as a string (the head of a dotted one: `"models.bert"` names the folder `models`)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif strings and isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.split(".")[0].isidentifier():
            found.add(node.value.split(".")[0])
    return found


def _public(text: str) -> set[str]:
    """A module's `__all__` where it lists one, else its public top-level classes and functions."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}


def _structure(text: str) -> set[str]:
    """What `define_import_structure` exports from one module under `models/`: its `__all__` and the classes and
    functions decorated `@requires(...)` (`@export(...)` before 4.47)."""
    names = set()
    listed = re.search(r"^__all__\s*=\s*([\[(][^\])]*[\])])", text, re.MULTILINE)
    if listed:
        names |= set(ast.literal_eval(listed.group(1)))
    if "@requires" in text or "@export" in text or "__all__" in text and not listed:
        tree = ast.parse(text)
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                names |= set(ast.literal_eval(node.value))
            decorators = [d.func if isinstance(d, ast.Call) else d for d in getattr(node, "decorator_list", ())]
            if any(isinstance(d, ast.Name) and d.id in ("requires", "export") for d in decorators):
                names.add(node.name)
    return names


def _star(wheel: zipfile.ZipFile, files: set[str], module: str) -> str | None:
    base = "transformers/" + module.replace(".", "/")
    path = next((p for p in (f"{base}.py", f"{base}/__init__.py") if p in files), None)
    return wheel.read(path).decode("utf-8") if path else None


def release_names(wheel: zipfile.ZipFile) -> set[str]:
    """Every name `from transformers import NAME` can import in one release (see the module's docstring)."""
    files = {name for name in wheel.namelist() if name.startswith("transformers/")}
    init = wheel.read("transformers/__init__.py").decode("utf-8")
    names = _module_names(init, strings=True)
    for node in ast.walk(ast.parse(init)):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module and any(a.name == "*" for a in node.names):
            text = _star(wheel, files, node.module)
            names |= _public(text) if text else set()
    for path in files:
        parts = path.split("/")
        names.add(parts[1].removesuffix(".py") if len(parts) == 2 else parts[1])
        if re.fullmatch(r"transformers/utils/dummy_\w+\.py", path):  # 4.x lists `dir()` of it: its imports too
            names |= {name for name in _module_names(wheel.read(path).decode("utf-8"), strings=False) if not name.startswith("_")}
        elif "define_import_structure" in init and parts[1] == "models" and path.endswith(".py"):
            names |= _structure(wheel.read(path).decode("utf-8"))
    return {name for name in names if name.isidentifier()}


def transformers_names(folder: Path) -> tuple[list[str], list[str]]:
    folder.mkdir(parents=True, exist_ok=True)
    releases = _releases()
    names: set[str] = set()
    for version in releases:
        with _wheel(folder, version) as wheel:
            names |= release_names(wheel)
    return sorted(names), releases


def transformers_removals(folder: Path) -> list[dict]:
    """data/removed.json's rows of transformers names removed by a release (see the module's docstring)."""
    import fnmatch

    import transformers

    sys.path.insert(0, str(ROOT / "src"))
    from bertlint import versions

    releases = _releases()
    if transformers.__version__ != releases[-1]:
        raise SystemExit(f"the installed transformers is {transformers.__version__}, not the newest release {releases[-1]}")
    last: dict[str, int] = {}
    for index, version in enumerate(releases):
        with _wheel(folder, version) as wheel:
            for name in release_names(wheel):
                last[name] = index
    reported = [entry.name for group in versions.data("transformers")["symbols"] for entry in versions.symbols(group)[0]]
    newest = len(releases) - 1
    gone: dict[str, list[str]] = {}
    for name, index in last.items():
        if index == newest or name.startswith("_") or any(fnmatch.fnmatchcase(name, pattern) for pattern in reported):
            continue
        try:
            getattr(transformers, name)
        except Exception:  # ImportError/AttributeError: the newest release has no such name
            gone.setdefault(releases[index + 1], []).append(name)
    return [{"module": "transformers", "names": sorted(names), "removed": release.rpartition(".")[0] if release.endswith(".0") else release,
             "source": (f"{releases[releases.index(release) - 1]} transformers/__init__.py (with the package's files, read by "
                        f"benchmarks/drift/exports.py transformers-removed) has the names; {release}'s and every later release's read have "
                        f"none of them, and `getattr(transformers, NAME)` raises on the installed {releases[-1]}")}
            for release, names in sorted(gone.items(), key=lambda item: tuple(map(int, item[0].split("."))))]


def transformers_module_removals(folder: Path) -> list[dict]:
    """data/removed.json's rows of transformers modules removed by a release: every module file (`transformers/X.py`,
    `transformers/X/__init__.py`) of a release read that the newest release read lacks, by the release that first lacks
    it after the last that had it, where importing it raises ModuleNotFoundError (for the module itself) on the
    transformers installed here; a module below a removed one of the same or an earlier release is covered by it;
    TensorFlow and Flax modules are left to BL606."""
    import importlib

    releases = _releases()
    last: dict[str, int] = {}
    for index, version in enumerate(releases):
        with _wheel(folder, version) as wheel:
            for name in wheel.namelist():
                if name.startswith("transformers/") and name.endswith(".py"):
                    last[name[:-3].removesuffix("/__init__").replace("/", ".")] = index
    newest = len(releases) - 1
    gone: dict[str, str] = {}
    for module, index in sorted(last.items()):
        leaf = module.rpartition(".")[2]
        if index == newest or leaf == "__main__" or leaf.startswith("tf") or "_tf" in leaf or "tf_" in leaf or "flax" in leaf:
            continue
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name and (module == error.name or module.startswith(error.name + ".")):
                gone[module] = releases[index + 1]
        except Exception:  # noqa: BLE001 - the module is there and fails on something else: not removed
            continue
    key = lambda release: tuple(map(int, release.split(".")))  # noqa: E731
    kept = {m: r for m, r in gone.items() if not any(m.startswith(p + ".") and key(gone[p]) <= key(r) for p in _parents(m) if p in gone)}
    by_release: dict[str, list[str]] = {}
    for module, release in kept.items():
        by_release.setdefault(release, []).append(module)
    return [{"modules": sorted(modules), "removed": release,
             "source": (f"{releases[releases.index(release) - 1]} transformers/MODULE.py (each module's file or package, read from the "
                        f"wheels by benchmarks/drift/exports.py transformers-removed) is the last release read with the file; {release} "
                        f"is the first without; importing it raises ModuleNotFoundError on the installed {releases[-1]}; TensorFlow "
                        f"and Flax modules left to BL606")}
            for release, modules in sorted(by_release.items(), key=lambda item: key(item[0]))]


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def torch_names() -> tuple[list[str], str]:
    import torch
    import torch.utils.data as data

    names = set(dir(data)) | {m.name for m in pkgutil.iter_modules(data.__path__)} | set(DATALOADER2)
    return sorted(names), torch.__version__


def main() -> None:
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    table["_doc"] = "Every name `from MODULE import NAME` can import from the module, in any release: written by benchmarks/drift/exports.py. A name outside the list raises ImportError in every release."
    if sys.argv[1] == "datasets":
        names, tags = datasets_names(sys.argv[2])
        source = f"huggingface/datasets src/datasets/__init__.py and the package's modules, tags {tags[0]} to {tags[-1]} and the default branch"
        table["datasets"] = {"source": source, "names": names}
    elif sys.argv[1] == "transformers-removed":
        removed_path = TABLE.with_name("removed.json")
        removed = json.loads(removed_path.read_text(encoding="utf-8"))
        wheels = Path(sys.argv[2])
        removed["libraries"]["transformers"]["imports"] = transformers_removals(wheels) + transformers_module_removals(wheels)
        removed_path.write_text(json.dumps(removed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    elif sys.argv[1] == "torch":
        names, release = torch_names()
        source = f"torch {release} installed (dir() and submodules), plus torch 1.11-1.13's DataLoader2, dataloader_experimental, communication, backward_compatibility, _decorator, _typing"
        table["torch.utils.data"] = {"source": source, "names": names}
    else:
        names, releases = transformers_names(Path(sys.argv[2]))
        source = (f"the wheels of transformers {releases[0]} to {releases[-1]} from the package index, the first and the last release "
                  f"of every minor version ({len(releases)} releases): transformers/__init__.py, utils/dummy_*.py, the package's modules "
                  "and, where the init reads them (4.48 on), the __all__ of the modules under models/")
        table["transformers"] = {"source": source, "names": names}
    TABLE.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
