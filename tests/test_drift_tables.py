"""The committed drift tables against the wheels: `benchmarks/drift/tables.py`, run on the two releases around
each boundary that a row of datasets, huggingface_hub, PEFT or accelerate names, proposes that row.

The generator parses the wheels (it imports nothing from them); the wheels are fetched with
`pip download --no-deps` into $BERTLINT_WHEELS (default: bertlint-wheels in the temporary folder), once:
the test is skipped, with the reason, where pip cannot reach an index. What a row adds by hand (deprecated
since, the replacement, what the release does instead of raising) is not a signature and is not compared.
"""

from __future__ import annotations

import importlib.util
import sys

import pytest

from bertlint import versions
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("drift_tables", ROOT / "benchmarks" / "drift" / "tables.py")
tables = importlib.util.module_from_spec(_spec)
sys.modules["drift_tables"] = tables
_spec.loader.exec_module(tables)

LIBRARIES = ("datasets", "huggingface_hub", "peft", "accelerate")
_UNREACHABLE: list[str] = []  # the first failure to fetch: the other cases skip at once


def _release(version: versions.Version) -> str:
    return ".".join(map(str, (*version, 0, 0)[:3]))


def _older(version: versions.Version, library: str) -> versions.Version:
    """The release before a boundary: the previous minor's .0, or the newest minor of the previous major."""
    major, minor = version[0], version[1]
    return (major, minor - 1, 0) if minor else (major - 1, versions.data(library)["releases"][str(major - 1)], 0)


def _committed(library: str):
    """(boundary, where, name, field) for each generated field of the library's committed rows: `where` is
    ("symbols", group) or ("keywords", the callable's exported name)."""
    knowledge = versions.data(library)
    for group in knowledge.get("symbols", {}):
        entries, _ = versions.symbols(group, library)
        for entry in entries:
            for field in ("removed", "added"):
                if getattr(entry, field):
                    yield getattr(entry, field), ("symbols", group), entry.name, field
    for group, table in knowledge.get("keywords", {}).items():
        entries, _ = versions.keywords(group, library)
        for name, entry in entries.items():
            for callable_ in entry.extra.get("callables", table["callables"]):
                for field in ("removed", "added"):
                    if getattr(entry, field):
                        yield getattr(entry, field), ("keywords", callable_.split(".", 1)[1]), name, field


CASES = sorted({(library, boundary) for library in LIBRARIES for boundary, *_ in _committed(library)})


@pytest.mark.parametrize(("library", "boundary"), CASES, ids=[f"{lib}-{versions.show(v)}" for lib, v in CASES])
def test_the_wheels_propose_every_committed_row(library, boundary):
    old_release, new_release = _release(_older(boundary, library)), _release(boundary)
    if _UNREACHABLE:
        pytest.skip(_UNREACHABLE[0])
    try:
        old, new = (tables.Wheel(tables.fetch(library, release), library) for release in (old_release, new_release))
    except RuntimeError as exc:
        _UNREACHABLE.append(f"the wheels cannot be fetched (offline?): {exc}")
        pytest.skip(_UNREACHABLE[0])
    proposed = tables.propose(library, old, new)
    missing = []
    for at, (kind, where), name, field in _committed(library):
        if at != boundary:
            continue
        if kind == "symbols":
            rows = {row["name"]: row for row in proposed["symbols"].get(where, [])}
        else:
            rows = proposed["keywords"].get(where, {}).get("arguments", {})
        if rows.get(name, {}).get(field) != versions.show(boundary):
            missing.append(f"{where}: {name} {field} in {versions.show(boundary)}")
    assert not missing, f"{library} {old_release} -> {new_release} does not propose: " + "; ".join(missing)


def test_generator_reads_exports_and_signatures(tmp_path):
    """On two hand-made wheels: a removed export, an added one, lazy exports, a removed and an added keyword."""
    import zipfile

    def wheel(version: str, files: dict[str, str]):
        path = tmp_path / f"pkg-{version}-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as archive:
            for name, text in files.items():
                archive.writestr(f"pkg/{name}", text)
        return tables.Wheel(path, "pkg")

    old = wheel("1.4.0", {
        "__init__.py": "from .load import load, load_metric\nfrom .hub import *\n_SUBMOD_ATTRS = {'folder': ['Folder']}\n",
        "load.py": "def load(path, use_auth_token=None, *, split=None):\n    pass\ndef load_metric(name):\n    pass\n",
        "hub.py": "__all__ = ['push']\ndef push(repo, **kwargs):\n    pass\n",
        "folder.py": "class Folder:\n    def __init__(self, path):\n        pass\n",
    })
    new = wheel("2.0.0", {
        "__init__.py": "from .load import load\nfrom .hub import *\n",
        "load.py": "from typing import overload\n@overload\ndef load(path, use_auth_token=None): ...\ndef load(path, token=None, *, split=None, **config):\n    pass\n",
        "hub.py": "__all__ = ['push', 'get_token']\ndef push(repo, **kwargs):\n    pass\ndef get_token():\n    pass\n",
    })
    proposed = tables.propose("pkg", old, new)
    assert proposed["symbols"] == {
        "functions": [
            {"name": "load_metric", "removed": "2.0", "source": "1.4.0 __init__.py:1 exports it; none in 2.0.0 __init__.py"},
            {"name": "get_token", "added": "2.0", "source": "2.0.0 __init__.py:2 exports it; none in 1.4.0 __init__.py"},
        ],
        "classes": [{"name": "Folder", "removed": "2.0", "source": "1.4.0 __init__.py:3 exports it; none in 2.0.0 __init__.py"}],
    }
    assert proposed["keywords"] == {"load": {"callables": ["pkg.load"], "arguments": {
        "use_auth_token": {"removed": "2.0", "source": "a parameter of 1.4.0 load.py:1; none in 2.0.0 load.py:4 (it takes **kwargs)"},
        "token": {"added": "2.0", "source": "a parameter of 2.0.0 load.py:4; none in 1.4.0 load.py:1"},
    }}}
