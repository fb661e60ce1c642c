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


# Cells pandas reads as missing by default (pandas `read_csv(na_values=...)`: "By default the following values are
# interpreted as NaN: '', '#N/A', '#N/A N/A', '#NA', '-1.#IND', '-1.#QNAN', '-NaN', '-nan', '1.#IND', '1.#QNAN', '<NA>',
# 'N/A', 'NA', 'NULL', 'NaN', 'None', 'n/a', 'nan', 'null'"), and cells it may read as booleans (`true_values` /
# `false_values`, and its own True/False spellings): exact values give NaN for the first and refuse the second.
MISSING = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL",
    "NaN", "None", "n/a", "nan", "null",
})
BOOLEAN = frozenset({"True", "False", "TRUE", "FALSE", "true", "false"})
NAN = float("nan")  # one object: a Counter's key for every missing cell (NaN equals nothing, itself included)


def label_counts(path: Path, fmt: str, columns: list[str], *, exact: bool = False, index: bool = True) -> tuple[Counter, str] | None:
    """Counts of the first column in `columns` that the file has, or None if it cannot be read quickly. `exact`: each
    delimited cell as the value pandas gives it (an int, a float, the text unstripped; None where one is missing or a
    boolean), not only its class; `index`: pandas may take the leading fields of a row as its index (no `index_col=`,
    `usecols=`): where the first row under the header has k fields more than the header, the header names the fields
    after those k (pandas _libs/parsers.pyx `TextReader._get_header`: `field_count = self.parser.line_fields[data_line]`,
    `elif self.allow_leading_cols and passed_count < field_count: self.leading_cols = field_count - passed_count`)."""
    try:
        if fmt in DELIMITED:
            return _csv(path, columns, DELIMITERS[fmt], exact, index)
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


def _csv(path: Path, columns: list[str], delimiter: str, exact: bool = False, index: bool = True):
    deadline = time.monotonic() + MAX_SECONDS
    with path.open(newline="", encoding="utf-8-sig", errors="replace") as handle:  # a BOM is no part of the header (pandas drops it too)
        reader = csv.reader(handle, delimiter=delimiter)
        header = next(reader, None)
        if not header:
            return None
        column = _pick(header, columns)
        if column is None:
            return None
        at, leading = header.index(column), None
        cells: Counter = Counter()
        for number, row in enumerate(reader):
            if number >= MAX_ROWS or (number % 10000 == 0 and time.monotonic() > deadline):
                return None
            if leading is None:
                leading = max(len(row) - len(header), 0)
                if leading and not index:
                    return None  # the fields an explicit `index_col=`/`usecols=` takes from a ragged file: not followed
            if row == header:
                continue  # files concatenated with their headers (`cat a.csv b.csv`): a repeated header is no example
            if at + leading < len(row):
                cells[row[at + leading]] += 1
        counts = _typed(cells) if exact else _classes(cells)
        return (counts, column) if counts is not None else None


def _classes(cells: Counter) -> Counter | None:
    """The classes of a column's cells: an integer for a cell of digits, else the text stripped."""
    counts: Counter = Counter()
    for cell, n in cells.items():
        cell = cell.strip()
        counts[int(cell) if cell.lstrip("-").isdigit() else cell] += n
    if any(isinstance(value, int) for value in counts) and any(isinstance(value, str) and value for value in counts):
        return None  # integers beside text (a corrupted cell like `0+++`): pandas reads the column as strings, unknown
    return counts


def _typed(cells: Counter) -> Counter | None:
    """The values pandas makes of a column's cells: integers, or numbers (floats: also where a cell is missing), or
    text as written, a missing cell NaN; None where a cell may be a boolean, is padded with spaces, or numbers stand
    beside text (the dtype pandas infers is not certain)."""
    if any(cell in BOOLEAN or cell != cell.strip() for cell in cells):
        return None
    numbers = {cell: _number(cell) for cell in cells if cell not in MISSING}
    missing = sum(n for cell, n in cells.items() if cell in MISSING)
    if all(value is None for value in numbers.values()):
        counts = Counter({cell: n for cell, n in cells.items() if cell not in MISSING})
    elif any(value is None for value in numbers.values()):
        return None
    else:
        floats = missing or any(isinstance(value, float) for value in numbers.values())
        counts = Counter()
        for cell, value in numbers.items():
            counts[float(value) if floats else value] += cells[cell]
    if missing:
        counts[NAN] = missing
    return counts


def _number(cell: str) -> int | float | None:
    if cell.lstrip("-").isdigit():
        return int(cell)
    try:
        return float(cell) if any(c.isdigit() for c in cell) and cell.lower().lstrip("+-") not in ("inf", "infinity") else None
    except ValueError:
        return None


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
