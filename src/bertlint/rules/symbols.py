"""Where a file reaches a versioned symbol of a library (BL604, BL606, BL612-BL616): an import, or `module.Symbol` uses."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from bertlint import knowledge
from bertlint.facts import Failure
from bertlint.versions import Lifecycle, Version, data, symbols

if TYPE_CHECKING:
    from bertlint.facts import Call, Facts


@dataclass(repr=False, eq=False)
class SymbolUse:
    """Where a file reaches a transformers symbol: an import alias, or `module.Symbol` attribute uses."""

    entry: Lifecycle
    name: str  # the symbol's own name ("AdamW")
    module: str  # "transformers", "transformers.optimization"
    node: cst.CSTNode  # where the finding sits: the import alias, else the first attribute use
    statement: cst.CSTNode | None  # the import statement line; None for attribute uses
    attributes: list[cst.Attribute]  # every `module.Symbol` use in the file

    def error(self, templates: dict[str, str]) -> str:
        """What the line raises once the symbol is gone: an import error, or an attribute error for `module.Symbol`."""
        if self.statement is None:
            key = "attribute_error"
        else:
            gone = self.module != "transformers" and _framework_module(self.module)
            key = "submodule_error" if gone and "submodule_error" in templates else "import_error"
        return templates[key].format(name=self.name, module=self.module)

    def raises(self, facts: "Facts", templates: dict[str, str], version: Version, library: str = "transformers") -> str:
        """What the line raises as written on the target `version`: an import stops at the first of its names that the
        target lacks (`from transformers import TFBertTokenizer, TFBertModel` raises on `TFBertTokenizer`), so at a
        later name the line raises that first name's error, said as such; else this symbol's own `error`."""
        own = self.error(templates)
        if self.statement is None or own != templates["import_error"].format(name=self.name, module=self.module) \
                or knowledge.exported_names(self.module) is None:
            return own
        for qualname, alias, statement in facts.import_nodes:
            if alias is self.node:
                break
            if statement is not self.statement or "." not in qualname:
                continue
            module, name = qualname.rsplit(".", 1)
            if module == self.module and not exported_at(module, name, version, library):
                first = templates["import_error"].format(name=name, module=module)
                return f"{first} (`{name}`, imported before `{self.name}`, is missing too)"
        return own

    @property
    def imported_by(self) -> cst.Import | cst.ImportFrom | None:
        """The import statement (of its line) whose names hold the alias; None for attribute uses."""
        body = self.statement.body if isinstance(self.statement, cst.SimpleStatementLine) else ()
        return next((s for s in body if isinstance(s, (cst.Import, cst.ImportFrom)) and not isinstance(s.names, cst.ImportStar)
                     and any(a is self.node for a in s.names)), None)

    def unread(self, facts: "Facts") -> str | None:
        """The help for an import whose binding the file never reads (`facts.unread_import`: the name is used nowhere
        else, or bound anew before every read, `from torch.optim import AdamW` after `from transformers import AdamW`):
        drop the name from the import, or delete the import where it is its only name; None for an import some read may
        see, or an attribute use."""
        from bertlint.facts import unread_import  # `facts.uses`, loaded by a run's first finding of a symbol

        imported_by = self.imported_by
        found = unread_import(facts, self.node) if imported_by is not None and not self.attributes else None
        if found is None:
            return None
        alone = len(imported_by.names) == 1
        head = "delete the import" if alone else f"drop `{found.name}` from the import"
        if not found.read:
            return f"{head}: the script never uses `{found.name}`" if alone else f"{head}: the script never uses it"
        if not isinstance(found.rebound, cst.SimpleStatementLine):
            return f"{head}: the script never reads it"
        return f"{head}: the script never reads it (`{facts.text(found.rebound).strip()}` binds `{found.name}` anew before every read)"

    def calls(self, facts: "Facts") -> list[Call]:
        """The file's calls of the symbol, in the order they run (`load_metric("rouge")`, `datasets.load_metric(...)`)."""
        return facts.calls_to(f"{self.module}.{self.name}")

    def call_in_place(self, facts: "Facts", spec: dict) -> list[str] | None:
        """How each call of the symbol reads as a call of its replacement with the file's own arguments (a row's `call`:
        `function`, the leading `positional` parameters both share, the `keywords` both take): `evaluate.load("glue",
        "mrpc")` for `load_metric("glue", "mrpc")`, distinct, in the order they run; None where the file makes no call
        or one passes an argument the replacement takes otherwise (a third positional, `*args`, another keyword)."""
        calls = self.calls(facts)
        if not calls or any(c.has_star_args or c.has_double_star or len(c.positional) > spec["positional"]
                            or any(k not in spec["keywords"] for k in c.kwargs) for c in calls):
            return None
        found: dict[str, None] = {}
        for call in calls:
            arguments = ", ".join(facts.text(a.with_changes(comma=cst.MaybeSentinel.DEFAULT)).strip() for a in call.node.args)
            found.setdefault(f"{spec['function']}({arguments})")
        return list(found)

    def failure(self, templates: dict[str, str], raises: bool, library: str = "transformers") -> Failure:
        """What the finding predicts: the error of `error` where the line raises, else nothing raised."""
        replacement = (self.entry.replacement or "").rsplit(".", 1)[-1]
        return Failure.of(self.error(templates) if raises else "", self.name, replacement, library=library)


