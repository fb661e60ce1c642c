"""f-strings folded the way Python formats them: `f"{user}/{name}"` is the string its constant parts make.

A replacement field formats its value with `format(value, spec)` after the conversion (`!s` str, `!r` repr, `!a`
ascii; Python reference, "Formatted string literals"). Only values whose formatting cannot depend on anything but
the value are folded (str, int, float, bool, None); a field with `=` (self-documenting: the source text is printed),
a spec with a field of its own, or text with a backslash escape leaves the f-string unknown.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from bertlint.facts.nodes import UNKNOWN

FOLDED = (str, int, float, bool, type(None))
CONVERSIONS: dict[str | None, Callable[[Any], Any]] = {None: lambda v: v, "s": str, "r": repr, "a": ascii}


def formatted(node: cst.FormattedString, const: Callable[[cst.BaseExpression], Any]) -> Any:
    """The string `node` makes, each field's expression valued by `const`; UNKNOWN where one part is not known."""
    if "b" in node.prefix.lower():
        return UNKNOWN
    raw = "r" in node.prefix.lower()
    out = []
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            text = _text(part.value, raw)
            if text is None:
                return UNKNOWN
            out.append(text)
            continue
        if part.equal is not None or part.conversion not in CONVERSIONS:
            return UNKNOWN
        spec = [_text(p.value, raw) if isinstance(p, cst.FormattedStringText) else None for p in part.format_spec or ()]
        value = const(part.expression)
        if None in spec or value is UNKNOWN or not isinstance(value, FOLDED):
            return UNKNOWN  # a field in the spec, an escape
        try:
            out.append(format(CONVERSIONS[part.conversion](value), "".join(spec)))
        except (ValueError, TypeError):
            return UNKNOWN
    return "".join(out)


def _text(source: str, raw: bool) -> str | None:
    """The characters a literal part of an f-string stands for: `{{` and `}}` are braces; None with an escape."""
    if "\\" in source and not raw:
        return None
    return source.replace("{{", "{").replace("}}", "}")
