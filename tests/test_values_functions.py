"""Functions as values (facts/calls.py, facts/functions.py): a `def`'s name, a lambda and `functools.partial(...)`
evaluate to the function they make, with the frame of the run that made it (a closure reads its free names there);
calling such a value runs it; `*` of a sequence and `**` of a mapping known element by element pass their elements
(`Items.spread`, facts/items.py). Each
rule on a known case and on a near miss that must stay unknown."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import UNKNOWN, Facts, in_class_or_lambda

HEAD = "import functools\nimport torch\nmodel = torch.nn.Linear(2, 2)\n"


def rate(body: str):
    """The `lr` the last optimizer of `body` receives, as the value layer sees it."""
    source = HEAD + textwrap.dedent(body)
    facts = Facts(cst.parse_module(source), source)
    call = [c for c in facts.calls if c.qualname == "torch.optim.AdamW"][-1]
    return facts.arg_value(call, 1, "lr")


@pytest.mark.parametrize("body", [
    # a function returned by a call, then called: its free name read in the run that made it
    "def make():\n    c = 0.25\n    def inner():\n        return c\n    return inner\ntorch.optim.AdamW(model.parameters(), lr=make()())\n",
    "def make(p):\n    return lambda: p\ntorch.optim.AdamW(model.parameters(), lr=make(0.25)())\n",
    "def make(p):\n    def inner(q):\n        return p * q\n    return inner\nscale = make(0.5)\ntorch.optim.AdamW(model.parameters(), lr=scale(0.5))\n",
    # a def's name and a lambda held by another name, in a display, passed along
    "def f(p):\n    return p\ng = f\ntorch.optim.AdamW(model.parameters(), lr=g(0.25))\n",
    "fns = [lambda: 0.25]\ntorch.optim.AdamW(model.parameters(), lr=fns[0]())\n",
    "def apply(fn, x):\n    return fn(x)\ntorch.optim.AdamW(model.parameters(), lr=apply(lambda v: v, 0.25))\n",
    # functools.partial of a partial, of a lambda; `**` of a display overrides the partial's keyword
    "def f(a, b, p):\n    return p\ng = functools.partial(functools.partial(f, 0), 1)\ntorch.optim.AdamW(model.parameters(), lr=g(0.25))\n",
    "torch.optim.AdamW(model.parameters(), lr=functools.partial(lambda a, p: p, 0)(0.25))\n",
    "def f(a, p):\n    return p\ntorch.optim.AdamW(model.parameters(), lr=functools.partial(f, p=0.5)(0, **{'p': 0.25}))\n",
    "def f(a, p):\n    return p\ntorch.optim.AdamW(model.parameters(), lr=f(*[0, 0.25]))\n",
    # `*` of a parameter holding a list, read in the frame of the call that passes it
    "def f(a, p=0.5):\n    return p\ndef g(rest):\n    return f(*rest)\ntorch.optim.AdamW(model.parameters(), lr=g([0, 0.25]))\n",
])
def test_a_function_held_as_a_value_runs_when_called(body):
    assert rate(body) == 0.25


@pytest.mark.parametrize("body", [
    # a decorated def binds what the decorator returns
    "def deco(fn):\n    return lambda: 0.5\n@deco\ndef f():\n    return 0.25\ng = f\ntorch.optim.AdamW(model.parameters(), lr=g())\n",
    # the closure runs after its maker rebinds the name it reads: the later binding is read
    "def make():\n    c = 0.25\n    fn = lambda: c\n    c = 0.5\n    return fn\ntorch.optim.AdamW(model.parameters(), lr=make()())\n",
    # `**kwargs` the file does not show may override the partial's keyword
    "def f(a, p):\n    return p\ndef run(**kw):\n    return functools.partial(f, p=0.25)(0, **kw)\ntorch.optim.AdamW(model.parameters(), lr=run(p=0.5))\n",
    # two functions reach the call
    "import sys\nfn = (lambda: 0.25) if sys.argv else (lambda: 0.5)\ntorch.optim.AdamW(model.parameters(), lr=fn())\n",
    # a `*` of a sequence not known element by element hides the positions after it
    "import sys\ndef f(a, p=0.5):\n    return p\ntorch.optim.AdamW(model.parameters(), lr=f(*sys.argv))\n",
])
def test_a_function_value_that_may_return_another_value_is_unknown(body):
    assert rate(body) is UNKNOWN


def test_a_dict_a_function_returns_as_a_display_is_a_new_dict():
    """`f(p=model)["k"]` where every `return` of f is a dict display: nobody else holds that dict to change it."""
    head = "from transformers import AutoModel\nmodel = AutoModel.from_pretrained('bert-base-uncased')\n"
    fresh = head + "def f(*, p):\n    return {'k': p}\nout = f(p=model)['k']\n"
    held = head + "CFG = {'k': model}\ndef f(*, p):\n    return CFG\nCFG['k'] = AutoModel.from_pretrained('gpt2')\nout = f(p=model)['k']\n"
    assert [loaded_by(source) for source in (fresh, held)] == ["bert-base-uncased", None]


def loaded_by(source: str):
    """The checkpoint of the model load that the last statement's value `out` holds, or None."""
    facts = Facts(cst.parse_module(source), source)
    found = facts.kind(facts.module.body[-1].body[0].value, facts.module_scope, None)
    return facts.arg_value(found.call, 0, "pretrained_model_name_or_path") if found is not None else None