def exported_at(module: str, name: str, version: Version, library: str = "transformers") -> bool:
    """Does `from module import name` import on the target `version` of `library`, as bertlint's tables tell? Some
    release exported it (data/exports.json), and no release up to the target removed it: neither a removal no rule
    reports (data/removed.json: `AutoModelWithLMHead` from 5.0) nor one of the library's symbol groups (`AdamW`)."""
    exported = knowledge.exported_names(module)
    if exported is None or name not in exported or knowledge.removed_import(module, name, {library: tuple(version)}):
        return False
    entries = (_match(symbols(group, library)[0], f"{module}.{name}", library) for group in data(library).get("symbols", {}))
    return not any(entry is not None and entry.status(version) == "removed" for entry in entries)


def _framework_module(module: str) -> bool:
    """Whether a transformers submodule is itself TensorFlow/Flax/Keras code (`modeling_tf_utils`,
    `optimization_tf`, `keras_callbacks`, `models.bert.modeling_flax_bert`), gone with that framework; a
    module that stays (`transformers.utils`, `transformers.models.bert`) only loses the name."""
    tokens = {t for part in module.split(".")[1:] for t in part.split("_")}
    return bool(tokens & {"tf", "flax", "keras"})


def symbol_uses(facts: "Facts", group: str, library: str = "transformers") -> list[SymbolUse]:
    """One use per symbol name of the group, the import first (a notebook importing it in two cells: reported once).
    A guarded import (`try: from transformers import AdamW` / `except ImportError: from torch.optim import AdamW`)
    is the report's to drop: `SymbolUse.failure` says what the line raises (facts/guards.py). A name that no release of
    the module ever exported (`knowledge.exported_names`: `TFDebertaV3ForSequenceClassification`, which a pattern
    such as `TF*` matches) has no lifecycle to tell: no use of it is returned."""
    entries, _ = symbols(group, library)
    found: dict[str, SymbolUse] = {}
    for qualname, alias, stmt in facts.import_nodes:
        entry = _match(entries, qualname, library)
        if entry is not None:
            module, name = qualname.rsplit(".", 1)
            found.setdefault(name, SymbolUse(entry, name, module, alias, stmt, []))
    for attribute, scope, _order in facts.attr_loads:
        qualname = facts.qualname(attribute, scope)
        entry = _match(entries, qualname, library) if qualname and qualname.rsplit(".", 1)[0] in facts.imports.values() else None
        if entry is not None:
            module, name = qualname.rsplit(".", 1)
            found.setdefault(name, SymbolUse(entry, name, module, attribute, None, [])).attributes.append(attribute)
    return list(found.values())


def _match(entries: tuple[Lifecycle, ...], qualname: str | None, library: str) -> Lifecycle | None:
    if not qualname or not qualname.startswith(library + "."):
        return None
    module, name = qualname.rsplit(".", 1)
    exported = knowledge.exported_names(module)
    if exported is not None and name not in exported:
        return None  # no release had it: neither removed nor deprecated
    return next((e for e in entries if fnmatch.fnmatchcase(name, e.name)), None)
