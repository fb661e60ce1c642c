"""Configuration: find the nearest config file, validate it strictly, resolve rule selection.

Strict on purpose: a typo in a linter config silently disables checks, so unknown keys,
bad values and unknown rule codes are errors that name the file, the key and what is allowed.
Only light stdlib at import time (a pre-commit hook must start in a blink): TOML parsers,
json, hashlib and difflib load when needed.
"""

from __future__ import annotations

import fnmatch
import functools
import math
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bertlint.patterns import Lazy

__all__ = [
    "CONFIG_KEYS",
    "DEFAULT_EXCLUDE",
    "ConfigError",
    "Glob",
    "Settings",
    "expand_selector",
    "find_config",
    "load_settings",
    "parse_codes",
    "parse_gpu_memory",
    "relative_posix",
]

# ruff's default exclusions (crates/ruff_workspace/src/settings.rs, EXCLUDE), `.ipynb_checkpoints` included so
# that Jupyter's autosaved copies are not linted twice, plus `build`, `env`, `__pycache__`, `*.egg-info`, ours.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache", ".nox",
    ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", ".vscode",
    "__pypackages__", "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
    "build", "env", "__pycache__", "*.egg-info", ".bertlint_cache",
)

CONFIG_KEYS: tuple[str, ...] = (
    "select", "ignore", "extend-select", "per-file-ignores", "exclude", "extend-exclude",
    "respect-gitignore", "force-exclude", "learning-rate", "gpu-memory", "imbalance-ratio", "transformers-version",
    "library-versions", "preview",
)
_OVERRIDE_KEYS = frozenset(
    k.replace("-", "_") for k in CONFIG_KEYS if k not in ("learning-rate", "library-versions")
)
# The libraries around transformers that have a target release of their own (target.py), as imported.
LIBRARIES: tuple[str, ...] = ("datasets", "huggingface_hub", "trl", "peft", "accelerate")
OPTIMIZERS: tuple[str, ...] = ("adamw", "adafactor", "sgd")

