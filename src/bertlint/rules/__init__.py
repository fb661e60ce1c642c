"""The rule framework: a rule is one module `blNNN.py` holding one `Rule` subclass.

A rule is a small query over `Facts`; it reports through its `Context` and never walks the tree.
Code, name, severity and fix safety live on the class; the reference page is `rules/BLNNN.md`
(tests check that both agree). Adding a rule never means touching a registry.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

if TYPE_CHECKING:  # annotations only: a run the cache answers never loads libcst
    import libcst as cst

    from bertlint.config import Settings
    from bertlint.facts import Facts


@dataclass
class Replacement:
    """Replace `node`'s text with `new` (a node or source text); `after=True` inserts after it instead."""

    node: cst.CSTNode
    new: cst.CSTNode | str
    after: bool = False


@dataclass
class Report:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    help: str
    severity: str
    fix: tuple[str, str, list[Replacement]] | None  # (applicability, message, replacements)
    anchor: cst.CSTNode | None = None  # the statement whose first line may carry a suppression


@dataclass
class Context:
    """What a rule sees: the file's facts, the settings, and the target transformers version."""

    facts: "Facts"
    settings: "Settings"
    version: tuple[int, ...]
    version_source: str
    reports: list[Report] = field(default_factory=list)
    rule: "Rule | None" = None

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        *,
        help: str | None = None,
        severity: str | None = None,
        fix: list[Replacement] | None = None,
        fix_message: str = "",
        unsafe: bool | None = None,
    ) -> None:
        rule = self.rule
        assert rule is not None
        fix_tuple = None
        if fix:
            applicability = "unsafe" if (unsafe if unsafe is not None else rule.fix == "unsafe") else "safe"
            fix_tuple = (applicability, fix_message or rule.fix_title, fix)
        self.reports.append(
            Report(rule, node, message, help or rule.help, severity or rule.severity, fix_tuple, self.facts.statement_of(node))
        )

    def version_text(self) -> str:
        return ".".join(str(p) for p in self.version)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    summary: ClassVar[str]  # one line: what it finds
    help: ClassVar[str] = ""  # default "what to do" line
    fix: ClassVar[str | None] = None  # None | "safe" | "unsafe"
    fix_title: ClassVar[str] = ""
    needs: ClassVar[tuple[str, ...]] = ("transformers",)  # skip the rule unless one of these roots is imported

    registry: ClassVar[dict[str, type["Rule"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            Rule.registry[cls.code] = cls

    def check(self, ctx: Context) -> None:  # pragma: no cover - every rule overrides it
        raise NotImplementedError


@functools.cache
def all_rules() -> dict[str, Rule]:
    """Import every `blNNN` module once and return code -> rule instance, sorted by code."""
    for name in _rule_modules():
        importlib.import_module(f"{__name__}.{name}")
    return {code: Rule.registry[code]() for code in sorted(Rule.registry)}


ENGINE_CODES = {
    "BL901": ("syntax-error", "error", "The file (or notebook cell) does not parse."),
    "BL902": ("unused-suppression", "info", "A suppression comment names a bertlint code that suppresses nothing."),
}


def _rule_modules() -> list[str]:
    return [info.name for info in pkgutil.iter_modules(__path__) if info.name.startswith("bl") and info.name[2:].isdigit()]


def all_codes() -> list[str]:
    """Every code, read off the module names (`bl101.py` holds BL101; a test holds them to it) so
    that settings can be resolved without importing a rule, plus any rule class already defined."""
    return sorted({name.upper() for name in _rule_modules()} | set(Rule.registry) | set(ENGINE_CODES))


def describe(code: str) -> tuple[str, str, str, str | None]:
    """(name, severity, summary, fix) for any code, engine codes included."""
    if code in ENGINE_CODES:
        name, severity, summary = ENGINE_CODES[code]
        return name, severity, summary, ("safe" if code == "BL902" else None)
    rule = all_rules()[code]
    return rule.name, rule.severity, rule.summary, rule.fix


def roots_imported(facts: "Facts", roots: Iterable[str]) -> bool:
    return facts.imported(*roots)
