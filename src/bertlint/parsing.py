"""libcst's parse, without the check libcst runs on every node of the tree it parsed.

`libcst.parse_module` builds the tree by calling each node class, and each node's `__post_init__` validates it
(`CSTNode._validate`: parentheses balanced, whitespace made of whitespace, an operator spaced from a word): checks
meant for trees built by hand, which can only refuse what the parser has just read. libcst's own comment there says
the validation would better move out of the constructor so that a parse skips it. It costs a fifth of the parse
(150 files of the installed transformers: 6.3 s -> 5.0 s of CPU), and one of its checks raises a TypeError on valid
code (`() if 0 else(lambda:())`, LibCST issue #1061), which the lint would report as an internal error.

Nodes built while a parse runs (in another thread) go unchecked too; the check is put back when the parse ends,
raise or not, and never left off by two parses that overlap.
"""

from __future__ import annotations

import libcst as cst

_VALIDATE = cst.CSTNode.__dict__.get("__post_init__")


def _unchecked(self: cst.CSTNode) -> None:
    """A node the parser built: nothing to check."""


def parse_module(source: str) -> cst.Module:
    """`libcst.parse_module(source)`, its nodes not validated one by one (same tree, same errors from the parser)."""
    if _VALIDATE is None:  # a libcst that validates elsewhere: nothing to skip
        return cst.parse_module(source)
    cst.CSTNode.__post_init__ = _unchecked
    try:
        return cst.parse_module(source)
    finally:
        cst.CSTNode.__post_init__ = _VALIDATE
