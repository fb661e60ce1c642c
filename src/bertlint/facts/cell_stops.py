"""A notebook's code cell that does not compile (`stops` asks it per statement): Jupyter runs each cell alone, so such a
cell raises SyntaxError when its turn comes, and Run All stops there. The notebook joins its cells into one module and
stands such a cell there as one placeholder statement, at a line `Runtime.uncompiled` names; only cells that certainly
do not compile in IPython (`ipython.untransformed`), not those bertlint's own reading of IPython syntax may miss.
"""

from __future__ import annotations

import libcst as cst

from bertlint.facts.model import Model, per_file


@per_file
def uncompiled_cells(facts: Model) -> frozenset[cst.CSTNode]:
    """The module's statements that stand for a code cell that does not compile: its top-level statements that start
    at a line of `facts.runtime.uncompiled`. Lines counted once over the module's statements, up to the last such line."""
    wanted = set(facts.runtime.uncompiled)
    if not wanted:
        return frozenset()
    found: set[cst.CSTNode] = set()
    line = 1 + len(facts.module.header)
    last = max(wanted)
    for stmt in facts.module.body:
        if line > last:
            break
        if isinstance(stmt, cst.SimpleStatementLine) and line + len(stmt.leading_lines) in wanted:
            found.add(stmt)
        line += _breaks(facts.module.code_for_node(stmt))
    return frozenset(found)


def _breaks(text: str) -> int:
    """The line breaks of `text`, `\\r\\n`, `\\r` and `\\n` alike."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")