_SELECTOR_RE = re.compile(r"[A-Z]+[0-9]*")
_FAMILY_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*")  # family names and checkpoint ids
_VERSION_RE = re.compile(r"\d+(\.\d+){0,2}")
_MEMORY_RE = Lazy(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*", re.IGNORECASE)
# GPU vendors sell "80GB" cards that have 80 GiB, so GB is read as GiB.
_MEMORY_UNITS = {"": 1.0, "g": 1.0, "gb": 1.0, "gib": 1.0,
                 "m": 1 / 1024, "mb": 1 / 1024, "mib": 1 / 1024,
                 "t": 1024.0, "tb": 1024.0, "tib": 1024.0}
_GPU_MEMORY_EXPECTED = 'a number of GiB greater than 0, or a string like "24GiB", "24GB" or "80 GiB"'


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI reports it and exits with status 2."""


class Glob:
    """One fnmatch-style pattern matched like ruff does: against the path relative to the
    project root and against the basename. A leading ``**/`` may match zero directories,
    a trailing ``/`` restricts the pattern to directories, absolute patterns match absolute paths."""

    __slots__ = ("pattern", "_regex", "_dir_only", "_absolute")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._dir_only = pattern.endswith("/") and len(pattern) > 1
        pat = pattern.rstrip("/") if self._dir_only else pattern
        while pat.startswith("./"):
            pat = pat[2:]
        self._absolute = os.path.isabs(pat)
        alternatives = [pat] + ([pat[3:]] if pat.startswith("**/") else [])
        self._regex = re.compile("|".join(fnmatch.translate(a) for a in alternatives))

    def match(self, rel: str, *, is_dir: bool = False, abs_path: str | None = None) -> bool:
        """True if ``rel`` (posix, relative to the project root) matches."""
        if self._dir_only and not is_dir:
            return False
        if self._absolute:
            return abs_path is not None and self._regex.match(abs_path) is not None
        if self._regex.match(rel):
            return True
        name = rel.rpartition("/")[2]
        return name != rel and self._regex.match(name) is not None

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r})"


def relative_posix(path: Path | str, root: Path | str) -> str:
    """``path`` relative to ``root`` in posix form, or its absolute posix form when outside."""
    absolute = os.path.abspath(path)
    root_abs = os.path.abspath(root)
    try:
        rel = os.path.relpath(absolute, root_abs)
    except ValueError:  # another drive on Windows
        return Path(absolute).as_posix()
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return Path(absolute).as_posix()
    return Path(rel).as_posix()


@dataclass(frozen=True)
class Settings:
    """Resolved settings. ``lr_ranges`` is the ``learning-rate`` table as validated, keys as written:
    family/checkpoint -> (low, high), or -> {optimizer: (low, high)} (the shape knowledge.lr_range reads)."""

    select: frozenset[str] = frozenset()
    preview: bool = False  # preview rules run (those that the selection names)
    # Selectors that name only preview rules while preview is off: they enable nothing (warned, as ruff does).
    preview_ignored: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    force_exclude: bool = False  # apply the exclusions to paths named on the command line too (pre-commit)
    lr_ranges: dict[str, Any] = field(default_factory=dict, hash=False)
    gpu_memory_gib: float = 16.0
    gpu_memory_set: bool = False  # given in the settings or on the command line (else BL502 may read the card from the file)
    imbalance_ratio: float = 3.0
    transformers_version: str | None = None
    transformers_version_from: str = "the settings"  # where the target version was given, for messages
    library_versions: tuple[tuple[str, str], ...] = ()  # `library-versions = { datasets = "2.19" }`: (library, version)
    library_versions_from: str = "the settings"
    config_path: Path | None = None
    project_root: Path = field(default_factory=Path.cwd)

    @functools.cached_property
    def _per_file_globs(self) -> tuple[tuple[Glob, frozenset[str]], ...]:
        return tuple((Glob(p), codes) for p, codes in self.per_file_ignores)

    def codes_for(self, path: Path) -> frozenset[str]:
        """Selected codes minus the per-file ignores whose pattern matches the file or one of
        its directories (so ``notebooks/`` and ``**/legacy`` work as well as ``tests/*.py``)."""
        if not self.per_file_ignores:
            return self.select
        rel = relative_posix(path, self.project_root)
        abs_path = Path(os.path.abspath(path)).as_posix()
        parts = rel.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
        ignored: set[str] = set()
        for glob, codes in self._per_file_globs:
            if glob.match(rel, abs_path=abs_path) or any(
                glob.match(p, is_dir=True) for p in prefixes[:-1] if p
            ):
                ignored |= codes
        return self.select - ignored

    def cache_key(self) -> str:
        """Stable hash of everything that changes a file's diagnostics (not which files are found)."""
        import hashlib
        import json

        from bertlint import __version__

        payload = {
            "version": __version__,
            "select": sorted(self.select),
            "per_file_ignores": [[p, sorted(c)] for p, c in self.per_file_ignores],
            "lr_ranges": self.lr_ranges,
            "gpu_memory_gib": self.gpu_memory_gib,
            "gpu_memory_set": self.gpu_memory_set,
            "imbalance_ratio": self.imbalance_ratio,
            "transformers_version": self.transformers_version,
            "library_versions": self.library_versions,
            "project_root": str(self.project_root),
        }
        blob = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()


# --------------------------------------------------------------------------- rule codes


def expand_selector(selector: str, all_codes: Iterable[str]) -> frozenset[str]:
    """Codes a selector enables: an exact code, a prefix at least as long as the letters
    (``BL``, ``BL1``, ``BL10``) or ``ALL``. Raises ValueError when it selects nothing."""
    sel = selector.strip().upper()
    codes = tuple(all_codes)
    if sel == "ALL":
        return frozenset(codes)
    if _SELECTOR_RE.fullmatch(sel):
        letters = sel.rstrip("0123456789")
        hits = frozenset(c for c in codes if c.startswith(sel) and c.rstrip("0123456789") == letters)
        if hits:
            return hits
    raise ValueError(selector)


def _code_hint(bad: str, all_codes: Iterable[str]) -> str:
    import difflib

    codes = sorted(all_codes)
    close = difflib.get_close_matches(bad.strip().upper(), codes, n=1)
    example = f"a rule code (e.g. {codes[0]}), a prefix (e.g. {codes[0][:-2]}) or ALL" if codes else "ALL"
    return (f"did you mean {close[0]!r}? " if close else "") + f"expected {example}"


def parse_codes(value: str | Iterable[str], all_codes: Iterable[str]) -> frozenset[str]:
    """Expand selectors (a list, or one comma-separated string) to full codes.
    Raises ConfigError("unknown rule code 'X'; ...") without a location: callers add it."""
    items = value.split(",") if isinstance(value, str) else list(value)
    codes = tuple(all_codes)
    out: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"invalid rule code {_show(item)}; expected a string")
        if not item.strip():
            continue
        try:
            out |= expand_selector(item, codes)
        except ValueError:
            raise ConfigError(f"unknown rule code {item!r}; {_code_hint(item, codes)}") from None
    return frozenset(out)


def _specificity(selector: str) -> int:
    return 0 if selector == "ALL" else len(selector)


@dataclass(repr=False, eq=False)
class _Layer:
    """One place that selects rules (the config file, then the command line)."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


def _resolve_selection(layers: list[_Layer], all_codes: tuple[str, ...], default: frozenset[str]) -> frozenset[str]:
    """Like ruff: ``select`` replaces what came before, ``extend-select`` adds, ``ignore`` removes;
    within a layer the most specific selector wins (ignore wins ties), and ignores of a layer
    without ``select`` carry over to the next layer."""
    expanded = {s: expand_selector(s, all_codes)
                for layer in layers for s in (layer.select or []) + layer.extend_select + layer.ignore}
    enabled = set(default)
    carried: list[str] = []
    for layer in layers:
        ignore = carried + layer.ignore
        enable = (layer.select or []) + layer.extend_select
        base = set() if layer.select is not None else enabled
        new: set[str] = set()
        for code in all_codes:
            best, on = -1, code in base
            for sel in enable:
                if _specificity(sel) > best and code in expanded[sel]:
                    best, on = _specificity(sel), True
            for sel in ignore:
                if _specificity(sel) >= best and code in expanded[sel]:
                    best, on = _specificity(sel), False
            if on:
                new.add(code)
        enabled = new
        carried = ignore if layer.select is None else []
    return frozenset(enabled)


# --------------------------------------------------------------------------- values


def parse_gpu_memory(value: Any) -> float:
    """GiB from a number or a string such as "24GiB", "24GB", "80 GiB"; ValueError otherwise."""
    if isinstance(value, str):
        m = _MEMORY_RE.fullmatch(value)
        if not m or m.group(2).lower() not in _MEMORY_UNITS:
            raise ValueError(value)
        gib = float(m.group(1)) * _MEMORY_UNITS[m.group(2).lower()]
    elif _is_number(value):
        gib = float(value)
    else:
        raise ValueError(value)
    if not (math.isfinite(gib) and gib > 0):
        raise ValueError(value)
    return gib


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _show(value: Any) -> str:
    import json

    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


class _Where:
    """Names where a value came from, so every error points at a file+key or a flag."""

    def __init__(self, file: str | None = None, section: str = "", origin: str | None = None) -> None:
        self.file, self.section, self.origin = file, section, origin  # origin: who gave overrides (an editor), else flags

    def at(self, key: str) -> str:
        if self.file is None:
            name = key.replace("_", "-")
            return f"'{name}' in {self.origin}" if self.origin else f"--{name}"
        return f"{self.file}: '{key}'" + (f" in {self.section}" if self.section else "")

    def bad(self, key: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(f"{self.at(key)}: invalid value {_show(value)}; expected {expected}")

    def unknown(self, key: str, allowed: Iterable[str], table: str | None = None) -> ConfigError:
        import difflib

        allowed = list(allowed)
        table = table if table is not None else self.section
        where = f" in {table}" if table else ""
        hint = ""
        if "_" in key and key.replace("_", "-") in allowed:
            hint = f"did you mean {key.replace('_', '-')!r}? (keys are kebab-case) "
        else:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
        return ConfigError(f"{self.file}: unknown key {key!r}{where}; {hint}allowed: {', '.join(allowed)}")


def _strings(value: Any, where: _Where, key: str) -> list[str]:
    if where.file is None and isinstance(value, str):  # a flag may give "A,B"
        value = [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise where.bad(key, value, "a list of strings")


def _selectors(value: Any, where: _Where, key: str, all_codes: tuple[str, ...]) -> list[str]:
    items = _strings(value, where, key)
    out = []
    for item in items:
        try:
            expand_selector(item, all_codes)
        except ValueError:
            raise ConfigError(
                f"{where.at(key)}: unknown rule code {item!r}; {_code_hint(item, all_codes)}"
            ) from None
        out.append(item.strip().upper())
    return out


def _per_file_ignores(value: Any, where: _Where, key: str, all_codes: tuple[str, ...]):
    if where.file is None and not isinstance(value, Mapping):
        pairs: dict[str, Any] = {}
        for item in _strings([value] if isinstance(value, str) else value, where, key):
            pattern, sep, codes = item.rpartition(":")
            if not sep or not pattern:
                raise where.bad(key, item, 'PATTERN:CODES, e.g. "tests/*.py:BL101,BL2"')
            pairs.setdefault(pattern, []).extend(c for c in codes.split(",") if c.strip())
        value = pairs
    if not isinstance(value, Mapping):
        raise where.bad(key, value, 'a table of glob pattern -> list of rule codes, e.g. {"tests/*.py" = ["BL101"]}')
    out = []
    for pattern, codes in value.items():
        sub = f'{key}."{pattern}"' if where.file else key
        selectors = _selectors(codes, where, sub, all_codes)
        out.append((pattern, frozenset().union(*(expand_selector(s, all_codes) for s in selectors))))
    return out


def _lr_range(value: Any, where: _Where, key: str) -> tuple[float, float]:
    ok = (isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)
          and all(math.isfinite(v) for v in value) and 0 < value[0] < value[1])
    if not ok:
        raise where.bad(key, value, "[low, high] with 0 < low < high, e.g. [1e-5, 5e-5]")
    return (float(value[0]), float(value[1]))


def _lr_name(key: str) -> str:
    """A learning-rate key as BL301 looks it up (knowledge.lr_range): lower case, `_` as `-`."""
    return key.lower().replace("_", "-")


@functools.cache
def _lr_names() -> tuple[tuple[str, ...], frozenset[str]]:
    """(the families of the built-in learning-rate table and default, lora, peft, from-scratch; the
    checkpoints of the built-in table by id and by name), as BL301 looks them up."""
    import json

    data = Path(__file__).with_name("data")
    table = json.loads((data / "learning_rates.json").read_text(encoding="utf-8"))
    families = sorted({_lr_name(key) for key in table if not key.startswith("_")} | {"default", "peft"})  # see knowledge.lr_range
    ids = [_lr_name(record["id"]) for record in json.loads((data / "checkpoints.json").read_text(encoding="utf-8"))]
    return tuple(families), frozenset(ids) | {name.rsplit("/", 1)[-1] for name in ids}


def _check_lr_key(family: str, where: _Where, key: str) -> None:
    """A key BL301 would never look up is a typo, not a setting: a family of the built-in table, a
    checkpoint it knows by name, or any checkpoint given with its organisation (`org/name`: hub ids
    cannot be checked offline)."""
    families, checkpoints = _lr_names()
    name = _lr_name(family)
    if "/" in name or name in families or name in checkpoints:
        return
    import difflib

    close = [f for f in families if f.startswith(f"{name}-")] or difflib.get_close_matches(name, [*families, *sorted(checkpoints)], n=1)  # bert: bert-base
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(f"{where.at(key)}: unknown model family or checkpoint {family!r}; {hint}allowed: "
                      f"{', '.join(families)}, the name of a checkpoint bertlint knows (e.g. roberta-large), "
                      "or any checkpoint with its organisation (org/name)")


def _learning_rate(value: Any, where: _Where, key: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise where.bad(key, value, 'a table of model family (or "default") -> [low, high]')
    out: dict[str, Any] = {}
    for family, spec in value.items():
        sub = f"{key}.{family}"
        if not _FAMILY_RE.fullmatch(family):
            raise ConfigError(f"{where.at(sub)}: invalid model family name {family!r}; "
                              "expected a family like bert-base or llm, default, lora, from-scratch or a checkpoint id")
        _check_lr_key(family, where, sub)
        if isinstance(spec, Mapping):
            for opt in spec:
                if opt not in OPTIMIZERS:
                    raise where.unknown(opt, OPTIMIZERS, f"[{_table_prefix(where)}{sub}]")
            if not spec:
                raise where.bad(sub, spec, f"[low, high] or a table with keys {', '.join(OPTIMIZERS)}")
            out[family] = {opt: _lr_range(r, where, f"{sub}.{opt}") for opt, r in spec.items()}
        else:
            out[family] = _lr_range(spec, where, sub)
    return out


def _table_prefix(where: _Where) -> str:
    return "tool.bertlint." if where.section else ""


def _parse(table: Mapping[str, Any], where: _Where, all_codes: tuple[str, ...]) -> dict[str, Any]:
    """Validate raw values (file keys in kebab-case, or overrides in snake_case) into python names."""
    out: dict[str, Any] = {}
    for raw_key, value in table.items():
        key = raw_key.replace("_", "-") if where.file is None else raw_key
        name = key.replace("-", "_")
        if key in ("select", "ignore", "extend-select"):
            out[name] = _selectors(value, where, raw_key, all_codes)
        elif key == "per-file-ignores":
            out[name] = _per_file_ignores(value, where, raw_key, all_codes)
        elif key in ("exclude", "extend-exclude"):
            out[name] = _strings(value, where, raw_key)
        elif key in ("respect-gitignore", "force-exclude", "preview"):
            if not isinstance(value, bool):
                raise where.bad(raw_key, value, "true or false")
            out[name] = value
        elif key == "learning-rate":
            out["lr_ranges"] = _learning_rate(value, where, raw_key)
        elif key == "gpu-memory":
            try:
                out[name] = parse_gpu_memory(value)
            except ValueError:
                raise where.bad(raw_key, value, _GPU_MEMORY_EXPECTED) from None
        elif key == "imbalance-ratio":
            if isinstance(value, str) and where.file is None:
                try:
                    value = float(value)
                except ValueError:
                    pass
            if not (_is_number(value) and math.isfinite(value) and value > 1):
                raise where.bad(raw_key, value, "a number greater than 1")
            out[name] = float(value)
        elif key == "transformers-version":
            m = isinstance(value, str) and _VERSION_RE.fullmatch(value.strip())
            if not m or not 3 <= int(value.strip().split(".")[0]) <= 6:
                raise where.bad(raw_key, value, 'a quoted version string like "4.40" or "4.40.2" (major version 3 to 6)')
            out[name] = value.strip()
        elif key == "library-versions":
            out[name] = _library_versions(value, where, raw_key)
        else:
            raise where.unknown(raw_key, CONFIG_KEYS)
    return out


def _library_versions(value: Any, where: "_Where", key: str) -> tuple[tuple[str, str], ...]:
    """`{ datasets = "2.19", huggingface-hub = "0.36" }` -> (("datasets", "2.19"), ("huggingface_hub", "0.36"))."""
    if not isinstance(value, dict):
        raise where.bad(key, value, 'a table of library = "version", like { datasets = "2.19", trl = "0.9" }')
    out = []
    for name, version in value.items():
        library = re.sub(r"[-_.]+", "_", str(name)).lower()
        if library not in LIBRARIES:
            raise where.bad(f"{key}.{name}", name, "one of " + ", ".join(LIBRARIES))
        if not isinstance(version, str) or not _VERSION_RE.fullmatch(version.strip()):
            raise where.bad(f"{key}.{name}", version, 'a quoted version string like "2.19" or "0.9.6"')
        out.append((library, version.strip()))
    return tuple(out)


# --------------------------------------------------------------------------- files


def _display(path: Path) -> str:
    rel = relative_posix(path, Path.cwd())
    return rel if not os.path.isabs(rel) else str(path)


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{_display(path)}: No such file or directory") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{_display(path)}: cannot read config file: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # message carries "(at line N, column M)"
        raise ConfigError(f"{_display(path)}: invalid TOML: {exc}") from None


def _bertlint_table(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool", {})
    table = tool.get("bertlint") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{_display(path)}: 'tool.bertlint' must be a table")
    return table


def find_config(start: Path) -> Path | None:
    """Nearest ``bertlint.toml``, or ``pyproject.toml`` with a ``[tool.bertlint]`` table, at or
    above ``start``; a pyproject without the table is skipped, as ruff does."""
    directory = Path(os.path.abspath(start))
    if not directory.is_dir():
        directory = directory.parent
    for d in (directory, *directory.parents):
        candidate = d / "bertlint.toml"
        if candidate.is_file():
            return candidate
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            try:
                raw = candidate.read_bytes()
            except OSError:
                continue
            # Cheap pre-check: don't parse (or choke on) pyprojects that never mention us.
            if b"bertlint" in raw and _bertlint_table(candidate, _load_toml(candidate)) is not None:
                return candidate
    return None


def _version_origin(config: Path | None, overrides_from: str | None) -> str:
    """Where the target version was given, as the version messages cite it."""
    if config is not None:
        return f"transformers-version in {_display(config)}"
    return "--transformers-version" if overrides_from is None else f"transformers-version in {overrides_from}"


def load_settings(
    start: Path,
    all_codes: Iterable[str],
    *,
    default_codes: Iterable[str] | None = None,
    preview_codes: Iterable[str] = (),
    config_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    overrides_from: str | None = None,
    isolated: bool = False,
) -> Settings:
    """Settings from the nearest (or given) config file plus ``overrides``: command-line flags, or
    the settings named by ``overrides_from`` (an editor's). Overrides with value None (or an empty
    list/tuple) count as not given. ``preview_codes`` run only with ``preview`` on, as ruff's preview
    rules do: then every selector (the default set included) enables them; with it off, none does,
    not even their exact code, and a selector that names nothing else is reported in ``preview_ignored``."""
    codes = tuple(sorted(set(all_codes)))
    default = frozenset(codes if default_codes is None else default_codes)
    start = Path(os.path.abspath(start))
    if not start.is_dir():
        start = start.parent

    path: Path | None = None
    table: Mapping[str, Any] = {}
    if not isolated:
        path = Path(config_file) if config_file is not None else find_config(start)
    if path is not None:
        found = _bertlint_table(path, _load_toml(path))
        if found is None:
            raise ConfigError(f"{_display(path)}: no [tool.bertlint] table")
        table = found
    section = "[tool.bertlint]" if path is not None and path.name == "pyproject.toml" else ""
    file_values = _parse(table, _Where(_display(path) if path else None, section), codes)

    given = {k: v for k, v in (overrides or {}).items() if v is not None and v != () and v != []}
    unknown = set(given) - _OVERRIDE_KEYS
    if unknown:
        raise TypeError(f"unknown override(s): {', '.join(sorted(unknown))}")
    cli = _parse(given, _Where(origin=overrides_from), codes)

    layers = [_Layer(file_values.get("select"), file_values.get("extend_select", []), file_values.get("ignore", [])),
              _Layer(cli.get("select"), cli.get("extend_select", []), cli.get("ignore", []))]
    merged = {**file_values, **cli}
    preview = merged.get("preview", False)
    held = frozenset() if preview else frozenset(preview_codes)
    selectors = [s for layer in layers for s in (layer.select or []) + layer.extend_select]
    return Settings(
        select=_resolve_selection(layers, codes, default) - held,
        preview=preview,
        preview_ignored=tuple(dict.fromkeys(s for s in selectors if held and expand_selector(s, codes) <= held)),
        per_file_ignores=tuple(merged.get("per_file_ignores", ())),
        exclude=tuple(merged.get("exclude", DEFAULT_EXCLUDE)),
        extend_exclude=tuple(file_values.get("extend_exclude", [])) + tuple(cli.get("extend_exclude", [])),
        respect_gitignore=merged.get("respect_gitignore", True),
        force_exclude=merged.get("force_exclude", False),
        lr_ranges=file_values.get("lr_ranges", {}),
        gpu_memory_gib=merged.get("gpu_memory", 16.0),
        gpu_memory_set="gpu_memory" in merged and merged["gpu_memory"] is not None,
        imbalance_ratio=merged.get("imbalance_ratio", 3.0),
        transformers_version=merged.get("transformers_version"),
        transformers_version_from=_version_origin(path if "transformers_version" not in cli else None, overrides_from),
        library_versions=file_values.get("library_versions", ()),
        library_versions_from=f"library-versions in {_display(path)}" if path is not None else "the settings",
        config_path=Path(os.path.abspath(path)) if path is not None else None,
        project_root=Path(os.path.abspath(path)).parent if path is not None else _unconfigured_root(start),
    )


VCS_MARKERS = (".git", ".hg", ".svn")


def _unconfigured_root(start: Path) -> Path:
    """The project root where no config file names one: the working directory when `start` lies in it (ruff's
    rule: `bertlint src/train.py` run at a repository's top sees its requirements.txt), else the nearest folder
    from `start` up that holds a repository (`.git`, `.hg`, `.svn`: `bertlint ~/repo/src/train.py` run from
    elsewhere sees the repository's pins too), else `start` itself."""
    here = Path.cwd()
    if start == here or here in start.parents:
        return here
    return next((folder for folder in (start, *start.parents) if any((folder / m).exists() for m in VCS_MARKERS)), start)
