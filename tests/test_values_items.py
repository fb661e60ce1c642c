"""Dicts changed in place and spread into calls (`facts/items.py`), checked against execution: each snippet runs on
the recording stand-ins of the differential test, and the value layer's answer at every recorded call must be the
value the call received (the followed shapes) or at least never another value (the shapes that share an object)."""

from __future__ import annotations

import pytest

from test_values_differential import PRELUDE, run

# the rule of Python followed: a dict's own scope stores items and updates it, a `**mapping` or `*sequence` passes
# its items to the parameters they name, a display is a new object
FOLLOWED = {
    "item-stored": 'd = {"a": 0, "k": 1e-3}\nd["k"] = 2e-05\ntorch.optim.AdamW(model.parameters(), lr=d["k"])\n',
    "item-stored-object": 'd = {"a": 0, "k": to_max}\nd["k"] = padded\nmodel(**d["k"])\n',
    "item-stored-read-before-a-callee-stores-into-it": 'def bump(cfg):\n    cfg["lr"] = 0.001\nconfig = {"a": 0}\nconfig["lr"] = 1e-05\n'
                                                       'torch.optim.AdamW(model.parameters(), lr=config["lr"])\nbump(config)\n',
    "item-stored-into-empty": 'd = {}\nd["enc"] = padded\nd["lr"] = 2e-05\nmodel(**d["enc"])\ntorch.optim.AdamW(model.parameters(), lr=d.get("lr"))\n',
    "updated-by-keyword": 'd = {"a": 0, "k": 1e-3}\nd.update(k=2e-05)\ntorch.optim.AdamW(model.parameters(), lr=d["k"])\n',
    "updated-by-mapping": 'd = {"a": 0, "k": to_max}\nd.update({"k": padded}, lr=2e-05)\nmodel(**d.get("k"))\ntorch.optim.AdamW(model.parameters(), lr=d["lr"])\n',
    "display-indexed": 'model(**{"a": 0, "k": padded}["k"])\nmodel(**{"a": 0, "k": padded}.get("k"))\n',
    "nested-display-of-objects": 'cfg = {"train": {"k": padded}, "eval": {}}\nmodel(**cfg["train"]["k"])\n',
    "kwargs-bind-parameters": 'def f(p=None, **kw):\n    return p\nextra = {"p": 2e-05}\ntorch.optim.AdamW(model.parameters(), lr=f(**extra))\n'
                              'objects = {"p": padded}\nmodel(**f(**objects))\n',
    "args-bind-parameters": 'def g(a, p):\n    return p\ntorch.optim.AdamW(model.parameters(), lr=g(*[0, 2e-05]))\nmodel(**g(0, *(padded,)))\n',
    "stored-through-a-plain-alias": 'd = {"a": 0, "k": 1e-3}\nalias = d\nalias["k"] = 2e-05\ntorch.optim.AdamW(model.parameters(), lr=d["k"])\n'
                                    'e = {"k": to_max}\nother = e\nother.update(k=padded)\nmodel(**e.get("k"))\n',
    "merged-displays": 'a = {"enc": padded}\nb = {"lr": 2e-05}\nc = {**a, **b}\nmodel(**c["enc"])\ntorch.optim.AdamW(model.parameters(), lr=c["lr"])\n',
    "dict-call": 'a = {"enc": padded}\nc = dict(a, lr=2e-05)\nmodel(**c["enc"])\ntorch.optim.AdamW(model.parameters(), lr=dict(**c)["lr"])\n'
                 'd = dict([("enc", padded)], lr=2e-05)\nmodel(**d.get("enc"))\n',
    "kwargs-in-a-function": 'def main():\n    d = {"lr": 1e-3}\n    d["lr"] = 2e-05\n    d.update(enc=padded)\n    model(**d["enc"])\n'
                            '    torch.optim.AdamW(model.parameters(), lr=d["lr"])\nmain()\n',
    "other-item-stored-in-a-branch": 'd = {"lr": 2e-05, "n": 1}\nif len(__name__) > 1:\n    d["n"] = 2\ntorch.optim.AdamW(model.parameters(), lr=d["lr"])\n',
    "same-item-stored-in-a-branch": 'd = {"lr": 2e-05}\nif len(__name__) > 1:\n    d["lr"] = 2e-05\ntorch.optim.AdamW(model.parameters(), lr=d["lr"])\n',
    "parameter-updated-in-a-branch": 'def train(cfg):\n    if len(__name__) > 1:\n        cfg.update(n=2)\n    torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n'
                                     'train({"lr": 2e-05, "n": 1})\n',
    "object-item-kept-by-a-store-in-a-branch": 'd = {"a": 0, "k": padded}\nif len(__name__) > 1:\n    d["a"] = 1\nmodel(**d["k"])\n',
    "object-item-updated-to-itself-in-a-branch": 'e = {"a": 0, "k": padded}\nif len(__name__) > 1:\n    e.update(k=padded)\nmodel(**e["k"])\n',
    "parameter-of-objects-stored-in-a-branch": 'def f(d):\n    if len(__name__) > 1:\n        d["k"] = padded\n    return d["k"]\nmodel(**f({"a": 0, "k": padded}))\n',
    "named-dict-passed-to-a-nested-function": 'def main():\n    def f(d):\n        if len(__name__) > 1:\n            d["a"] = 1\n        return d["k"]\n'
                                              '    d = {"a": 0, "k": 2e-05}\n    torch.optim.AdamW(model.parameters(), lr=f(d))\nmain()\n',
    # a store into a display's slots changes no object taken out of it (nor a dict holding one): the object keeps its value
    "part-kept-by-a-store-into-another-key": 'd = {"k": {"lr": 2e-05}, "a": 0}\nv = d["k"]\nd["a"] = 1\ntorch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    "part-kept-by-the-display's-methods": 'd = {"k": [padded], "a": 0}\nv = d["k"]\nd.update(a=1)\nd["k"] = []\ndel d["a"]\nmodel(**v[0])\n',
    "display-holding-a-part-kept": 'd = {"k": 2e-05, "a": 0}\nkw = {"lr": d["k"]}\nd["a"] = 1\ntorch.optim.AdamW(model.parameters(), **kw)\n',
    "part-of-a-part-kept": 'd = {"opt": {"inner": {"lr": 2e-05}}}\nv = d["opt"]\nw = v["inner"]\nd["x"] = 1\n'
                           'torch.optim.AdamW(model.parameters(), lr=w["lr"])\n',
    "part-stored-into-another-kept": 'src = {"k": [padded], "a": 0}\ndst = {}\ndst["k"] = src["k"]\nsrc["a"] = 1\nmodel(**dst["k"][0])\n',
    "display-changed-through-its-alias-kept-for-a-part": 'd = {"k": 2e-05, "a": 0}\nalias = d\nalias["a"] = 1\nkw = {}\nkw["lr"] = d["k"]\n'
                                                         'torch.optim.AdamW(model.parameters(), **kw)\n',
    # a function's name is its own, not a module name of one spelling
    "another-scope's-name-of-one-spelling": 'cfg = {"lr": 2e-05}\ndef f():\n    cfg = {"lr": 0.001}\n    alias = cfg\n    alias["lr"] = 0.1\n    return cfg\n'
                                           'f()\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "passed-to-a-function-that-stores-into-it": 'def train(cfg):\n    cfg["n"] = 2\n    torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n'
                                                'def main():\n    config = {"lr": 2e-05, "n": 1}\n    train(config)\nmain()\n',
}

