"""Reads that only look at a value: printed, displayed, logged, decoded or compared, never fed on.

`inspected(facts, read)` answers for one read (a name, or the call that makes the value); `only_inspected(facts,
call)` for the value a call makes and binds to a name: every later read of that name in its block is an inspection;
`never_fed(facts, expr)` for a value followed wherever it goes (`uses`): nothing consumes it but inspections;
`unfed_map_function(facts, fn)` for a function `.map` runs on a dataset that is never fed; `only_shape_read(facts,
expr)` for a value dropped in the expression that makes it once its shape is read; `never_seen(facts, expr)` for a
value whose numbers (sums, averages of it) end in names nobody reads.
"""

from __future__ import annotations

import libcst as cst

from bertlint.facts.model import per_file
from bertlint.facts.nodes import Call
from bertlint.facts.training import in_call_to, map_calls
from bertlint.facts.uses import callers, uses
from bertlint.facts.values import Values as Facts

# Calls that only look at a value (an encoding printed, displayed, logged, decoded or compared).
INSPECTIONS = frozenset({
    "print", "pprint", "display", "len", "decode", "batch_decode", "convert_ids_to_tokens", "array_equal", "equal", "allclose", "assert_equal",
    "debug", "info", "warning", "log", "write", "tokens", "word_ids", "keys",
})

# Reads of a tensor's shape (`x.shape`, `x.size(1)`, `x.dim()`, `x.ndim`).
SHAPE_READS = frozenset({"shape", "size", "dim", "ndim"})


def only_shape_read(facts: Facts, expr: cst.BaseExpression) -> bool:
    """The value `expr` makes is dropped in the same expression once its shape is read (`model(x).last_hidden_state.shape[-1]`,
    `model(x)[0].size(1)`): nothing keeps it."""
    node: cst.CSTNode = expr
    parent = facts.parent(node)
    while isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is node:
        if isinstance(parent, cst.Attribute) and parent.attr.value in SHAPE_READS:
            return True
        node, parent = parent, facts.parent(parent)
    return False


def inspected(facts: Facts, read: cst.BaseExpression) -> bool:
    """A read of a value (`x`, or the call making it) that feeds nothing: an argument, at any depth, of
    `print`/`display`/`decode`/`array_equal`-like calls (through `x.input_ids`, `x["input_ids"]`, an f-string), `x.shape`,
    `x.tokens()`, a notebook cell's last expression (`x["input_ids"]`, displayed), or a loop over `x.items()` that only
    prints."""
    node: cst.CSTNode = read
    parent = facts.parent(node)
    while isinstance(parent, (cst.Attribute, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Arg)) and not (
        isinstance(parent, cst.Attribute) and parent.attr is node
    ):
        if isinstance(parent, cst.Attribute) and parent.attr.value == "shape":
            return True
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in INSPECTIONS:
            return True  # `enc.tokens()`, `enc.keys()`
        if isinstance(parent, cst.Attribute) and parent.attr.value in ("items", "values") and _printing_loop(facts, facts.parent(parent)):
            return True  # `for key, value in enc.items(): print(key, value)`
        node, parent = parent, facts.parent(parent)
    return _displayed(facts, node) or in_call_to(facts, read, INSPECTIONS)  # `print(enc)`, `logger.info(len(enc["input_ids"]))`


def only_inspected(facts: Facts, call: Call) -> bool:
    """`x = call(...)` whose `x` the statements after it (in its block, up to a rebinding) read, but only to inspect it
    (`print`, `decode`, `np.array_equal`, `.shape`): the value is never fed on. The assigned value must be the call's
    value itself (`tok(...)`, `tok(...).input_ids.to(d)`)."""
    stmt = facts.statement_of(call.node)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.targets[0].target, cst.Name):
        return False
    node: cst.CSTNode = call.node
    while node is not small.value:
        parent = facts.parent(node)
        if not (isinstance(parent, (cst.Attribute, cst.Subscript)) and parent.value is node or isinstance(parent, cst.Call) and parent.func is node):
            return False
        node = parent
    reads = facts.reads_after(stmt, small.targets[0].target.value)
    return bool(reads) and all(inspected(facts, read) for read in reads)  # never read at all is a demonstration of the call


def never_fed(facts: Facts, expr: cst.BaseExpression) -> bool:
    """Nothing consumes the value `expr` makes: followed through its names, returns and the parts that keep it
    (`uses`), each use is an inspection (`inspected`: printed, measured, displayed) or a statement that drops it
    (`ds.map(f)` alone: `datasets` returns a new dataset, so this one is lost). No use at all counts: a value nobody
    reads feeds nothing. Unknown uses (an argument of any other call, a method, a store, a return) count as fed."""
    return all(use.how in ("arg", "read", "method") and inspected(facts, use.node) for use in uses(facts, expr))


