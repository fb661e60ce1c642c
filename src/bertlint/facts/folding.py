"""Constants folded the way Python computes them, beyond operators: the methods of `str` that read nothing but the
string and their constant arguments (`"a\\nb".splitlines()`, `line.strip()`), and `isinstance` of a constant (whose
type is the type it has when the code runs)."""

from __future__ import annotations

from typing import Any

from bertlint.facts.abstract import MAX_SEQ
from bertlint.facts.nodes import UNKNOWN

# str methods whose result depends on the string and the arguments alone (Python's str type; none pads to a width an
# argument gives, so no result is larger than the source's strings allow)
STR_METHODS = frozenset({
    "strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "capitalize", "swapcase", "split", "rsplit",
    "splitlines", "replace", "startswith", "endswith", "join", "removeprefix", "removesuffix", "count", "find", "rfind",
    "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "partition", "rpartition",
})

# the builtin types `isinstance` is asked about, by qualified name
TYPES = {f"builtins.{t.__name__}": t for t in (str, int, float, bool, list, tuple, dict, set, bytes, complex, frozenset, range)}


def str_method(receiver: str, method: str, args: list, kwargs: dict) -> Any:
    """`receiver.method(*args, **kwargs)` on constants, else UNKNOWN."""
    if method not in STR_METHODS or any(a is UNKNOWN for a in (*args, *kwargs.values())):
        return UNKNOWN
    if method == "join" and not (len(args) == 1 and isinstance(args[0], (list, tuple)) and all(isinstance(s, str) for s in args[0])):
        return UNKNOWN
    try:
        found = getattr(receiver, method)(*args, **kwargs)
    except (TypeError, ValueError):
        return UNKNOWN
    return found if not isinstance(found, (str, list)) or len(found) <= MAX_SEQ else UNKNOWN


def is_instance(value: Any, types: list[str | None]) -> Any:
    """`isinstance(value, types)` for a constant value and builtin types named by qualified name, else UNKNOWN."""
    if value is UNKNOWN or not types or any(t not in TYPES for t in types):
        return UNKNOWN
    return isinstance(value, tuple(TYPES[t] for t in types))
