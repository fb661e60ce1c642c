"""The rule framework: a rule is one module `blNNN.py` holding one `Rule` subclass.

A rule is a small query over `Facts`; it reports through its `Context` and never walks the tree.
Code, name, severity and fix safety live on the class; the reference page is `rules/BLNNN.md`
(tests check that both agree). Adding a rule never means touching a registry.

Which rules run by default is decided by measurement: `data/precision.json` holds each code's
judged findings on a corpus of public scripts (written by `benchmarks/precision/harness.py --write`),
and a rule is on by default only when it is exact by construction (`Rule.exact`) or measured right
at least `MIN_PRECISION` of the time over at least `MIN_JUDGED` findings of all corpora together, with
no corpus of `CORPUS_MIN_JUDGED` or more findings below `CORPUS_MIN_PRECISION`; the others are *preview*
rules, which run only with `--preview` / `preview = true` (as in ruff).
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable

if TYPE_CHECKING:  # annotations only: a run the cache answers never loads libcst
    import libcst as cst

    from bertlint.config import Settings
    from bertlint.facts import Facts
    from bertlint.facts.guards import Failure


@dataclass(repr=False, eq=False)
class Replacement:
    """Replace `node`'s text with `new` (a node or source text); `after=True` inserts after it instead."""

    node: cst.CSTNode
    new: cst.CSTNode | str
    after: bool = False


@dataclass(repr=False, eq=False)
class Report:
    """What a rule reports at a node, before positions and suppressions are applied."""

    rule: "Rule"
    node: cst.CSTNode
    message: str
    help: str
    severity: str
    fix: tuple[str, str, list[Replacement]] | None  # (applicability, message, replacements)
    anchor: cst.CSTNode | None = None  # the statement whose first line may carry a suppression
    runs: cst.CSTNode | None = None  # where what is reported happens, when not at `node` (whether it runs)


