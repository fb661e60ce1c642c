"""The library models the evaluator runs: one module per library family, each a set of tables and small hooks.

A hook answers for its library's objects and None for anything else (see `evaluator.Evaluation`):
`call(ev, call)` the value a library call makes; `method(ev, receiver, call)` what a method of an object
gives; `called(ev, obj, call)` what calling the object itself gives; `attribute(ev, base, attr)`;
`item(values, base, key)`; `iterate(values, base)` what looping over it yields; `keeps(method)` a method that
returns its receiver's value unchanged; `mapping(value)` an object whose iteration gives keys;
`parameter(ev, scope, name)` a parameter a library fills in (click). A new library API is a row in a table here,
never code in the evaluator.

`BRAINS` is the order they are asked in.
"""

from bertlint.facts.brain import config, data, tables, tensors, transformers, wrappers

BRAINS = (tensors, wrappers, transformers, data, tables, config)
