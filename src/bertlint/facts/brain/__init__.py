"""The library models the evaluator runs: one module per library family, each a set of tables and small hooks.

A hook answers for its library's objects and None for anything else (`evaluator.Evaluation.ask`); its answer "the
value None" is `abstract.NONE` (`abstract.answer(value)` gives it for None):

- `call(ev, call)`: the value a library call makes;
- `method(ev, receiver, call)`: what a method of an object gives; `called(ev, obj, call)`: calling the object;
- `attribute(ev, base, attr)`, `item(values, base, key)`, `iterate(values, base)` (what looping over it yields);
- `operation(ev, left, operator, right)`: `left <operator> right` (also `x += right`, `x.extend(right)`) where `left`
  is an object;
- `keeps(method, receiver)`: the method returns its receiver's value unchanged (receiver None: a comprehension's
  element);
- `mapping(value)`: an object whose iteration gives its keys; `keys(values, value)`: the keys such an object certainly
  has, and only those (a DataLoader's batch of dicts: `data`), so that `**batch` passes them;
- `self_attribute(ev, class_scope, attr)`: `self.attr` in a method of the file's class where no code of the file binds
  it (Lightning's `self.hparams`: `hparams`);
- `parameter(ev, scope, name)`: a parameter a library fills in (click; a datasets `map` function's example; a
  Lightning or Trainer step's batch: `steps`).
- `calls_back(ev, call)`: the library runs a function passed to `call` before it returns (`datasets` `map`);
- `leaves_alone(qualname)`: a library function never runs the objects it is given (`torch.save`), so a module handed
  to it keeps the file's calls as the only runs of its `forward`;
- `wraps(qualname)`: a decorator returns a wrapper that runs the function only when called (`torch.no_grad`).

A new library API is a row in a table here, never code in the evaluator.

`BRAINS` is the order they are asked in.
"""

from bertlint.facts.brain import config, data, hparams, keras, steps, tables, tensors, tf_data, transformers, wrappers

BRAINS = (tensors, wrappers, transformers, tf_data, keras, data, tables, config, steps, hparams)