# one object reached through two names, or changed where the dict's own events do not show it: never a wrong value
SHARED = {
    "element-aliased": 'cfg = {"opt": {"lr": 1e-05}}\ninner = cfg["opt"]\ninner["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["opt"]["lr"])\n',
    "element-aliased-updated": 'cfg = {"opt": {"lr": 1e-05}}\ninner = cfg["opt"]\ninner.update(lr=0.001)\ntorch.optim.AdamW(model.parameters(), lr=cfg["opt"]["lr"])\n',
    "stored-into-a-display": 'inner = {"lr": 1e-05}\ncfg = {"opt": inner}\ninner["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["opt"]["lr"])\n',
    "list-stored-into-a-display": 'inner = [to_max]\ncfg = {"opt": inner}\ninner[0] = padded\nmodel(**cfg["opt"][0])\n',
    "returned-by-a-helper": 'def same(c):\n    return c\ncfg = {"lr": 1e-05}\nx = same(cfg)\nx["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "loop-over-a-display": 'cfg = {"lr": 1e-05}\nfor c in [cfg]:\n    c["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "held-by-an-instance": 'class H:\n    def __init__(self, c):\n        self.c = c\ncfg = {"lr": 1e-05}\nh = H(cfg)\nh.c["lr"] = 0.001\n'
                           'torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "held-by-a-namespace": 'cfg = {"lr": 1e-05}\nns = types.SimpleNamespace(c=cfg)\nns.c["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "either-arm": 'cfg = {"lr": 1e-05}\nx = cfg if True else None\nx["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "returned-by-a-lambda": 'cfg = {"lr": 1e-05}\nx = (lambda: cfg)()\nx["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "a-get-default": 'cfg = {"lr": 1e-05}\nx = cfg.get("nothing", cfg)\nx["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    # a part of a display changed through the display or another part, or the display may be the part itself
    "part-changed-through-the-display": 'd = {"k": {"lr": 1e-05}}\nv = d["k"]\nd["k"]["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    "part-changed-through-a-sibling": 'd = {"k": {"lr": 1e-05}, "j": 0}\nd["j"] = d["k"]\nv = d["k"]\nw = d["j"]\nw["lr"] = 0.001\n'
                                      'torch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    "part-of-a-display-holding-itself": 'd = {"lr": 1e-05}\nd["self"] = d\nv = d["self"]\nd["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    "part-that-may-be-the-other-display": 'a = {"lr": 1e-05, "y": {}}\np = {"x": a}\nv = p["x"] if len(__name__) > 1 else a["y"]\na["lr"] = 0.001\n'
                                          'torch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    "part-stored-into-another-changed-in-the-first": 'src = {"k": {"lr": 1e-05}}\ndst = {}\ndst["k"] = src["k"]\nsrc["k"]["lr"] = 0.001\n'
                                                     'torch.optim.AdamW(model.parameters(), lr=dst["k"]["lr"])\n',
    "part-extended-by-an-augmented-store": 'd = {"k": [padded]}\nb = d["k"]\nd["k"] += [to_max]\nmodel(**b[-1])\n',
    "part-changed-by-a-callee-it-is-passed-to": 'd = {"k": {"lr": 1e-05}}\nv = d["k"]\ndef f(x):\n    x["lr"] = 0.001\nf(d["k"])\n'
                                                'torch.optim.AdamW(model.parameters(), lr=v["lr"])\n',
    # an object stored into a dict or list, then changed through its own name (a value, not the object, was kept)
    "stored-as-an-item-then-changed": 'inner = {"lr": 1e-05}\nd = {}\nd["k"] = inner\ninner["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=d["k"]["lr"])\n',
    "appended-then-changed": 'inner = {"lr": 1e-05}\nxs = []\nxs.append(inner)\ninner["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=xs[0]["lr"])\n',
    # one object through a module name read in a function, or through `self` in two methods
    "module-name-changed-through-a-function's-alias": 'cfg = {"lr": 1e-05}\ndef f():\n    alias = cfg\n    alias["lr"] = 0.001\nf()\n'
                                                       'torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "held-by-self-changed-in-another-method": 'class H:\n    def __init__(self, c):\n        self.c = c\n    def bump(self):\n        x = self.c\n        x["lr"] = 0.001\n'
                                              'cfg = {"lr": 1e-05}\nh = H(cfg)\nh.bump()\ntorch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n',
    "nested-item-updated": 'cfg = {"opt": {"lr": 1e-05}}\ncfg["opt"].update(lr=0.001)\ntorch.optim.AdamW(model.parameters(), lr=cfg["opt"]["lr"])\n',
    "stored-in-a-branch": 'd = {"lr": 1e-05}\nif len(__name__) > 1:\n    d["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=d["lr"])\n',
    "object-item-stored-in-a-branch": 'd = {"a": 0, "k": to_max}\nif len(__name__) > 1:\n    d["k"] = padded\nmodel(**d["k"])\n'
                                      'def f(e):\n    if len(__name__) > 1:\n        e.update(k=padded)\n    return e["k"]\nmodel(**f({"k": to_max}))\n',
    "object-item-stored-through-an-alias-in-a-branch": 'd = {"a": 0, "k": to_max}\nal = d\nif len(__name__) > 1:\n    al["k"] = padded\n'
                                                       'if len(__name__) > 1:\n    d["a"] = 1\nmodel(**d["k"])\n',
    "object-item-stored-by-a-callee-in-a-branch": 'def g(c):\n    if len(__name__) > 1:\n        c["k"] = padded\nd = {"a": 0, "k": to_max}\ng(d)\n'
                                                  'if len(__name__) > 1:\n    d["a"] = 1\nmodel(**d["k"])\n',
    "nested-function-called-before-the-read": 'def main():\n    def f(d):\n        d["k"] = 0.001\n        return 0\n    d = {"k": 1e-05}\n    f(d)\n'
                                              '    torch.optim.AdamW(model.parameters(), lr=d["k"])\nmain()\n',
    "nested-function-shadowed-at-the-call": 'def f(d):\n    return d["k"]\ndef main():\n    def f(d):\n        d["k"] = 0.001\n        return d["k"]\n'
                                            '    d = {"k": 1e-05}\n    f(d)\n    torch.optim.AdamW(model.parameters(), lr=d["k"])\nmain()\n',
    "objects-parameter-stored-by-an-earlier-call": 'def f(d):\n    if len(__name__) > 1:\n        d["a"] = 1\n    r = d["k"]\n    d["k"] = padded\n    return r\n'
                                                   'x = {"a": 0, "k": to_max}\nmodel(**f(x))\nmodel(**f(x))\n',
    "stored-by-a-function": 'd = {"enc": to_max}\ndef change():\n    d["enc"] = padded\nchange()\nmodel(**d["enc"])\n',
    "stored-later-in-the-loop": 'd = {"lr": 1e-05}\nfor _ in range(2):\n    torch.optim.AdamW(model.parameters(), lr=d["lr"])\n    d["lr"] = 0.001\n',
    "changed-by-the-name-read-through-the-alias": 'd = {"k": 1e-05}\nalias = d\nd["k"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=alias["k"])\n'
                                                  'e = {"k": to_max}\nother = e\ne["k"] = padded\nmodel(**other["k"])\n',
    "alias-rebound-name": 'd = {"k": 1e-05}\nalias = d\nd = {"k": 0.001}\nalias["k"] = 0.1\ntorch.optim.AdamW(model.parameters(), lr=d["k"])\n',
    "alias-changed-in-a-branch": 'd = {"k": 1e-05}\nalias = d\nif len(__name__) > 1:\n    alias["k"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=d["k"])\n',
    "a-copy-changed-shares-the-nested-dict": 'a = {"opt": {"lr": 1e-05}}\nc = dict(a)\nc["opt"]["lr"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=a["opt"]["lr"])\n'
                                             'b = {"opt": {"lr": 1e-05}}\nd = {**b}\nd["opt"].update(lr=0.001)\ntorch.optim.AdamW(model.parameters(), lr=b["opt"]["lr"])\n',
    "new-key-stored-in-a-branch": 'd = {"lr": 1e-05}\nif len(__name__) > 1:\n    d["n"] = 2\ntorch.optim.AdamW(model.parameters(), lr=len(d) * 1e-05)\n',
    "item-stored-then-stored-by-a-callee": 'def bump(cfg):\n    cfg["lr"] = 0.001\nconfig = {"a": 0}\nconfig["lr"] = 1e-05\nbump(config)\n'
                                           'torch.optim.AdamW(model.parameters(), lr=config["lr"])\n'
                                           'def main():\n    def fill(h):\n        h["k"] = 0.001\n    d = {"a": 0}\n    d["k"] = 1e-05\n    fill(d)\n'
                                           '    torch.optim.AdamW(model.parameters(), lr=d["k"])\nmain()\n',
    "read-after-the-function-stored-into-it": 'def bump(cfg):\n    cfg["lr"] = 0.001\nconfig = {"lr": 1e-05}\nbump(config)\n'
                                              'torch.optim.AdamW(model.parameters(), lr=config["lr"])\n',
    "function-storing-into-it-called-twice": 'def bump(cfg):\n    torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n    cfg["lr"] = 0.001\n'
                                             'config = {"lr": 1e-05}\nbump(config)\nbump(config)\n',
    "function-storing-into-it-in-a-loop": 'def bump(cfg):\n    torch.optim.AdamW(model.parameters(), lr=cfg["lr"])\n    cfg["lr"] = 0.001\n'
                                          'config = {"lr": 1e-05}\nfor _ in range(2):\n    bump(config)\n',
    "function-storing-into-it-called-first-in-the-statement": 'def bump(cfg):\n    cfg["lr"] = 0.001\n    return 0\nconfig = {"lr": 1e-05}\n'
                                                              'torch.optim.AdamW(model.parameters(), lr=(bump(config), config["lr"])[1])\n',
    "kwargs-key-given-twice": 'def f(p=None, **kw):\n    return p\nextra = {"p": 2e-05}\nextra["p"] = 0.001\ntorch.optim.AdamW(model.parameters(), lr=f(**extra))\n',
}


@pytest.mark.parametrize("shape", FOLLOWED)
def test_a_dict_changed_by_its_own_scope_or_spread_into_a_call_is_known(shape: str):
    outcome = run(PRELUDE + FOLLOWED[shape], {})
    assert not outcome.details, "\n".join(outcome.details)
    first = PRELUDE.count("\n")
    asked = {key: found for key, found in outcome.results.items() if key[0] > first}
    assert asked and all(found == "known" for found in asked.values()), asked


@pytest.mark.parametrize("shape", SHARED)
def test_a_dict_shared_or_changed_out_of_sight_never_gives_another_value(shape: str):
    outcome = run(PRELUDE + SHARED[shape], {})
    assert outcome.results and not outcome.details, "\n".join(outcome.details)
