"""Regular expressions compiled when first used: most of the patterns of a module serve what a run may never meet (a
notebook's magics, an IPython prompt, a lock file, a source install); compiled at import, the ~35 of them that a lint
of a plain script never uses cost its start ~3 ms (of ~5 ms for all of bertlint's patterns)."""

from __future__ import annotations

import re
from typing import Any

# The methods of a compiled pattern that the first use puts on the `Lazy` itself: later calls are the pattern's own.
_METHODS = ("match", "fullmatch", "search", "findall", "finditer", "sub", "subn", "split")


class Lazy:
    """`re.compile(pattern, flags)`, compiled the first time one of its methods or attributes is asked for (`pattern`,
    the same string, before that)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet: the first use
        compiled = re.compile(self.pattern, self._flags)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)
