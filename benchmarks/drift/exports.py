"""Regenerate `src/bertlint/data/exports.json`: every name `from MODULE import NAME` can import, over all releases.

    python benchmarks/drift/exports.py DATASETS_GIT_DIR     # a clone (or bare mirror) of huggingface/datasets

For `datasets`: for every release tag from 1.0.0 on (and the default branch), the names `src/datasets/__init__.py`
binds (its imports, assignments, functions and classes; a star import adds its module's `__all__`, else every name that
module binds, at any depth: too many, never too few) and the package's own modules and folders (`from datasets import
arrow_reader` imports a submodule). For `torch.utils.data`: the names of the torch installed here (`dir()`, and its
submodules), plus those of earlier releases that it no longer has (`DATALOADER2`: 1.11-1.13's experimental loader).
`facts/stops.py` says a file stops at `from MODULE import NAME` only for a NAME outside the union.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
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


def torch_names() -> tuple[list[str], str]:
    import torch
    import torch.utils.data as data

    names = set(dir(data)) | {m.name for m in pkgutil.iter_modules(data.__path__)} | set(DATALOADER2)
    return sorted(names), torch.__version__


def main() -> None:
    datasets, tags = datasets_names(sys.argv[1])
    torch, release = torch_names()
    TABLE.write_text(json.dumps({
        "_doc": "Every name `from MODULE import NAME` can import from the module, in any release: written by benchmarks/drift/exports.py. A name outside the list raises ImportError in every release.",
        "datasets": {"source": f"huggingface/datasets src/datasets/__init__.py and the package's modules, tags {tags[0]} to {tags[-1]} and the default branch", "names": datasets},
        "torch.utils.data": {"source": f"torch {release} installed (dir() and submodules), plus torch 1.11-1.13's DataLoader2, dataloader_experimental, communication, backward_compatibility, _decorator, _typing", "names": torch},
    }, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
