"""Parent side: where a finding is lifted from. A file (or a notebook's code as it was linted) is read and parsed
again once, and a finding is matched to the nodes that contain its position; a value a probe needs that the script
does not pin down raises `CannotLift`, which becomes "could not run" with the reason. Shared by every lifter
(`lift.py`, `training_steps.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from bertlint import engine, notebook
from bertlint.config import Settings
from bertlint.facts import UNKNOWN, Call, Facts
from bertlint.report import Finding
from bertlint.target import target_version


class CannotLift(Exception):
    """The script does not pin down a value the probe needs; the message says which."""


@dataclass
class Site:
    """One parsed file (or a notebook's code as it was linted) and where its nodes are."""

    facts: Facts
    positions: Any  # node -> CodeRange
    version: tuple[int, ...]  # the target transformers version, as the rules saw it

    @classmethod
    def parse(cls, text: str, path: Path, version: tuple[int, ...]) -> Site:
        module = cst.parse_module(text)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return cls(Facts(module, text, path), positions, version)

    def covers(self, node: cst.CSTNode, finding: Finding) -> bool:
        rng: CodeRange | None = self.positions.get(node)
        if rng is None:
            return False
        start, end = (rng.start.line, rng.start.column + 1), (rng.end.line, rng.end.column + 1)
        return start <= (finding.line, finding.column) and (finding.end_line, finding.end_column) <= end

    def innermost(self, finding: Finding, calls: list[Call], what: str) -> Call:
        """The smallest of `calls` that contains the finding."""
        around = [c for c in calls if self.covers(c.node, finding)]
        if not around:
            raise CannotLift(f"no {what} at {finding.line}:{finding.column}")
        return min(around, key=lambda c: len(self.facts.text(c.node)))

    def value(self, call: Call, keyword: str, index: int | None = None, *, required: bool = True) -> Any:
        """A constant argument of `call`; CannotLift when it is absent (if required) or not constant."""
        arg = call.arg(index if index is not None else -1, keyword)
        if arg is None:
            if required:
                raise CannotLift(f"`{self.facts.text(call.node.func)}(...)` has no `{keyword}=`")
            return None
        value = self.facts.value(arg.value, call.scope, order=call.order)
        if value is UNKNOWN:
            raise CannotLift(f"`{keyword}={self.facts.text(arg.value)}` is not a constant in the script")
        return value


class Sites:
    """The sites findings are lifted from, each file read and parsed once; a notebook's finding is
    lifted from its code cells joined as they were linted, at its position there."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.texts: dict[str, str] = {}
        self.parsed: dict[tuple[str, str], Site] = {}

    def of(self, finding: Finding) -> tuple[Site, Finding]:
        """(the site, the finding at its position in it); CannotLift when the file changed since the lint."""
        path = Path(finding.path)
        try:
            text = self.texts.get(finding.path) or engine.decode(path.read_bytes()).text
        except (OSError, ValueError, SyntaxError) as exc:  # gone, or no longer decodes
            raise CannotLift(f"the file could not be read again: {exc}") from None
        self.texts[finding.path] = text
        source, placed = text, finding
        if finding.cell is not None:
            try:
                found = notebook.linted_module(text, finding)
            except notebook.NotebookError as exc:
                raise CannotLift(f"the notebook could not be read again: {exc}") from None
            if found is None:
                raise CannotLift(f"cell {finding.cell} is no longer a code cell of the notebook")
            source, placed = found
        key = (finding.path, source)
        if key not in self.parsed:
            try:
                self.parsed[key] = Site.parse(source, path, target_version(self.settings, path, text)[0])  # a notebook's install pin too
            except cst.ParserSyntaxError as exc:
                raise CannotLift(f"the file no longer parses: {exc.message}") from None
        return self.parsed[key], placed
