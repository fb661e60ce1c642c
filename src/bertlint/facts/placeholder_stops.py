"""Probable stops, not certain ones (`stops` asks them per statement): a template's placeholder checkpoint
(`_placeholder_load`) or data file (`_placeholder_path`), its value followed through the value layer (a parameter's
from its call sites). A placeholder may name a folder or a file that exists, so such a stop silences only the findings
that say their own line fails.
"""

from __future__ import annotations

import re

import libcst as cst

from bertlint.facts.certain_runs import argument_value
from bertlint.facts.model import Model
from bertlint.facts.names import is_transformers_name
from bertlint.facts.nodes import literal, walk
from bertlint.patterns import Lazy

# Documentation placeholders given as a checkpoint (see `_placeholder_load`).
_PLACEHOLDER_PATH = re.compile(r"^(?:/?path/to/|<[^<>]*>$|your[_-])|/your[_-]", re.IGNORECASE)
_PLACEHOLDER = re.compile(_PLACEHOLDER_PATH.pattern + r"|^(?:gpt-3\.5-turbo|gpt-4|text-davinci-\d+)(?:$|-)", re.IGNORECASE)
# Loaders that read the file they are given, and raise FileNotFoundError when it is not there: qualified name -> the
# (position, keyword) of the path. `open` in a reading mode (CPython); pandas' readers (`get_handle`/`stat`);
# `datasets.load_dataset(..., data_files=...)`: `data_files.resolve_pattern` raises FileNotFoundError ("Unable to find
# ...", `DataFilesNotFoundError` since datasets 2.15), its signature (path, name, data_dir, data_files).
_PATH_LOADERS = {"builtins.open": (0, "file"), "io.open": (0, "file"), "pandas.read_csv": (0, "filepath_or_buffer"),
                 "pandas.read_json": (0, "path_or_buf"), "pandas.read_parquet": (0, "path"), "pandas.read_excel": (0, "io"),
                 "datasets.load_dataset": (3, "data_files")}
# A variable's name quoted by mistake: the name of a name, path or id (`model_name`, `MODEL_ID`), never `model` or
# `output`, which a folder a previous script saved may well be called.
_QUOTED_VARIABLE = Lazy(r"^[A-Za-z_]\w*(?:name|_id|checkpoint)\w*$", re.IGNORECASE)


def placeholder(facts: Model, call: cst.Call, bound: dict[str, int] | None) -> bool:
    """Does `call` load a placeholder checkpoint or read a placeholder data file (`bound`: how often the file binds each
    name, None where that cannot be known)?"""
    return _placeholder_load(facts, call, bound) or _placeholder_path(facts, call)


def _placeholder_load(facts: Model, call: cst.Call, bound: dict[str, int] | None) -> bool:
    """`X.from_pretrained("<placeholder>")` of a transformers class, the checkpoint a documentation placeholder: the
    file is a template whose run as written stops there (OSError: no such checkpoint). Placeholders: `/path/to/...`,
    `path/to/...`, `<...>`, `your_...`, an OpenAI model name (`gpt-3.5-turbo`, `gpt-4`: no Hub checkpoint), and the
    quoted name of a variable of the file (`from_pretrained('model_name')` beside `model_name = ...`). A folder of that
    name beside the script could hold a checkpoint, so this is no certain crash: only findings that say their own
    line fails are dropped after it, and the quoted name counts only where the file never writes it as a string
    elsewhere (`save_pretrained('model_name')` makes the folder)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained" and call.args and call.args[0].keyword is None):
        return False
    if not is_transformers_name(facts.qualname(func)):
        return False
    text = literal(call.args[0].value)
    if not isinstance(text, str):
        text = argument_value(facts, call, call.args[0].value)
        return isinstance(text, str) and _PLACEHOLDER.search(text) is not None
    if _PLACEHOLDER.search(text):
        return True
    return bound is not None and text in bound and _QUOTED_VARIABLE.search(text) is not None and _string_count(facts, text) == 1


def _placeholder_path(facts: Model, call: cst.Call) -> bool:
    """A loader (`_PATH_LOADERS`) given a documentation placeholder path (`/path/to/...`, `path/to/...`, `<...>`,
    `your_...`), its value followed through the value layer (a parameter's value from its call sites): the run as
    written stops there with FileNotFoundError, unless the user made a file of that name (so probable, like a
    placeholder checkpoint). `open` counts only in a reading mode."""
    found = _PATH_LOADERS.get(facts.qualname(call.func) or "")
    wrapped = facts.call_of(call)
    if found is None or wrapped is None:
        return False
    arg = wrapped.arg(*found)
    if arg is None:
        return False
    if found[1] == "file":
        mode = wrapped.arg(1, "mode")
        mode = "r" if mode is None else argument_value(facts, call, mode.value)
        if not isinstance(mode, str) or set(mode) & set("wax+"):
            return False
    paths = argument_value(facts, call, arg.value)
    paths = list(paths.values()) if isinstance(paths, dict) else [paths]
    paths = [p for item in paths for p in (item if isinstance(item, (list, tuple)) else [item])]
    return any(isinstance(p, str) and _PLACEHOLDER_PATH.search(p) is not None for p in paths)


def _string_count(facts: Model, text: str) -> int:
    return sum(1 for node in walk(facts.module) if isinstance(node, cst.SimpleString) and literal(node) == text)