@pytest.mark.parametrize("body, expected", [
    # a class of the file defined in a function: constructed, its methods run for the constructions' arguments
    ("def main():\n    class Opt:\n        def __init__(self, lr):\n            self.lr = lr\n    o = Opt(0.25)\n"
     "    torch.optim.AdamW(model.parameters(), lr=o.lr)\nmain()\n", 0.25),
    ("def main():\n    class Runner:\n        def __init__(self, lr):\n            self.train(lr)\n\n        def train(self, lr):\n"
     "            torch.optim.AdamW(model.parameters(), lr=lr)\n    class Sub(Runner):\n        pass\n    Sub(0.25)\nmain()\n", 0.25),
    # a name bound to that class and to something else: which one runs is not known
    ("import sys\ndef main():\n    class Opt:\n        def __init__(self, lr):\n            self.lr = lr\n    if sys.argv:\n        Opt = sys\n"
     "    torch.optim.AdamW(model.parameters(), lr=Opt(0.25).lr)\nmain()\n", UNKNOWN),
])
def test_a_class_defined_in_a_function_is_constructed(body, expected):
    assert rate(body) == expected if expected is not UNKNOWN else rate(body) is UNKNOWN


COLLATE = "from torch.utils.data import DataLoader\ndef collate(batch, lr):\n    torch.optim.AdamW(model.parameters(), lr=lr)\n    return batch\n"


@pytest.mark.parametrize("body, expected", [
    # a parameter a `functools.partial` handed to a library binds: what it binds
    (COLLATE + "DataLoader([1, 2], collate_fn=functools.partial(collate, lr=0.25))\n", 0.25),
    (COLLATE + "fn = functools.partial(collate, lr=0.25)\nDataLoader([1, 2], collate_fn=fn)\n", 0.25),
    # the partial object called by the file, which may bind the keyword again; one that leaves it to the caller
    (COLLATE + "fn = functools.partial(collate, lr=0.25)\nDataLoader([1, 2], collate_fn=fn)\nfn([1], lr=0.5)\n", UNKNOWN),
    (COLLATE + "def run(f):\n    return f([1], lr=0.5)\nrun(functools.partial(collate, lr=0.25))\n", UNKNOWN),
    (COLLATE + "DataLoader([1, 2], collate_fn=functools.partial(collate))\n", UNKNOWN),
    # handed to the construction of a class of the file that a library class constructs (no `__init__` of the file's
    # in its family); one whose own `__init__` (or an ancestor's of the file) may call it otherwise, or a base unseen
    (COLLATE + "from transformers import Trainer\nclass T(Trainer):\n    pass\nclass U(T):\n    def step(self):\n        pass\n"
     "U(data_collator=functools.partial(collate, lr=0.25))\n", 0.25),
    (COLLATE + "from transformers import Trainer\nclass T(Trainer):\n    def __init__(self, data_collator):\n        data_collator([1], lr=0.5)\n"
     "class U(T):\n    pass\nU(data_collator=functools.partial(collate, lr=0.25))\n", UNKNOWN),
    (COLLATE + "class T:\n    pass\nT(functools.partial(collate, lr=0.25))\n", UNKNOWN),
    (COLLATE + "class T(make_base()):\n    pass\nT(functools.partial(collate, lr=0.25))\n", UNKNOWN),
])
def test_a_parameter_a_partial_binds(body, expected):
    assert rate(body) == expected if expected is not UNKNOWN else rate(body) is UNKNOWN