# Methods and builtins that make a number (or a tensor) of a value: what they return carries it on.
_NUMBERS = frozenset({"item", "tolist", "mean", "sum", "detach", "cpu", "float", "numpy"})
_NUMBER_BUILTINS = frozenset({"builtins.float", "builtins.int", "builtins.round", "builtins.abs"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power)
_FOLLOWED = 64  # nodes followed at most: a value spread wider counts as seen


def never_seen(facts: Facts, expr: cst.BaseExpression) -> bool:
    """Nothing the run shows or keeps comes of the value `expr` makes: followed through names (`uses`), the numbers made
    of it (`.item()`, `.mean()`, `float(x)`), arithmetic on it (`loss * n`, `total / len(loader)`) and accumulators
    (`total += loss.item()`: every read of `total`), every path ends at a name that no read sees. Any other use (printed,
    logged, compared, returned, stored, gathered, handed to a call) counts as seen."""
    todo, followed = [expr], set()
    while todo:
        node = todo.pop()
        if id(node) in followed:
            continue
        followed.add(id(node))
        if len(followed) > _FOLLOWED:
            return False
        for use in uses(facts, node):
            carried = _carried(facts, use.node, use.how, use.call)
            if carried is None:
                return False
            todo += carried
    return True


def _carried(facts: Facts, node: cst.CSTNode, how: str, call: Call | None) -> list[cst.CSTNode] | None:
    """Where a use carries the value on (the expressions then holding it), or None where the use may show or keep it."""
    if how == "method" and call.method in _NUMBERS:
        return [call.node]
    if how == "arg" and call.qualname in _NUMBER_BUILTINS and len(call.node.args) == 1:
        return [call.node]
    if how != "read":
        return None
    parent = facts.parent(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, _ARITHMETIC):
        return [parent]
    stmt = facts.statement_of(node)
    small = next((s for s in stmt.body if isinstance(s, cst.AugAssign) and s.value is node), None) if isinstance(stmt, cst.SimpleStatementLine) else None
    if small is None or not isinstance(small.target, cst.Name) or not isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)):
        return None
    name = small.target.value
    owner = facts.scope_of(node).lookup_scope(name)
    return [read for read, scope, _order, _loops in facts.name_loads.get(name, ()) if scope.lookup_scope(name) is owner and read is not small.target] if owner is not None else None


def unfed_map_function(facts: Facts, fn: cst.CSTNode | None) -> bool:
    """`fn` runs only in `.map`/`.filter` calls (`map_calls`; the file never calls it itself) and the dataset none of them
    makes is fed (`never_fed`): what it pads or labels reaches no model."""
    return fn is not None and id(fn) in _unfed_map_functions(facts)


@per_file
def _unfed_map_functions(facts: Facts) -> frozenset[int]:
    """ids of the functions `unfed_map_function` holds for, each map call's dataset followed once a file."""
    fed: dict[int, bool] = {}
    for call, fn, _ in map_calls(facts):
        fed[id(fn)] = fed.get(id(fn), False) or not never_fed(facts, call.node)
    unfed = {fn for call, fn, _ in map_calls(facts) if not fed[id(fn)]}
    return frozenset(id(fn) for fn in unfed if not (isinstance(fn, cst.FunctionDef) and callers(facts, fn, facts.scope_of(fn.body))))


def _displayed(facts: Facts, node: cst.CSTNode) -> bool:
    """`node` is a whole expression statement (a notebook cell's last line displays it)."""
    stmt = facts.statement_of(node)
    return isinstance(stmt, cst.SimpleStatementLine) and any(isinstance(small, cst.Expr) and small.value is node for small in stmt.body)


def _printing_loop(facts: Facts, call: cst.CSTNode | None) -> bool:
    """`call` (`enc.items()`) is what a `for` loop iterates, and the loop's body only calls inspections (`print(k, v)`)."""
    loop = facts.statement_of(call) if isinstance(call, cst.Call) else None
    if not isinstance(loop, cst.For) or loop.iter is not call:
        return False
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else (loop.body,)
    smalls = [small for stmt in body if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) for small in stmt.body]
    return len(smalls) == len(body) > 0 and all(
        isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and _name_of(small.value.func) in INSPECTIONS for small in smalls
    )


def _name_of(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
