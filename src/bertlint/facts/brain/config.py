"""Configuration: argparse, HfArgumentParser, click, typer, `os.environ`, namespaces and config classes.

A command-line or environment default counts only when the evaluation allows it (`cli=True`): the user may
override it. Sources: argparse (`ArgumentParser.add_argument(dest, default=...)`, `parse_args`,
`parse_known_args` returning `(namespace, extras)`), transformers `HfArgumentParser.parse_args_into_dataclasses`
(a dataclass instance per class, in order), click `@click.option(..., default=...)`, typer
`typer.Option(default)`, `os.environ.get(name, default)` / `os.getenv(name, default)`.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Instance, Pack
from bertlint.facts.functions import is_dataclass
from bertlint.facts.names import same_symbol
from bertlint.facts.nodes import Scope, dotted

ENVIRONMENT_READS = ("os.environ.get", "os.getenv")
CLI_OPTIONS = ("typer.Option", "typer.Argument")
NAMESPACES = ("types.SimpleNamespace", "argparse.Namespace")
PARSERS = {"argparse.ArgumentParser": "argparse", "transformers.HfArgumentParser": "hf"}
CLICK_PARAMETERS = ("click.option", "click.argument")


def call(ev, call) -> Any:
    q = call.qualname
    if q is None:
        return None
    if q in ENVIRONMENT_READS and len(call.positional) == 2 and not call.kwargs:
        return ev.const(call.positional[1].value) if ev.cli else UNKNOWN  # the default, unless the environment sets it
    if q in CLI_OPTIONS:  # `lr: float = typer.Option(2e-5)`: its default
        default = call.arg(0, "default")
        return ev.const(default.value) if default is not None and ev.cli and not isinstance(default.value, cst.Ellipsis) else UNKNOWN
    if q in NAMESPACES:
        return UNKNOWN if call.has_star_args else Instance("namespace", call, "kwargs")
    parser = next((how for name, how in PARSERS.items() if same_symbol(q, name)), None)
    if parser is not None:
        return Instance("parser", call, parser)
    return None


def method(ev, receiver, call) -> Any:
    if not isinstance(receiver, Instance) or receiver.kind != "parser":
        return None
    if receiver.detail == "argparse" and call.method == "parse_args":
        return Instance("namespace", call, "argparse")
    if receiver.detail == "argparse" and call.method == "parse_known_args":
        return Pack((Instance("namespace", call, "argparse"), UNKNOWN))
    if receiver.detail == "hf" and call.method == "parse_args_into_dataclasses":
        return _dataclasses(ev, receiver.call)
    return None


def attribute(ev, base, attr: str) -> Any:
    if not isinstance(base, Instance):
        return None
    if base.kind == "namespace" and base.detail == "argparse":
        found = ev.f.argparse_arguments.get(attr)
        if found is None or not ev.cli:
            return UNKNOWN
        expr, where, at = found
        return ev.f.evaluate(expr, where, at, cli=ev.cli) if expr is not None else None
    if base.kind == "namespace" and base.detail == "kwargs":
        arg = base.call.kwargs.get(attr)
        return ev.f.evaluate(arg.value, base.call.scope, base.call.order, cli=ev.cli) if arg is not None else UNKNOWN
    if base.kind == "namespace":  # a dataclass HfArgumentParser filled: its field's default, a command-line default
        return ev.class_field(base.detail, attr) if ev.cli else UNKNOWN
    return None


def parameter(ev, owner: Scope, name: str) -> Any:
    """`@click.option("--lr", default=2e-5) def main(lr)`: the option's default (UNKNOWN with `cli=False`)."""
    fn = owner.node
    if not isinstance(fn, cst.FunctionDef):
        return None
    for decorator in fn.decorators:
        made = ev.f.call_of(decorator.decorator) if isinstance(decorator.decorator, cst.Call) else None
        if made is None or made.qualname not in CLICK_PARAMETERS:
            continue
        flags = [ev.f.value(a.value, made.scope) for a in made.positional]
        names = [x for x in flags if isinstance(x, str) and x.isidentifier()]  # an explicit parameter name
        dest = names[0] if names else next((x.lstrip("-").replace("-", "_").lower() for x in flags if isinstance(x, str) and x.startswith("--")), None)
        if dest == name:
            default = made.kwargs.get("default")
            return ev.f.evaluate(default.value, made.scope, made.order, cli=True) if default is not None and ev.cli else UNKNOWN
    return None


def argparse_arguments(values) -> dict[str, tuple]:
    """dest -> (default expr or None, scope, order) for every `add_argument` in the file (groups included)."""
    out: dict[str, tuple] = {}
    for made in values.calls:
        if made.method != "add_argument":
            continue
        flags = [values.value(a.value, made.scope) for a in made.positional]
        if not flags or any(not isinstance(x, str) for x in flags):
            continue
        dest = values.kw_value(made, "dest")
        if not isinstance(dest, str):
            longs = [x for x in flags if x.startswith("--")]
            dest = (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")
        default = made.kwargs.get("default")
        action = values.kw_value(made, "action")
        if default is None:
            if action in ("store_true", "store_false"):
                out[dest] = (cst.Name("False" if action == "store_true" else "True"), made.scope, made.order)
            else:
                out[dest] = (None, made.scope, made.order)
        else:
            out[dest] = (default.value, made.scope, made.order)
    return out


def _dataclasses(ev, parser) -> Any:
    """`HfArgumentParser((ModelArgs, TrainArgs)).parse_args_into_dataclasses()`: one namespace per dataclass."""
    if not parser.positional:
        return UNKNOWN
    classes = parser.positional[0].value
    elements = [e.value for e in classes.elements] if isinstance(classes, (cst.Tuple, cst.List)) else [classes]
    found = []
    for element in elements:
        name = dotted(element)
        cls = ev.f.classes.get(name) if name else None
        found.append(Instance("namespace", parser, cls) if cls is not None and is_dataclass(cls) else UNKNOWN)
    return Pack(tuple(found))
