"""Label counts from the local data files a script loads, read in bounded time and memory."""

from __future__ import annotations

import csv
import json
import time
from collections import Counter
from pathlib import Path
MAX_BYTES = 64 * 2**20
MAX_ROWS = 2_000_000
MAX_SECONDS = 2.0
READERS = {
    "read_csv": "csv", "read_table": "tsv", "read_json": "json", "read_parquet": "parquet",
    "from_csv": "csv", "from_json": "json", "from_parquet": "parquet",
}
BUILDERS = {"csv": "csv", "json": "json", "parquet": "parquet"}
# Delimited text: the format each one-character `sep=`/`delimiter=` of `pd.read_csv` names, and its delimiter.
DELIMITERS = {"csv": ",", "tsv": "\t", "ssv": ";", "psv": "|"}
DELIMITED = frozenset(DELIMITERS)
DELIMITED_BY = {delimiter: fmt for fmt, delimiter in DELIMITERS.items()}


def label_counts(path: Path, fmt: str, columns: list[str]) -> tuple[Counter, str] | None:
    """Counts of the first column in `columns` that the file has, or None if it cannot be read quickly."""
    try:
        if fmt in DELIMITED:
            return _csv(path, columns, DELIMITERS[fmt])
        if fmt == "jsonl":
            return _records(_jsonl(path), columns)
        if fmt == "json":
            return _json(path, columns)
        if fmt == "parquet":
            return _parquet(path, columns)
    except (OSError, ValueError, UnicodeDecodeError, csv.Error, RecursionError):
        return None
    return None


def header(path: Path, fmt: str) -> list[str] | None:
    """The column names of a delimited file's first row (what `pd.read_csv` names its columns), or None."""
    if fmt not in DELIMITED:
        return None
    try:
        with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:
            return next(csv.reader(handle, delimiter=DELIMITERS[fmt]), None)
    except (OSError, csv.Error):
        return None


def _pick(available, columns):
    return next((c for c in columns if c in available), None)


def _hashable(value):
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


def _csv(path: Path, columns: list[str], delimiter: str):
    deadline = time.monotonic() + MAX_SECONDS
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:  # a BOM is no part of the header (pandas drops it too)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            return None
        column = _pick(header, columns)
        if column is None:
            return None
        index = header.index(column)
        counts: Counter = Counter()
        for number, row in enumerate(reader):
            if number >= MAX_ROWS or (number % 10000 == 0 and time.monotonic() > deadline):
                return None
            if row == header:
                continue  # files concatenated with their headers (`cat a.csv b.csv`): a repeated header is no example
            if index < len(row):
                cell = row[index].strip()
                counts[int(cell) if cell.lstrip("-").isdigit() else cell] += 1
        if any(isinstance(value, int) for value in counts) and any(isinstance(value, str) and value for value in counts):
            return None  # integers beside text (a corrupted cell like `0+++`): pandas reads the column as strings, unknown
        return counts, column


def _jsonl(path: Path):
    deadline = time.monotonic() + MAX_SECONDS
    with path.open(encoding="utf-8-sig") as handle:
        for number, line in enumerate(handle):
            if number >= MAX_ROWS or (number % 10000 == 0 and time.monotonic() > deadline):
                raise ValueError("too large")
            if line.strip():
                yield json.loads(line)


def _records(records, columns):
    counts: Counter = Counter()
    column = None
    for record in records:
        if not isinstance(record, dict):
            return None
        if column is None:
            column = _pick(record, columns)
            if column is None:
                return None
        value = _hashable(record.get(column))
        if value is None:
            return None
        counts[value] += 1
    return (counts, column) if column else None


def _json(path: Path, columns):
    data = json.loads(path.read_text(encoding="utf-8-sig"))
    if isinstance(data, dict):
        if "data" in data and isinstance(data["data"], list):
            return _records(data["data"], columns)
        column = _pick(data, columns)
        values = data.get(column) if column else None
        if isinstance(values, dict):
            values = list(values.values())
        if isinstance(values, list) and all(_hashable(v) is not None for v in values):
            return Counter(values), column
        return None
    if isinstance(data, list):
        return _records(data, columns)
    return None


def _parquet(path: Path, columns):
    try:
        import pyarrow.parquet as pq  # only when a script reads a parquet file, and only if installed
    except ImportError:
        return None
    schema = pq.read_schema(path)
    column = _pick(schema.names, columns)
    if column is None:
        return None
    values = pq.read_table(path, columns=[column]).column(column).to_pylist()
    if not all(_hashable(v) is not None for v in values):
        return None
    return Counter(values), column
