"""The local data file a script reads: which existing file a `pd.read_csv(path)` / `load_dataset("csv", data_files=...)`-like
call reads, in which format, and the header of the file a frame is read from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst

from bertlint import datafiles
from bertlint.facts.nodes import Call
from bertlint.facts.values import Values as Facts


# Keywords of a read that leave the file's header and rows as datafiles.py reads them (`names=`, `header=`, `skiprows=`,
# `usecols=`, `converters=`, `nrows=` ... change what the script sees: unknown).
PLAIN_READ_KEYWORDS = frozenset({"data_files", "split", "encoding", "lines", "keep_default_na", "low_memory"})


def data_file_of(facts: Facts, call: Call) -> tuple[Path | None, str]:
    """The existing local file a `pd.read_csv`/`load_dataset("csv", data_files=...)`-like call reads."""
    short = call.short or ""
    q = call.qualname or ""
    if short in datafiles.READERS and (q.startswith(("pandas", "datasets")) or call.method in datafiles.READERS):
        fmt = datafiles.READERS[short]
        arg = call.arg(0, "path_or_buf" if fmt == "json" else "filepath_or_buffer")
        if arg is None:
            arg = call.arg(0, "path") or call.arg(0, "path_or_paths")
        if fmt == "json" and facts.kw_value(call, "lines", default=False) is True:
            fmt = "jsonl"
    elif short == "load_dataset" and q.startswith("datasets"):
        builder = facts.arg_value(call, 0, "path")
        if builder not in datafiles.BUILDERS:
            return None, ""
        fmt, arg = datafiles.BUILDERS[builder], call.kwargs.get("data_files")
    else:
        return None, ""
    if arg is None:
        return None, ""
    value = facts.value(arg.value, call.scope, order=call.order)
    if isinstance(value, dict):
        value = value.get("train", next(iter(value.values()), None))
    if isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str) or "://" in value:
        return None, ""
    path = _colab_relative(value, facts.base_dir)
    if not path.is_absolute() and facts.base_dir is not None:
        facts.depends_on(facts.base_dir / path)  # cached results must notice it appear or change
        if (facts.base_dir / path).is_file():
            path = facts.base_dir / path
    facts.depends_on(path)
    if fmt == "json" and path.suffix == ".jsonl":
        fmt = "jsonl"
    separator = _separator(call)
    if fmt in datafiles.DELIMITED and separator is not None:
        fmt = datafiles.DELIMITED_BY.get(facts.value(separator.value, call.scope, order=call.order))
        if fmt is None:
            return None, ""  # a regular expression, whitespace, or a separator not known: the rows cannot be split as pandas splits them
    elif fmt == "csv" and path.suffix.lower() in (".tsv", ".tab"):
        return None, ""  # pandas (and datasets' csv builder) split on commas whatever the suffix: not the rows the name suggests
    try:
        if not path.is_file() or path.stat().st_size > datafiles.MAX_BYTES:
            return None, ""
    except OSError:
        return None, ""
    return path, fmt


# Colab runs a notebook in /content, where the files uploaded beside it land: `/content/train.csv` there is what
# `train.csv` is beside the notebook in its repository (a Drive mount, /content/drive, and Colab's own sample_data are not).
_COLAB_HOME = "/content/"
_COLAB_ELSEWHERE = ("/content/drive/", "/content/gdrive/", "/content/sample_data/")


def _colab_relative(value: str, base_dir: Path | None) -> Path:
    """`value` as a path; a Colab working-directory path (`/content/train.csv`) relative to the script's folder when that
    folder holds the file."""
    if base_dir is not None and value.startswith(_COLAB_HOME) and not value.startswith(_COLAB_ELSEWHERE):
        relative = Path(value[len(_COLAB_HOME):])
        if relative.parts and ".." not in relative.parts and (base_dir / relative).is_file():
            return relative
    return Path(value)


def index_taken_from_rows(call: Call) -> bool:
    """pandas may make the leading fields of a row its index: the read names no `index_col=` or `usecols=` (pandas
    `TextReader._get_header`: `allow_leading_cols` unless `index_col=False`; `usecols` counts its own columns; datasets'
    csv builder passes its keywords on to `read_csv`)."""
    return not ({"index_col", "usecols"} & set(call.kwargs)) and not call.has_double_star


def _separator(call: Call) -> cst.Arg | None:
    """The `sep=`/`delimiter=` argument of a delimited-text read (pandas `read_csv(filepath_or_buffer, sep, ...)`,
    `read_table`; datasets `from_csv(path_or_paths, split, ...)` passes its keywords on to `read_csv`)."""
    if call.short in ("read_csv", "read_table"):
        return call.arg(1, "sep") or call.kwargs.get("delimiter")
    return call.kwargs.get("sep") or call.kwargs.get("delimiter")


def read_header(facts: Facts, frame: cst.Name, scope: Any, order: int | None) -> list[str] | None:
    """The header of the local file `frame` is bound to by one plain read (no keyword that renames or shifts it)."""
    made = facts.definition(frame, scope, order)
    read = facts.call_of(made.value) if made is not None and isinstance(made.value, cst.Call) else None
    if read is None or read.has_double_star or set(read.kwargs) - PLAIN_READ_KEYWORDS - {"sep", "delimiter"}:
        return None
    path, fmt = data_file_of(facts, read)
    return datafiles.header(path, fmt) if path is not None else None
