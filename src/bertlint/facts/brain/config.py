"""Configuration: argparse, HfArgumentParser, click, typer, `os.environ`, namespaces and config classes.

A command-line or environment default counts only when the evaluation allows it (`cli=True`): the user may
override it. Sources: argparse (`ArgumentParser.add_argument(dest, default=...)`, `parse_args`,
`parse_known_args` returning `(namespace, extras)`), transformers `HfArgumentParser.parse_args_into_dataclasses`
(a dataclass instance per class, in order), click `@click.option(..., default=...)`, typer
`typer.Option(default)`, `os.environ.get(name, default)` / `os.getenv(name, default)` (CPython os.py `getenv(key,
default=None)`, `Mapping.get(key, default=None)`). An argparse option without a default holds None unless required or
positional (`Action(..., default=None)`).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from bertlint.facts.abstract import UNKNOWN, Instance, Pack, answer
from bertlint.facts.functions import is_dataclass
from bertlint.facts.names import same_symbol
from bertlint.facts.nodes import Scope, dotted

ENVIRONMENT_READS = ("os.environ.get", "os.getenv")
CLI_OPTIONS = ("typer.Option", "typer.Argument")
NAMESPACES = ("types.SimpleNamespace", "argparse.Namespace")
PARSERS = {"argparse.ArgumentParser": "argparse", "transformers.HfArgumentParser": "hf"}
CLICK_PARAMETERS = ("click.option", "click.argument")
# argparse actions whose dest holds None when the flag is not given and no default is set (Python's argparse: `Action(...,
# default=None)`; `store_true`/`store_false` default to False/True; `help`/`version` set nothing; an Action class of the
# file or another library may set anything); None: no `action=`, a plain store
NONE_DEFAULT_ACTIONS = (None, "store", "store_const", "append", "append_const", "count", "extend")


def call(ev, call) -> Any:
    q = call.qualname
    if q is None:
        return None
    if q in ENVIRONMENT_READS and len(call.positional) in (1, 2) and not call.kwargs:
        keys, key = ev.f.environment_set, ev.const(call.positional[0].value)
        if not ev.cli or keys is None or key in keys or key is UNKNOWN and keys:
            return UNKNOWN  # the file sets the variable itself
        default = ev.const(call.positional[1].value) if len(call.positional) == 2 else None  # `getenv(key, default=None)`
        return answer(default)  # the default, unless the environment sets it
    if q in CLI_OPTIONS:  # `lr: float = typer.Option(2e-5)`: its default
        default = call.arg(0, "default")
        return answer(ev.const(default.value)) if default is not None and ev.cli and not isinstance(default.value, cst.Ellipsis) else UNKNOWN
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
        if found is None or not ev.cli or _given(ev, base.call, found[4]):
            return UNKNOWN
        expr, where, at, convert, _ = found
        if expr is None:
            return UNKNOWN  # a required option or a positional: given on every command line
        value = ev.f.evaluate(expr, where, at, cli=ev.cli)
        return answer(_converted(value, convert) if isinstance(value, str) and convert is not None else value)
    if base.kind == "namespace" and base.detail == "kwargs":
        arg = base.call.kwargs.get(attr)
        return answer(ev.f.evaluate(arg.value, base.call.scope, base.call.order, cli=ev.cli)) if arg is not None else UNKNOWN
    if base.kind == "namespace":  # a dataclass HfArgumentParser filled: its field's default, a command-line default
        return answer(ev.class_field(base.detail, attr)) if ev.cli else UNKNOWN
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
            return answer(ev.f.evaluate(default.value, made.scope, made.order, cli=True)) if default is not None and ev.cli else UNKNOWN
    return None


def _converted(value: str, convert: str) -> Any:
    """A string default with `type=`: argparse parses it as if given on the command line (Python's argparse,
    `_parse_known_args`: a default that is a str and still in the namespace is passed through `_get_value`)."""
    fn = _CONVERSIONS.get(convert)
    if fn is None:
        return UNKNOWN
    try:
        return fn(value)
    except ValueError:
        return UNKNOWN


_CONVERSIONS = {"builtins.float": float, "builtins.int": int, "builtins.str": str, "builtins.bool": bool}


def environment_set(values) -> frozenset | None:
    """The environment variables the file sets (`os.environ[key] = ...`); None when it sets one it does not name
    (`os.environ[name] = ...`, `os.environ.update(...)`/`.setdefault(...)`/`.pop(...)`, `os.putenv(...)`)."""
    keys = set()
    for store in (*values.stores, *values.touched):
        if isinstance(store.target, cst.Subscript) and values.qualname(store.target.value, store.scope) == "os.environ":
            if store.key is None:
                return None
            keys.add(store.key)
    if any(c.qualname == "os.putenv" or c.method in ("update", "setdefault", "__setitem__", "pop") and values.qualname(c.receiver, c.scope) == "os.environ" for c in values.calls):
        return None
    return frozenset(keys)


def argparse_arguments(values) -> dict[str, tuple]:
    """dest -> (default expr or None, scope, order, the `type=` callable's qualified name or None, the option
    strings) for every `add_argument` in the file (groups included). A dest added twice with different defaults (two
    parsers, or a parser and a subparser) has no default here: which parser fills it is not followed; nor has a dest
    `set_defaults` names (it overrides the argument's default, Python's `argparse.set_defaults`), nor, where a parser
    has an `argument_default=`, one added without a default."""
    out: dict[str, tuple] = {}
    seen: dict[str, set] = {}
    overridden: set[str] = set()
    for made in values.calls:
        if made.method == "set_defaults":
            if made.has_star_args:
                return {}
            overridden.update(made.kwargs)
    argument_default = any("argument_default" in c.kwargs for c in values.calls if c.qualname is not None and same_symbol(c.qualname, "argparse.ArgumentParser"))
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
        if dest in overridden or default is None and argument_default:
            continue
        action = values.kw_value(made, "action", default=None)
        typed = made.kwargs.get("type")
        convert = None if typed is None else values.qualname(typed.value, made.scope) or "?"
        if default is None and action in ("store_true", "store_false"):
            expr = cst.Name("False" if action == "store_true" else "True")
        elif default is None:  # an optional flag not given holds None (a required one or a positional is always given)
            optional = flags[0].startswith("-") and values.kw_value(made, "required", default=False) is False
            plain = action in NONE_DEFAULT_ACTIONS and "nargs" not in made.kwargs and not made.has_star_args
            expr = cst.Name("None") if optional and plain else None
        else:
            expr = default.value
        texts = seen.setdefault(dest, set())
        texts.add((values.text(expr) if expr is not None else None, convert))
        out[dest] = (expr if len(texts) == 1 else None, made.scope, made.order, convert, tuple(flags) + out.get(dest, (None,) * 4 + ((),))[4])
    return out


def _given(ev, parse, flags: tuple) -> bool:
    """The parse call is handed its arguments (`parse_args(["--lr", "1e-3"])`) and they may set this option: one
    of them may be its flag (or an abbreviation of it, `--lr=...` too), or it is a positional; unknown arguments may."""
    handed = parse.arg(0, "args")
    if handed is None:
        return False
    argv = ev.f.value(handed.value, parse.scope, order=parse.order)
    if not isinstance(argv, (list, tuple)) or not all(isinstance(a, str) for a in argv):
        return True
    options = [a.split("=", 1)[0] for a in argv if a.startswith("-")]
    return any(not f.startswith("-") and argv or any(f.startswith(o) or o.startswith(f) for o in options) for f in flags)


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
