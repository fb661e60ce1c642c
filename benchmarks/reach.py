"""Reach of the value layer on real code, without labels: at every site a rule asks about, did the evaluator resolve
the value, and where it did not, which construct stopped it?

The sites (each counted once per call):

- `forward.input_ids`, `forward.attention_mask`: a model forward's or `generate`'s ids and mask (an explicit argument,
  or the `**batch` it is called with) resolve to an object (an encoding's ids, a loader's batch, ...);
- `forward.labels`: the `labels=` of a forward resolves (an object or a constant);
- `optimizer.lr`, `training_args.learning_rate`: the rate passed resolves to a constant;
- `from_pretrained.checkpoint`: a model or tokenizer load's checkpoint resolves to a string;
- `tokenize.texts`: a tokenizer call's texts are known to be one text or several (`Facts.is_batch`);
- `tokenize.padding`, `tokenize.max_length`: the keyword passed resolves to a constant.

A keyword that is not passed (the library default applies, nothing to evaluate) is no site, unless the call passes
a `**mapping` whose keys are not known, which may hide it: then it is an unknown site stopped by `**kwargs` (a
keyword passed through a `**mapping` of known keys is the item it passes: `Values.given`). An unknown site is followed from the
expression through the bindings the file shows to the first construct the evaluator could not see through
(`stopper`): a parameter no call site explains, a `for` target, an attribute of an unknown object, a library call
(`json.load`, `yaml.safe_load`), ...

    python benchmarks/reach.py [DIR ...]              # default: /work/corpus and /work/corpus-community
    python benchmarks/reach.py --json reach.json      # also every site, for sampling
    python benchmarks/reach.py --sample 100 --seed 21 # print 100 unknown sites (seeded) with their code, to judge

Notebooks are read as their code cells joined (IPython syntax masked), like bertlint lints them.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterator

import libcst as cst

from bertlint.engine import positions_of
from bertlint.facts import UNKNOWN, Binding, Call, Instance, Facts, Scope, checkpoint_argument, dotted, is_model_call, iter_children, walk
from bertlint.facts.functions import enclosing_class, param_arguments
from bertlint.facts.instances import self_attribute_sources
from bertlint.ipython import cleanup, mask
from bertlint.notebook import NotebookError, parse

DEFAULT_CORPORA = (Path("/work/corpus"), Path("/work/corpus-community"))
_ITERATION_WRAPPERS = ("enumerate", "tqdm", "tqdm.tqdm", "zip", "tqdm.auto.tqdm")
MAX_FOLLOW = 8  # bindings followed back from an unknown site
COMMAND_LINE = "command-line option (no default, or a parser the evaluator does not see)"


@dataclass
class Site:
    path: str
    line: int
    kind: str
    resolved: bool
    construct: str = ""  # what stopped the evaluator (unknown sites)

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}:{self.kind}"


# ---------------------------------------------------------------------------------------------
# sources


def sources(roots: list[Path]) -> Iterator[tuple[Path, str, str]]:
    """(root, path, Python text) for every script and notebook under the roots."""
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if path.suffix == ".ipynb":
                text = _notebook_code(text)
                if text is None:
                    continue
            yield root, path, text


def _notebook_code(text: str) -> str | None:
    try:
        cells = parse(text).cells
    except NotebookError:
        return None
    chunks = []
    for cell in cells:
        masked = mask(cleanup(cell.source)[0])
        if masked is None:
            continue
        try:
            ast.parse(masked)
        except SyntaxError:
            continue
        chunks.append(masked if masked.endswith("\n") else masked + "\n")
    return "".join(chunks)


# ---------------------------------------------------------------------------------------------
# the sites of one file


def file_sites(facts: Facts, path: str) -> list[Site]:
    parents = {id(child): node for node in walk(facts.module) for child in iter_children(node)}
    stop = Stopper(facts, parents)
    found: list[tuple[cst.CSTNode, str, bool, str]] = []  # (node, kind, resolved, construct)

    def constant(call: Call, kind: str, expr: cst.BaseExpression | None, ok=lambda v: v is not UNKNOWN) -> None:
        if expr is None:
            if call.has_double_star:
                found.append((call.node, kind, False, "**kwargs"))
            return
        value = facts.value(expr, call.scope, order=call.order)
        found.append((call.node, kind, ok(value), "" if ok(value) else stop.why(expr, call.scope, call.order)))

    def keyword(call: Call, kind: str, name: str, index: int | None = None) -> None:
        expr = facts.given(call, -1 if index is None else index, name)  # a `**mapping` of known keys spread
        if expr is UNKNOWN:
            found.append((call.node, kind, False, "**kwargs"))
        elif expr is not None:
            constant(call, kind, expr)

    tokenizer_calls = {id(c.node) for c in facts.tokenizer_calls}
    training_args = {id(c.node) for c in facts.training_args}
    loads = {id(load.call.node): load for load in facts.model_loads if load.how == "pretrained"}
    tokenizer_loads = {id(c.node) for c in facts.tokenizer_loads if c.method == "from_pretrained"}
    for call in facts.calls:
        key = id(call.node)
        if key in loads or key in tokenizer_loads:
            arg = checkpoint_argument(call)
            constant(call, "from_pretrained.checkpoint", arg.value if arg is not None else None, lambda v: isinstance(v, str))
        if key in training_args:
            keyword(call, "training_args.learning_rate", "learning_rate")
        if key in tokenizer_calls:
            text = call.arg(0, "text") or call.kwargs.get("text_target")
            if text is not None and call.method not in ("batch_encode_plus", "encode_plus", "encode", "pad"):
                batch = facts.is_batch(text.value, call.scope, call.order)
                found.append((call.node, "tokenize.texts", batch is not UNKNOWN, "" if batch is not UNKNOWN else stop.why(text.value, call.scope, call.order)))
            keyword(call, "tokenize.padding", "padding")
            keyword(call, "tokenize.max_length", "max_length")
        made = facts.kind(call.node, call.scope, call.order)
        if made is not None and made.kind == "optimizer" and made.call is call:
            keyword(call, "optimizer.lr", "lr", 1)
        if is_model_call(facts, call):
            star = next((a for a in call.node.args if a.star == "**"), None)
            for index, name in ((0, "input_ids"), (1, "attention_mask")):
                arg = star or call.kwargs.get(name) or (call.arg(index) if call.method != "generate" or index == 0 else None)
                if arg is None:
                    continue
                held = facts.kind(arg.value, call.scope, call.order)
                found.append((call.node, f"forward.{name}", held is not None, "" if held is not None else stop.why(arg.value, call.scope, call.order)))
            if "labels" in call.kwargs:
                expr = call.kwargs["labels"].value
                held = facts.evaluate(expr, call.scope, call.order)
                found.append((call.node, "forward.labels", held is not UNKNOWN, "" if held is not UNKNOWN else stop.why(expr, call.scope, call.order)))
    positions = positions_of(facts.module, [node for node, *_ in found])
    return [Site(path, positions[node].start.line, kind, resolved, construct) for node, kind, resolved, construct in found]


# ---------------------------------------------------------------------------------------------
# what stopped the evaluator


def _attribute_of(base: Any) -> str:
    """The stopper of an unknown attribute of a known object, by what the object is: a command line's namespace (the
    option has no default, or is required), a namespace built by hand, the file's class or an instance of it, another
    object, a constant."""
    if isinstance(base, Binding):
        return f"attribute of a {base.kind}"
    if isinstance(base, Instance) and base.kind == "namespace":
        return "attribute of a namespace built by hand" if base.detail == "kwargs" else COMMAND_LINE
    if isinstance(base, Instance) and base.kind in ("class", "instance"):
        return "attribute of the file's class" if base.kind == "class" else "attribute of an instance of the file's class"
    return f"attribute of an object ({base.kind})" if isinstance(base, Instance) else "attribute of a constant"



class Stopper:
    """The first construct an unknown expression's value passes through that the evaluator does not see through,
    found by following the bindings the file shows (the evaluator's own view: `Facts.binding_events`)."""

    def __init__(self, facts: Facts, parents: dict[int, cst.CSTNode]):
        self.facts, self.parents = facts, parents

    def known(self, expr: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
        return self.facts.evaluate(expr, scope, order) is not UNKNOWN

    def why(self, expr: cst.BaseExpression, scope: Scope, order: int | None, depth: int = 0) -> str:
        if depth > MAX_FOLLOW:
            return "long chain of bindings"
        f = self.facts
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope, order, depth)
        if isinstance(expr, cst.Attribute):
            text = dotted(expr) or ""
            if text.startswith("self.") and text.count(".") == 1:  # (`self.tokenizer.model_max_length`: what stops `self.tokenizer`, or its attribute)
                found = self_attribute_sources(f, enclosing_class(scope), expr.attr.value)
                if found is None:
                    return "self attribute (bound where the file does not show how, or not in a class of the file)"
                if not any(found):
                    return "self attribute no code of the file binds (a library base's)"
                if len(found.assigned) == 1 and not found.class_level and not found.getters:
                    value, owner, at = found.assigned[0]
                    return self.why(value, owner, at, depth + 1)  # `self.x = x` in `__init__`: what stops `x`
                return "self attribute bound at several places (unknown, or disagreeing)"
            if self._parsed(expr.value, scope, order):
                return COMMAND_LINE
            if not self.known(expr.value, scope, order):
                return self.why(expr.value, scope, order, depth + 1)
            return _attribute_of(f.evaluate(expr.value, scope, order))
        if isinstance(expr, cst.Subscript):
            if not self.known(expr.value, scope, order):
                return self.why(expr.value, scope, order, depth + 1)
            base = f.evaluate(expr.value, scope, order)
            return f"subscript of a {base.kind}" if isinstance(base, Binding) else "subscript with an unknown key"
        if isinstance(expr, cst.Call):
            return self._call(expr, scope, order, depth)
        if isinstance(expr, (cst.BinaryOperation, cst.BooleanOperation, cst.Comparison, cst.UnaryOperation, cst.IfExp)):
            for child in iter_children(expr):
                if isinstance(child, cst.BaseExpression) and not self.known(child, scope, order):
                    return self.why(child, scope, order, depth + 1)
            return {cst.BooleanOperation: "and/or", cst.Comparison: "comparison"}.get(type(expr), "operator on known operands")
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict)):
            return "display of unknown elements"
        if isinstance(expr, cst.DictComp):
            return "dict comprehension" + (" over .items()" if isinstance(expr.for_in.iter, cst.Call) and dotted(expr.for_in.iter.func) and
                                           dotted(expr.for_in.iter.func).endswith(".items") else "")
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            return "comprehension"
        if isinstance(expr, (cst.FormattedString,)):
            return "f-string"
        if isinstance(expr, cst.Lambda):
            return "lambda"
        if isinstance(expr, cst.Await):
            return "await"
        return type(expr).__name__

    def _name(self, name: str, scope: Scope, order: int | None, depth: int) -> str:
        f = self.facts
        if name in ("True", "False", "None"):
            return "constant"
        owner, events = f.binding_events(name, scope, order)
        if owner is None:
            return "unbound name (builtin, star import or another cell)"
        if not events:
            events = owner.events.get(name, [])
        if not events:
            if name in owner.params:
                return self._param(owner, name, depth)
            return "name bound after its use"
        binders = [e for e in events if e.op in ("assign", "for", "import", "def")]
        last = binders[-1] if binders else events[-1]
        mutations = [e for e in events[events.index(last) + 1:] if e.op not in ("assign", "for", "import", "def")]
        if last.op == "import":
            return "imported name"
        if last.op == "def":
            return "function or class object"
        if last.op == "for":
            iterable = self._unwrapped(last.value, owner, last.order)
            if iterable is not None and not self.known(iterable, owner, last.order):
                return self.why(iterable, owner, last.order, depth + 1)  # the iterable is where it stops
            return "for target" + self._iterated(last.value)
        parent = self.parents.get(id(last.value)) if last.value is not None else None
        if isinstance(parent, cst.WithItem):
            return "with target"
        if last.op == "assign" and last.value is not None and last.index is None and not self.known(last.value, owner, last.order):
            return self.why(last.value, owner, last.order, depth + 1)  # the value bound is where it stops
        if len(binders) > 1 and any(e.conditional for e in binders):
            return "bindings joined over branches"
        if last.conditional and owner.kind != "module" or last.loops:
            return "binding inside a branch or loop"
        if mutations:
            return f"mutation ({mutations[0].op})"
        if last.value is None:
            return "unpacking (star or nested target)"
        if last.index is not None:
            return "unpacking of a " + self._made(last.value, owner, last.order)
        if self.known(last.value, owner, last.order):
            return "binding known, the read is not (order, scope or join)"
        return self.why(last.value, owner, last.order, depth + 1)

    def _parsed(self, base: cst.BaseExpression, scope: Scope, order: int | None) -> bool:
        """`base` is a name bound to what a command-line parser returns (`parser.parse_args()`, dataclasses)."""
        if not isinstance(base, cst.Name):
            return False
        _, events = self.facts.binding_events(base.value, scope, order)
        value = events[-1].value if events else None
        call = self.facts.call_of(value) if isinstance(value, cst.Call) else None
        return call is not None and (call.method or call.short or "") in ("parse_args", "parse_known_args", "parse_args_into_dataclasses", "parse_dict", "parse_yaml_file", "parse_json_file")

    def _unwrapped(self, iterable: cst.BaseExpression | None, scope: Scope, order: int | None) -> cst.BaseExpression | None:
        """What a loop iterates under `enumerate`, `tqdm` and `zip` (of `zip`, the first argument the evaluator does not
        know, else the first)."""
        while isinstance(iterable, cst.Call) and iterable.args and dotted(iterable.func) in _ITERATION_WRAPPERS:
            args = [a.value for a in iterable.args]
            iterable = next((a for a in args if not self.known(a, scope, order)), args[0]) if dotted(iterable.func) == "zip" else args[0]
        return iterable

    def _iterated(self, iterable: cst.BaseExpression | None) -> str:
        while isinstance(iterable, cst.Call) and iterable.args and dotted(iterable.func) in _ITERATION_WRAPPERS:
            iterable = iterable.args[0].value
        if isinstance(iterable, cst.Call):
            return f" over {dotted(iterable.func) or 'a call'}()" if dotted(iterable.func) in ("range", "zip") else " over a call's result"
        if isinstance(iterable, (cst.List, cst.Tuple)):
            return " over a display"
        return " over a name or attribute"

    def _made(self, value: cst.BaseExpression, scope: Scope, order: int | None) -> str:
        if isinstance(value, cst.Call):
            call = self.facts.call_of(value)
            if call is not None and call.qualname and not call.qualname.startswith("<local>."):
                return "library call's result"
            return "call's result (the file's function or method)"
        return "value"

    def _param(self, owner: Scope, name: str, depth: int) -> str:
        """A parameter's value: where the callback or entry point it is stops it; where the file's calls pass it, the
        first argument the evaluator does not know (that is where it stops), or the call sites giving different values."""
        fn = owner.node
        passed = self._passed_to(fn, fn.name.value if isinstance(fn, cst.FunctionDef) else None)
        if passed is not None:
            return f"parameter of a function passed to {passed}"
        if owner.kind == "lambda":
            return "lambda parameter"
        sources = param_arguments(self.facts, owner, name) if isinstance(fn, cst.FunctionDef) else None
        if sources:
            unknown = next(((e, s, o) for e, s, o in sources if not self.known(e, s, o)), None)
            if unknown is not None:
                return self.why(*unknown, depth + 1)
            return "parameter the call sites give different values"
        if owner.parent is not None and owner.parent.kind == "class":
            return "method parameter (no call of the file the evaluator follows runs it)"
        fn_name = fn.name.value if isinstance(fn, cst.FunctionDef) else ""
        sites = [c for c in self.facts.calls_by_short.get(fn_name, ()) if c.method is None]
        if not sites:
            return "parameter of a function the file never calls (an entry point)"
        if any(c.has_star_args for c in sites):
            return "parameter passed through *args/**kwargs"
        return "parameter of a call site the evaluator does not follow"

    def _passed_to(self, fn: cst.CSTNode | None, name: str | None) -> str | None:
        """`.map()`, `DataLoader()`, ... when the function (by its name, `self.name` or the lambda itself) is an
        argument of a call of the file: a callback the library calls, with arguments the file does not show."""
        for call in self.facts.calls:
            for arg in call.node.args:
                value = arg.value
                if value is fn or name is not None and (dotted(value) in (name, f"self.{name}")):
                    return ".map()" if call.method == "map" else "another call (a callback)"
        return None

    def _call(self, expr: cst.Call, scope: Scope, order: int | None, depth: int) -> str:
        call = self.facts.call_of(expr)
        if call is None:
            return "call"
        q = call.qualname
        if q and q.startswith("<local>."):
            return "return of the file's function or class"
        if q is None and call.method is not None:
            if dotted(call.receiver) == "self":
                return "return of a method on self"
            if not self.known(call.receiver, scope, order):
                return self.why(call.receiver, scope, order, depth + 1)
            return f"method .{call.method}() of a known object"
        if q is None:
            return "call of an unknown callable"
        if q.startswith("builtins."):
            return f"builtin {q.split('.', 1)[1]}() of unknowns"
        root = q.split(".")[0]
        return f"library call {root}.{q.rsplit('.', 1)[-1]}()" if root not in ("torch", "transformers", "datasets", "pandas", "numpy") else f"{root} call {q.rsplit('.', 1)[-1]}()"