@dataclass(repr=False, eq=False)
class Context:
    """What a rule sees: the file's facts, the settings, and the target transformers version (and, in
    `libraries`, the other libraries' targets)."""

    facts: "Facts"
    settings: "Settings"
    version: tuple[int, ...]
    version_source: str
    reports: list[Report] = field(default_factory=list)
    rule: "Rule | None" = None
    libraries: dict[str, tuple[tuple[int, ...], str]] = field(default_factory=dict)  # library -> (release, source)

    def target(self, library: str) -> tuple[tuple[int, ...], str]:
        """(release, where it came from) of `library` for this file; transformers' is `version`/`version_source`."""
        if library == "transformers":
            return self.version, self.version_source
        if library in self.libraries:
            return self.libraries[library]
        from bertlint.versions import latest  # a caller that resolved transformers only (an API user)

        return latest(library), "the latest release known to bertlint"

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
        failure: "Failure | None" = None,
        runs: cst.CSTNode | None = None,
    ) -> None:
        """Report a finding; a drift finding states the `failure` it predicts, and is dropped where the file guards
        its line against exactly that (facts/guards.py: a feature test, a `try`, a version branch not taken). `runs`:
        where it happens when that is not where the file spells it (the call that spreads a dict whose key is
        reported): its guards, whether it runs and a suppression on its statement count."""
        rule = self.rule
        assert rule is not None
        if failure is not None:
            from bertlint.facts.guards import covered  # here: a run the cache answers never loads libcst

            if covered(self.facts, runs or node, failure, self._release):
                return
        fix_tuple = None
        if fix:
            applicability = "unsafe" if (unsafe if unsafe is not None else rule.fix == "unsafe") else "safe"
            fix_tuple = (applicability, fix_message or rule.fix_title, fix)
        self.reports.append(
            Report(rule, node, message, help or rule.help, severity or rule.severity, fix_tuple, self.facts.statement_of(runs or node), runs)
        )

    def version_text(self) -> str:
        return ".".join(str(p) for p in self.version)

    def _release(self, library: str) -> tuple[int, ...] | None:
        """The target release of `library` as plain numbers; None where it cannot be known (a fork's branch)."""
        from bertlint.versions import Unknown

        release = self.target(library)[0]
        return None if isinstance(release, Unknown) else tuple(release)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    summary: ClassVar[str]  # one line: what it finds
    help: ClassVar[str] = ""  # default "what to do" line
    fix: ClassVar[str | None] = None  # None | "safe" | "unsafe"
    fix_title: ClassVar[str] = ""
    needs: ClassVar[tuple[str, ...]] = ("transformers",)  # skip the rule unless one of these roots is imported
    # Why the rule's findings are right by construction (its check is the library's own signature or
    # table for the target version), which puts it in the default set without a measured precision;
    # empty: the rule is judged by its measured precision. Copied into data/precision.json by the harness.
    exact: ClassVar[str] = ""
    # The finding says its own line raises or is ignored when it runs (an API the target release lacks, a Trainer that
    # refuses its arguments): after a statement that certainly stops the run it cannot happen. The other rules judge
    # the training the file sets up, which a name left undefined in a snippet or a file being written does not change.
    fails_at_its_line: ClassVar[bool] = False

    registry: ClassVar[dict[str, type["Rule"]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "code" in cls.__dict__:
            Rule.registry[cls.code] = cls

    def check(self, ctx: Context) -> None:  # pragma: no cover - every rule overrides it
        raise NotImplementedError


_INSTANCES: dict[type[Rule], Rule] = {}  # the one instance of each rule class


def _rule(code: str) -> Rule:
    if code not in Rule.registry:
        importlib.import_module(f"{__name__}.{code.lower()}")
    cls = Rule.registry[code]
    if cls not in _INSTANCES:
        _INSTANCES[cls] = cls()
    return _INSTANCES[cls]


@functools.cache
def all_rules() -> dict[str, Rule]:
    """Import every `blNNN` module once and return code -> rule instance, sorted by code."""
    for name in _rule_modules():
        importlib.import_module(f"{__name__}.{name}")
    return {code: _rule(code) for code in sorted(Rule.registry)}


def selected_rules(codes: Iterable[str]) -> list[tuple[str, Rule]]:
    """(code, rule) of the rules among `codes`, sorted by code, importing only their modules: a default run selects
    a third of the rules (the others are in preview), and a one-file run need not load the rest."""
    modules = set(_rule_modules())
    return [(code, _rule(code)) for code in sorted(codes) if code in Rule.registry or code.lower() in modules]


ENGINE_CODES = {
    "BL901": ("syntax-error", "error", "The file (or notebook cell) does not compile."),
    "BL902": ("unused-suppression", "info", "A suppression comment names a bertlint code that suppresses nothing."),
}
ENGINE_EXACT = {
    "BL901": "the finding is the parser's own verdict: Python's, or bertlint's parser saying it cannot read a file Python compiles",
    "BL902": "the finding is bertlint's own record of which suppressions suppressed something",
}
# A measured rule is on by default from this precision over at least this many judged findings (all
# corpora together), provided no single corpus with at least CORPUS_MIN_JUDGED of its findings judged
# measures it below CORPUS_MIN_PRECISION (a rule right on our code and wrong on strangers' stays preview).
MIN_PRECISION = 0.95
MIN_JUDGED = 30
CORPUS_MIN_JUDGED = 10
CORPUS_MIN_PRECISION = 0.90


@functools.cache
def _rule_modules() -> tuple[str, ...]:
    """The `blNNN` modules of the package, listed once (a settings load asks four times), sorted; from the folder's
    listing, as the package is always on disk: `pkgutil` (with `importlib.util`) costs a one-file run ~1.5 ms to import."""
    stems = sorted(name[:-3] for name in os.listdir(__path__[0]) if name.endswith(".py"))
    return tuple(stem for stem in stems if stem.startswith("bl") and stem[2:].isdigit())


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


def exact_reason(code: str) -> str:
    """Why `code` is exact by construction, read off the rule (imports it); empty when it is measured."""
    return ENGINE_EXACT[code] if code in ENGINE_CODES else all_rules()[code].exact


@functools.cache
def precision_data() -> dict[str, Any]:
    """`data/precision.json`: the corpus, and per code its judged findings and exactness."""
    from pathlib import Path

    return json.loads(Path(__file__).parent.parent.joinpath("data", "precision.json").read_text(encoding="utf-8"))


def measured(code: str) -> dict[str, Any]:
    """`{"judged", "right", "precision", "exact"}` of `code`; a code the measurement lacks counts as unjudged."""
    return precision_data()["rules"].get(code, {"judged": 0, "right": 0, "precision": None, "exact": ""})


def preview_reason(code: str) -> str | None:
    """Why `code` is a preview rule (off unless preview is on), or None for a default rule.
    Read from precision.json alone: resolving settings imports no rule."""
    figures = measured(code)
    if figures["exact"]:
        return None
    judged, right = figures["judged"], figures["right"]
    if judged < MIN_JUDGED:
        return (f"only {judged} of its findings were judged on the corpus (a default rule needs at least {MIN_JUDGED})"
                if judged else "it has not fired on the corpus, so its precision is unmeasured")
    if right / judged < MIN_PRECISION:
        return f"its measured precision {right / judged:.2f} ({right} of {judged} findings right) is below {MIN_PRECISION}"
    for name, part in figures.get("corpora", {}).items():
        if part["judged"] >= CORPUS_MIN_JUDGED and part["right"] / part["judged"] < CORPUS_MIN_PRECISION:
            return (f"on the {name} corpus its precision {part['right'] / part['judged']:.2f} ({part['right']} of "
                    f"{part['judged']} findings right) is below {CORPUS_MIN_PRECISION}")
    return None


def preview_codes() -> frozenset[str]:
    """The codes that run only in preview mode."""
    return frozenset(code for code in all_codes() if preview_reason(code) is not None)


def roots_imported(facts: "Facts", roots: Iterable[str]) -> bool:
    return facts.imported(*roots)
