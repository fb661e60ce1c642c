"""Plain Python errors that certainly stop a run, read from the value layer's tables (`stops` asks them per statement):

- an attribute read of an argparse namespace (`args = parser.parse_args()` bound once, unconditionally, or a parameter
  that every call of its function in the file passes that namespace: `main(args)`) that no
  `add_argument` defines: `args.lr` where the parser defines only `--learning_rate` raises AttributeError. Every dest
  must be known (Python's argparse, Lib/argparse.py: `dest=`; else an optional's first long option string, else its
  first, stripped of its prefix characters, dashes to underscores; a positional's first argument as written), and
  `set_defaults(name=...)` adds names; a parser made with `parents=` or `prefix_chars=`, an Action class of the file,
  subparsers, `parse_known_args`, `parse_args(namespace=...)`, `register`, `vars()`, `setattr()` or `__dict__`
  anywhere: no stop. Every attribute the file stores anywhere (`args.lr = 1e-3`) counts as defined;
- `self.NAME` read in a plain method of the file's class (one it constructs and no class of it subclasses), where the
  class and each of its bases (all the file's classes: no base from elsewhere, no decorator, no metaclass) never binds
  NAME in its body, the file never stores an attribute NAME on anything, and no `__getattr__`/`__getattribute__`
  answers it: AttributeError;
- an attribute that `str` has not, read of a name that an unpacking binds to a str (`loss, logits = model(ids,
  labels=y)` of a transformers model whose forward returns a `ModelOutput`, an `OrderedDict` whose iteration gives its
  keys: `loss.backward()` raises AttributeError 'str' object has no attribute 'backward'; or the keys of a dict), and
  such a str called (`pooled(...)`: TypeError, not callable) or handed as the input of a torch layer whose forward
  takes a tensor alone (`_, pooled = self.bert(ids)` then `self.drop(pooled)`: `Instance("layer")`, brain/tensors.py:
  TypeError "dropout(): argument 'input' (position 1) must be Tensor, not str");
- `parser.parse_args()` with no arguments run in a notebook's kernel (`Runtime.notebook`: an .ipynb, not a script of
  cells): ipykernel is started as `ipykernel_launcher.py -f <connection file>` (VS Code: `--f=<file>`), so argparse
  finds `-f` unrecognised and exits (`error`: SystemExit 2), unless the parser has an option `-f...` that takes it,
  or one long option `--f...` that takes VS Code's `--f=<file>` as a string (an abbreviation), a positional with
  `nargs=` that may swallow it, or the file touches `argv` at all (`sys.argv = [""]` first).
- a string key into a column of a batch that a datasets `map`/`filter` hands its function (`batched=True`: the value
  layer's `Instance("examples", None, True)`, every call site batched and the file never calling the function itself):
  `batch["translation"]["en"]` indexes the column, a list, by a str: TypeError whenever the function runs (datasets
  arrow_dataset.py `Dataset.map`, "a `dict` mapping to all formatted columns ... `batched=True`: lists"; a numpy,
  pandas or arrow format raises as well: IndexError, KeyError, TypeError). Also in a comprehension's element where the
  comprehension (one `for`, no `if`) runs over a constant that is not empty: `[batch["translation"][pair[0]] for pair in
  PAIRS]`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import libcst as cst

from bertlint.facts.abstract import Instance
from bertlint.facts.brain.tensors import LAYER
from bertlint.facts.certain_runs import certain_parts
from bertlint.facts.model import per_file
from bertlint.facts.names import same_symbol
from bertlint.facts.nodes import dotted, walk

# parser methods that make a namespace's names other than by `add_argument`, or whose namespace may hold names of the
# command line: then no attribute of a namespace is known missing
_OPEN_PARSERS = frozenset({"add_subparsers", "parse_known_args", "parse_known_intermixed_args", "register"})
_PARSER_KEYWORDS = frozenset({"parents", "prefix_chars"})
_NAMESPACE_WRITERS = frozenset({"builtins.vars", "builtins.setattr"})
_LOOKUP_HOOKS = frozenset({"__getattr__", "__getattribute__"})
_ARGV = re.compile(r"\bargv\b")
# what every str has: any other attribute of one raises AttributeError
_STR_ATTRIBUTES = frozenset(dir(str))
# decorators under which a method still gets the instance as its first parameter
_INSTANCE_DECORATORS = frozenset({"property"})


def missing_attribute(facts, node: cst.CSTNode) -> bool:
    """Does reading the attribute `node` certainly raise AttributeError (see the module's docstring)?"""
    return type(node) is cst.Attribute and id(node) in _missing(facts)  # the exact class: no ABC check per node


def str_as_tensor(facts, node: cst.Call) -> bool:
    """Is `node` a call of a str that an unpacking bound, or of a torch layer given such a str as its first argument
    (see the module's docstring)?"""
    call = facts.call_of(node)
    if call is None or call.has_star_args or call.has_double_star:
        return False
    if type(node.func) is cst.Name and _unpacked_str(facts, node.func, call.scope, call.order + 1):
        return True
    first = node.args[0].value if node.args and node.args[0].keyword is None and not node.args[0].star else None
    if type(first) is not cst.Name or not isinstance(node.func, (cst.Name, cst.Attribute)):
        return False
    layer = facts.evaluate(node.func, call.scope, call.order)
    return isinstance(layer, Instance) and layer.kind == LAYER and _unpacked_str(facts, first, call.scope, call.order + 1)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


def keyed_batch_column(facts, node: cst.CSTNode) -> bool:
    """Does evaluating `node` certainly index a batch's column by a str (see the module's docstring)? `node`: a
    subscript, or a comprehension whose element certainly runs (each of its certain parts asked)."""
    kind = type(node)  # the exact class: no ABC check per node
    if kind is cst.Subscript:
        return _keyed_column(facts, node)
    if kind not in _COMPREHENSIONS or node.for_in.ifs or node.for_in.inner_for_in is not None or node.for_in.asynchronous is not None:
        return False
    element = node.elt if kind is not cst.DictComp else node.key
    if not any(type(part) is cst.Subscript and type(part.value) is cst.Subscript for part in certain_parts(element)):
        return False
    scope = facts.scope_of(node.for_in.iter)
    over = facts.value(node.for_in.iter, scope, order=facts.read_order(node.for_in.iter), cli=False)
    return isinstance(over, (list, tuple, str, dict)) and len(over) > 0 and any(type(part) is cst.Subscript and _keyed_column(facts, part) for part in certain_parts(element))


def _keyed_column(facts, node: cst.Subscript) -> bool:
    """`batch[COLUMN][key]`: `batch` a batched map function's batch, COLUMN a string literal, `key` a str."""
    column = node.value
    if type(column) is not cst.Subscript or type(column.value) is not cst.Name or len(column.slice) != 1 or len(node.slice) != 1:
        return False
    name = column.slice[0].slice
    if not isinstance(name, cst.Index) or not isinstance(name.value, cst.SimpleString) or not isinstance(node.slice[0].slice, cst.Index):
        return False
    scope, order = facts.scope_of(node), facts.read_order(column.value)
    batch = facts.evaluate(column.value, scope, order)
    if not (isinstance(batch, Instance) and batch.kind == "examples" and batch.detail is True):
        return False
    return isinstance(facts.value(node.slice[0].slice.value, scope, order=order, cli=False), str)


def kernel_exit(facts, call: cst.Call) -> bool:
    """`parser.parse_args()` run in a notebook's kernel, on a parser that the kernel's `-f <file>` makes exit."""
    if not facts.runtime.notebook or call.args or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "parse_args":
        return False
    found = facts.call_of(call)
    parser = facts.evaluate(found.receiver, found.scope, found.order) if found is not None else None
    return isinstance(parser, Instance) and parser.kind == "parser" and parser.detail == "argparse" and _refuses_kernel_argv(facts)


@per_file
def _refuses_kernel_argv(facts) -> bool:
    """The kernel's argv makes the file's parsers exit: ipykernel's `-f <file>` matches only an option `-f...` (argparse
    `_get_option_tuples`: a single-dash string matches the options it begins), VS Code's `--f=<file>` only a long option
    `--f...` (an abbreviation; two of one parser are ambiguous), which takes the path only where it stores a string (`type=int` fails, a flag
    refuses the explicit argument: both `error`); a positional with `nargs=` may swallow it; nothing may touch argv."""
    arguments = _arguments(facts)
    if arguments is None or _ARGV.search(facts.source) is not None:
        return False
    return not any(a.flag.startswith("-f") or a.flag.startswith("--f") and a.stores_text or not a.flag.startswith("-") and a.nargs
                   for a in arguments)  # all parsers together: each `--f...` may be the one match of its own parser


@per_file
def _missing(facts) -> frozenset[int]:
    """The attribute reads of the file that certainly raise AttributeError: ids of their nodes."""
    stored = {store.target.attr.value for store in (*facts.stores, *facts.touched) if isinstance(store.target, cst.Attribute)}
    if any(call.qualname in _NAMESPACE_WRITERS for call in facts.calls) \
            or any(attr.attr.value == "__dict__" for attr, _scope, _order in facts.attr_loads):
        return frozenset()
    dests = _dests(facts)
    missing = set()
    for attr, scope, order in facts.attr_loads:
        name = attr.attr.value
        if name in stored or name.startswith("__") or not isinstance(attr.value, cst.Name):
            continue
        if _self_missing(facts, attr.value.value, name, scope) or dests is not None and name not in dests \
                and not name.startswith("_") and _namespace(facts, attr.value, scope, order + 1) \
                or name not in _STR_ATTRIBUTES and _unpacked_str(facts, attr.value, scope, order + 1):
            missing.add(id(attr))
    return frozenset(missing)


def _unpacked_str(facts, name: cst.Name, scope, order: int) -> bool:
    """`name` holds a str that an unpacking bound (a mapping's key: `nodes.Element` steps through
    `Protocol.unpacking`): one of its bindings in force unpacks, and the value layer knows the name holds a str."""
    _owner, events = facts.binding_events(name.value, scope, order)
    if not any(event.path for event in events):
        return False
    found = facts.evaluate(name, scope, order)
    return isinstance(found, str) or isinstance(found, Instance) and found.kind == "key"


def _namespace(facts, name: cst.Name, scope, order: int) -> bool:
    """`name` holds the namespace `parse_args()` of an argparse parser returns: one unconditional assignment binds it,
    or it is a parameter nothing rebinds that every call of the function in the file passes that namespace (the value
    layer's agreement of the call sites: `main(args)` under the main guard)."""
    owner, events = facts.binding_events(name.value, scope, order)
    if owner is None or events and name.value in owner.params:
        return False
    if name.value not in owner.params and (len(events) != 1 or events[0].op != "assign" or events[0].conditional
                                           or events[0].index is not None):
        return False
    found = facts.evaluate(name, scope, order)
    return isinstance(found, Instance) and found.kind == "namespace" and found.detail == "argparse" \
        and not found.call.kwargs and len(found.call.positional) <= 1 and not found.call.has_star_args


@per_file
def _dests(facts) -> frozenset[str] | None:
    """Every name a namespace of the file's argparse parsers may hold (all parsers together), None where one may hold a
    name the file does not say."""
    arguments = _arguments(facts) if any(call.method == "parse_args" for call in facts.calls) else None
    names = set()
    for call in facts.calls if arguments is not None else ():
        if call.method == "set_defaults":
            if call.has_star_args:
                return None
            names.update(call.kwargs)
        elif call.method == "add_argument":
            dest = _dest(facts, call)
            names.update((dest, dest.replace("-", "_")) if dest is not None else (None,))  # a positional's as written (3.11)
    return frozenset(names) if arguments is not None and None not in names else None


class _Argument(NamedTuple):
    """An option string of an `add_argument`: whether it has `nargs=`, whether the value given it stays a string (a
    plain store, no `type=` but `str`)."""
    flag: str
    nargs: bool
    stores_text: bool


@per_file
def _arguments(facts) -> tuple[_Argument, ...] | None:
    """Every option string of every `add_argument` of the file, None where a parser's names are open (see
    `_OPEN_PARSERS`, `_PARSER_KEYWORDS`), an argument's strings are not constants, or its action is no builtin's."""
    found = []
    for call in facts.calls:
        if call.method in _OPEN_PARSERS or call.qualname is not None and same_symbol(call.qualname, "argparse.ArgumentParser") \
                and (call.has_star_args or _PARSER_KEYWORDS & set(call.kwargs)):
            return None
        if call.method != "add_argument":
            continue
        flags = [facts.value(arg.value, call.scope, order=call.order) for arg in call.positional]
        action = facts.kw_value(call, "action", default="store")
        if call.has_star_args or not flags or not all(isinstance(f, str) and f for f in flags) or not isinstance(action, str):
            return None
        typed = call.kwargs.get("type")
        text = action in ("store", "append", "extend") and (typed is None or facts.qualname(typed.value, call.scope) == "builtins.str")
        found.extend(_Argument(flag, "nargs" in call.kwargs, text) for flag in flags)
    return tuple(found)


def _dest(facts, call) -> str | None:
    """The dest `add_argument` gives its action (argparse `_get_optional_kwargs`/`_get_positional_kwargs`)."""
    if "dest" in call.kwargs:
        dest = facts.kw_value(call, "dest")
        return dest if isinstance(dest, str) else None
    flags = [facts.value(arg.value, call.scope, order=call.order) for arg in call.positional]
    if not flags[0].startswith("-"):
        return flags[0]
    longs = [flag for flag in flags if len(flag) > 1 and flag[1] == "-"]
    return (longs[0] if longs else flags[0]).lstrip("-").replace("-", "_")


def _self_missing(facts, receiver: str, name: str, scope) -> bool:
    """`self.NAME` in a plain method of the file's class whose chain of classes never binds NAME (the module's
    docstring)."""
    method = scope.node if scope.kind == "function" else None
    owner = scope.parent
    if not isinstance(method, cst.FunctionDef) or owner is None or owner.kind != "class" or receiver in scope.events:
        return False
    params = method.params.params or method.params.posonly_params
    if not params or params[0].name.value != receiver or any(dotted(d.decorator) not in _INSTANCE_DECORATORS for d in method.decorators):
        return False
    names = _class_names(facts, owner.node)
    return names is not None and name not in names


def _class_names(facts, node: cst.ClassDef) -> frozenset[str] | None:
    """The names the class and its bases bind in their bodies, None where an instance may have others (see the module's
    docstring)."""
    return _class_tables(facts).get(id(node))


@per_file
def _class_tables(facts) -> dict[int, frozenset[str] | None]:
    """id of each class statement of the file whose instances' names are all known -> those names."""
    subclassed = {dotted(base.value) for node in walk(facts.module) if isinstance(node, cst.ClassDef) for base in node.bases} \
        if facts.classes else set()
    built = {call.qualname for call in facts.calls if call.qualname is not None and call.qualname.startswith("<local>.")}
    tables = {}
    for name, cls in facts.classes.items():
        if name not in subclassed and f"<local>.{name}" in built:
            names = _chain(facts, cls, set())
            if names is not None and not names & _LOOKUP_HOOKS:
                tables[id(cls.node)] = frozenset(names)
    return tables


def _chain(facts, cls, seen: set[str]) -> set[str] | None:
    """The names `cls` and its bases bind in their bodies; None where a base is not the file's class (`object` aside),
    a class has a decorator or a keyword (a metaclass), or the chain loops."""
    if cls.name in seen or cls.node.decorators or cls.node.keywords:
        return None
    seen.add(cls.name)
    names = set(cls.scope.events) | set(cls.methods)
    for arg in cls.node.bases:
        if dotted(arg.value) == "object" and "object" not in facts.module_scope.events:
            continue
        base = facts.qualname(arg.value, cls.scope.parent) or ""
        local = facts.classes.get(base.removeprefix("<local>.")) if base.startswith("<local>.") else None
        inherited = _chain(facts, local, seen) if local is not None else None
        if inherited is None:
            return None
        names |= inherited
    return names