# ---------------------------------------------------------------------------------------------
# the run


def measure(roots: list[Path]) -> tuple[list[Site], int, int]:
    sites: list[Site] = []
    files = failed = 0
    for root, path, text in sources(roots):
        files += 1
        try:
            module = cst.parse_module(text)
            facts = Facts(module, text, path)
            sites += file_sites(facts, f"{root.name}/{path.relative_to(root)}")
        except Exception:  # noqa: BLE001 - a file bertlint cannot read or analyse is counted and skipped
            failed += 1
    return sites, files, failed


def report(sites: list[Site], files: int, failed: int) -> str:
    by_kind: dict[str, Counter] = defaultdict(Counter)
    stops: dict[str, Counter] = defaultdict(Counter)
    for site in sites:
        by_kind[site.kind]["resolved" if site.resolved else "unknown"] += 1
        if not site.resolved:
            stops["all"][site.construct] += 1
            stops[site.kind][site.construct] += 1
    total = Counter(s.resolved for s in sites)
    out = [f"{files} files ({failed} not analysed), {len(sites)} sites: resolved {total[True]} "
           f"({total[True] / max(len(sites), 1):.3f}), unknown {total[False]}", "", "| site | resolved | unknown | share |", "|---|---|---|---|"]
    for kind in sorted(by_kind):
        c = by_kind[kind]
        out.append(f"| {kind} | {c['resolved']} | {c['unknown']} | {c['resolved'] / (c['resolved'] + c['unknown']):.2f} |")
    out += ["", "what stopped the evaluator (all unknown sites):", ""]
    out += [f"  {n:5}  {name}" for name, n in stops["all"].most_common(25)]
    for kind in sorted(k for k in stops if k != "all"):
        out += ["", f"{kind}: " + "; ".join(f"{name} {n}" for name, n in stops[kind].most_common(5))]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", type=Path, default=list(DEFAULT_CORPORA))
    parser.add_argument("--json", type=Path, help="write every site here")
    parser.add_argument("--sample", type=int, default=0, help="print this many unknown sites with their code, to judge")
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    roots = [r for r in args.roots if r.is_dir()]
    if not roots:
        print("no corpus found: " + ", ".join(map(str, args.roots)), file=sys.stderr)
        return 2
    sites, files, failed = measure(roots)
    print(report(sites, files, failed))
    if args.json:
        args.json.write_text(json.dumps([asdict(s) for s in sites], indent=0))
    if args.sample:
        unknown = sorted((s for s in sites if not s.resolved), key=lambda s: s.id)
        picked = random.Random(args.seed).sample(unknown, min(args.sample, len(unknown)))
        base = {r.name: r for r in roots}
        for number, site in enumerate(picked, 1):
            print(f"\n=== {number} {site.id}  [{site.construct}]")
            print(_context(base, site))
    return 0


def _context(base: dict[str, Path], site: Site) -> str:
    root, _, rel = site.path.partition("/")
    path = base[root] / rel
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        text = _notebook_code(text) or ""
    lines = text.split("\n")
    lo, hi = max(site.line - 6, 0), min(site.line + 2, len(lines))
    return "\n".join(f"{i + 1:5} {lines[i]}" for i in range(lo, hi))


if __name__ == "__main__":
    sys.exit(main())