F = "def f(a=0, p=0.5, **kw):\n    return p\n"


@pytest.mark.parametrize("body, expected", [
    # `**name` / `*name` of a name bound to a display: its elements are passed
    (F + "kw = {'p': 0.25}\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", 0.25),
    (F + "kw = {'x': 1}\ntorch.optim.AdamW(model.parameters(), lr=f(0, 0.25, **kw))\n", 0.25),
    (F + "rest = (0, 0.25)\ndef g():\n    return f(*rest)\ntorch.optim.AdamW(model.parameters(), lr=g())\n", 0.25),
    # changed in place by its own scope (through a plain alias too), or a parameter holding a display: what it holds
    # at the call (facts/items.py)
    (F + "kw = {'p': 0.25}\nkw['p'] = 0.75\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", 0.75),
    (F + "kw = {'p': 0.25}\nkw.update(p=0.75)\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", 0.75),
    (F + "kw = {'p': 0.25}\nalias = kw\nalias['p'] = 0.75\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", 0.75),
    (F + "def g(kw):\n    return f(**kw)\ntorch.optim.AdamW(model.parameters(), lr=g({'p': 0.25}))\n", 0.25),
    # bound in a branch, or changed where its own events do not show it: what it holds at the call is not shown
    (F + "import sys\nkw = {}\nif sys.argv:\n    kw = {'p': 0.25}\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", UNKNOWN),
    (F + "import sys\nkw = {'p': 0.25}\nif sys.argv:\n    kw['p'] = 0.75\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", UNKNOWN),
    (F + "kw = {'p': 0.25}\ndef bump():\n    kw['p'] = 0.75\nbump()\ntorch.optim.AdamW(model.parameters(), lr=f(**kw))\n", UNKNOWN),
])
def test_a_starred_name_holding_a_display(body, expected):
    assert rate(body) == expected if expected is not UNKNOWN else rate(body) is UNKNOWN


@pytest.mark.parametrize("body, expected", [
    # a parameter read where no call is being evaluated: each call site's `**name` of a known dict passes its items
    ("def train(lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\nkw = {'lr': 0.25}\ntrain(**kw)\n", 0.25),
    ("def train(a, lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\ntrain(*[0, 0.25])\n", 0.25),
    ("def train(lr=0.5, **rest):\n    torch.optim.AdamW(model.parameters(), lr=lr)\nkw = {'x': 1}\ntrain(**kw)\n", 0.5),
    ("def train(lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\nkw = {'lr': 0.25}\nkw['lr'] = 0.75\ntrain(**kw)\n", 0.75),
    ("def train(lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\ndef go(kw):\n    train(**kw)\ngo({'lr': 0.25})\n", 0.25),
    ("import sys\ndef train(lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\nkw = {'lr': 0.25}\nif sys.argv:\n    kw['lr'] = 0.75\ntrain(**kw)\n", UNKNOWN),
    ("import json\ndef train(lr=0.5):\n    torch.optim.AdamW(model.parameters(), lr=lr)\ntrain(**json.load(open('c.json')))\n", UNKNOWN),
])
def test_a_parameter_its_call_sites_pass_through_a_starred_display(body, expected):
    assert rate(body) == expected if expected is not UNKNOWN else rate(body) is UNKNOWN


def test_in_class_or_lambda_is_a_method_a_lambda_or_anything_nested_in_one():
    source = textwrap.dedent("""
        class Head:
            def forward(self, x):
                def inner():
                    return probe(1)
                return probe(2)
        f = lambda x: probe(3)
        def plain():
            return probe(4)
        probe(5)
    """)
    facts = Facts(cst.parse_module(source), source)
    probes = sorted((c for c in facts.calls if facts.text(c.node.func) == "probe"), key=lambda c: c.node.args[0].value.value)
    assert [in_class_or_lambda(c.scope) for c in probes] == [True, True, True, False, False]
