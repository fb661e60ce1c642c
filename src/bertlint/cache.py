"""The result cache: a file's findings are reused while nothing they depend on has changed.

Like ruff's, it lives in `.bertlint_cache/` at the project root (with a `.gitignore` and a
CACHEDIR.TAG inside). One pack file per bertlint build and resolved configuration holds, per
file, a key made of the file's bytes and its target transformers version, the other files its
lint read (data files, local checkpoint configs) with their size and mtime, and its findings.
A changed file, pin or data file invalidates that file's entry only; a changed configuration or
bertlint build selects another pack.

A pack is written whole to a temporary file and renamed over the old one, merged with what
another run may have saved meanwhile, so concurrent runs never corrupt it; an unreadable pack
is an empty one. A save also prunes: entries of files that are gone, packs no run has used
for a week (other configurations, older builds) and temporary files a killed run left. Standard library only: a warm run must not pay for more than it reads.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from bertlint.config import relative_posix
from bertlint.report import Edit, Finding, Fix

if TYPE_CHECKING:
    from bertlint.config import Settings
    from bertlint.target import Target

CACHE_DIR = ".bertlint_cache"
_TAG_SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"  # https://bford.info/cachedir/
_TAG = f"{_TAG_SIGNATURE}\n# This file is a cache directory tag created by bertlint.\n"

Input = tuple[str, "int | None", "int | None"]  # (absolute path, mtime_ns, size); None, None: absent


def snapshot(paths: list[str]) -> list[Input]:
    """The state of each input now, to compare with when the entry is reused."""
    out = []
    for path in sorted(set(paths)):
        try:
            st = os.stat(path)
            out.append((path, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((path, None, None))
    return out


def file_key(data: bytes, target: "Target") -> str:
    """Hash of the bytes and of the transformers release the file targets (a pin near it may change)."""
    from hashlib import blake2b  # imported by a run that caches only (~3 ms)

    digest = blake2b(data, digest_size=20)
    digest.update(repr(target).encode())
    return digest.hexdigest()


def _build() -> str:
    """bertlint's version plus the size and mtime of its own files, so an edited (editable)
    install never serves results computed by older code."""
    from bertlint import __version__

    package = Path(__file__).resolve().parent
    parts = [__version__]
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".md", ".toml")):
                st = os.stat(os.path.join(folder, name))
                parts.append(f"{folder}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


class Cache:
    """One pack: relative path -> entry, entries decoded only when looked up."""

    def __init__(self, settings: "Settings", cache_dir: Path | None = None) -> None:
        self.settings = settings
        self.root = Path(os.path.abspath(cache_dir if cache_dir is not None else Path(settings.project_root) / CACHE_DIR))
        from hashlib import blake2b

        pack = blake2b(f"{settings.cache_key()}\n{_build()}".encode(), digest_size=16).hexdigest()
        self.file = self.root / f"{pack}.jsonl"
        self.entries = _read_pack(self.file)
        self.changed: dict[str, str] = {}

    def _name(self, path: Path) -> str:
        return json.dumps(relative_posix(path, self.settings.project_root))

    def lookup(self, path: Path, key: str) -> list[Finding] | None:
        """The cached findings for the file whose bytes and target give `key` (`file_key`), or None
        when they must be computed."""
        line = self.entries.get(self._name(path))
        if line is None:
            return None
        try:
            entry = json.loads(line)
            if entry["key"] != key:
                return None
            inputs = [tuple(i) for i in entry["inputs"]]
            if snapshot([i[0] for i in inputs]) != inputs:
                return None
            return [_finding(f, str(path)) for f in entry["findings"]]
        except (OSError, ValueError, KeyError, TypeError, IndexError):  # unreadable now, or a damaged entry: a miss
            return None

    def store(self, path: Path, key: str, findings: list[Finding], inputs: list[Input]) -> None:
        """Remember the findings of the bytes whose key is `key`; kept in memory until `save`."""
        try:
            line = json.dumps({"key": key, "inputs": inputs, "findings": [asdict(f) for f in findings]}, separators=(",", ":"))
        except (TypeError, ValueError):  # a finding carries something JSON cannot hold: do not cache it
            return
        name = self._name(path)
        self.entries[name] = self.changed[name] = line

    def save(self) -> None:
        """Merge with the pack on disk (another run may have saved since we read it) and replace it
        atomically. A cache that cannot be written is no error: the run just stays cold."""
        if not self.changed:  # nothing new: only mark the pack as in use, so pruning keeps it
            with contextlib.suppress(OSError):
                os.utime(self.file)
            return
        import tempfile

        try:
            self.root.mkdir(parents=True, exist_ok=True)
            _mark(self.root)
            merged = {name: line for name, line in {**_read_pack(self.file), **self.changed}.items() if name in self.changed or self._exists(name)}
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".pack-", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.writelines(f"{name}\t{line}\n" for name, line in merged.items())
                os.replace(tmp, self.file)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError:
            return
        self.changed.clear()
        _prune(self.root, keep=self.file)

    def _exists(self, name: str) -> bool:
        try:
            return os.path.exists(os.path.join(self.settings.project_root, json.loads(name)))
        except ValueError:
            return False


STALE_PACK_SECONDS = 7 * 24 * 3600
STALE_TMP_SECONDS = 3600


def _prune(root: Path, keep: Path) -> None:
    """Drop packs unused for a week and temporary files older than an hour (a run killed mid-save)."""
    import time

    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            age = now - entry.stat().st_mtime
            stale = entry.name.endswith(".jsonl") and age > STALE_PACK_SECONDS or entry.name.startswith(".pack-") and age > STALE_TMP_SECONDS
            if stale and entry.path != str(keep):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _read_pack(file: Path) -> dict[str, str]:
    """name -> entry text; lines that are not `"name"<TAB>{...}` (a damaged pack) are skipped."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in text.splitlines():
        name, sep, entry = line.partition("\t")
        if sep and name.startswith('"') and entry.startswith("{"):
            out[name] = entry
    return out


def _finding(d: dict, path: str) -> Finding:
    fix = d.pop("fix")
    if fix is not None:
        fix = Fix(fix["applicability"], fix["message"], tuple(Edit(**e) for e in fix["edits"]))
    return Finding(**{**d, "path": path, "fix": fix})


def _mark(root: Path) -> None:
    """A `.gitignore` so the cache is never committed, and a CACHEDIR.TAG so backup tools skip it
    (and `bertlint clean` knows the folder is ours)."""
    for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# Created by bertlint automatically.\n*\n")):
        target = root / name
        if not target.exists():
            target.write_text(text, encoding="utf-8")


def clean(paths: list[Path]) -> list[Path]:
    """Remove every bertlint cache folder at or under `paths` (a folder given itself counts when
    it is a cache); only folders holding our CACHEDIR.TAG are touched. Returns what was removed."""
    import shutil

    removed = []
    for start in paths:
        candidates = [Path(start)] if is_cache(Path(start)) else []
        for folder, dirs, _ in os.walk(start):
            candidates += [Path(folder) / d for d in dirs if d == CACHE_DIR and is_cache(Path(folder) / d)]
            dirs[:] = [d for d in dirs if d != CACHE_DIR and d != ".git"]
        for candidate in candidates:
            shutil.rmtree(candidate, ignore_errors=True)
            removed.append(candidate)
    return removed


def is_cache(folder: Path) -> bool:
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8").startswith(_TAG_SIGNATURE)
    except (OSError, UnicodeDecodeError):
        return False
