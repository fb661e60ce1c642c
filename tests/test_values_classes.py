"""The value layer on the file's own classes: instances, `self` attributes, methods, class attributes, subclasses,
wherever the class statement runs (the module, a function, a method) — and UNKNOWN wherever which class or which
assignment is meant depends on the order of execution."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import UNKNOWN, Facts


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def printed(source: str) -> dict:
    """The keywords of the file's last `print(...)` call, evaluated there."""
    facts = facts_of(source)
    call = [c for c in facts.calls if facts.text(c.node.func) == "print"][-1]
    return {name: facts.kw_value(call, name) for name in call.kwargs}


def test_a_class_defined_in_a_function_is_constructed_and_read_like_a_module_class():
    assert printed("""
        def main():
            class Options:
                rate = 1e-3
                def __init__(self, size=16):
                    self.size = size
                def get(self):
                    return self.size
            print(rate=Options.rate, passed=Options(32).get())
        main()
    """) == {"rate": 1e-3, "passed": 32}


def test_a_parameter_of_init_of_a_class_in_a_function_is_what_its_constructions_pass():
    assert printed("""
        def main():
            class Trainer:
                def __init__(self, lr=1e-5):
                    print(lr=lr)
            Trainer(1e-3)
        main()
    """) == {"lr": 1e-3}


def test_a_name_two_class_statements_bind_resolves_to_neither():
    assert printed("""
        def first():
            class A:
                def __init__(self, lr=1e-5):
                    print(lr=lr)
            A(1e-3)
        def second():
            class A:
                def __init__(self, lr=1e-5):
                    self.lr = lr
            return A(1e-2)
        first()
    """) == {"lr": UNKNOWN}
    assert printed("""
        class A:
            lr = 1e-5
        before = A.lr
        class A:
            lr = 1e-3
        print(before=before, after=A.lr)
    """) == {"before": UNKNOWN, "after": UNKNOWN}


def test_a_class_of_a_function_is_not_the_module_name_it_shadows():
    assert printed("""
        Options = dict
        def main():
            class Options:
                lr = 1e-5
            return Options
        print(lr=Options(lr=1e-3)["lr"], inner=main().lr)
    """) == {"lr": UNKNOWN, "inner": 1e-5}


def test_self_attribute_is_what_every_class_whose_code_runs_on_self_binds():
    """`self` in a method of A may be an instance of a subclass of A, or of a class mixing A with another: what
    their methods bind counts too; a base's `__init__` and a class body's attribute are seen."""
    assert printed("""
        class A:
            def __init__(self):
                self.lr = 1e-5
            def make(self):
                print(lr=self.lr)
        class B(A):
            def __init__(self):
                self.lr = 1e-3
        B().make()
    """) == {"lr": UNKNOWN}
    assert printed("""
        class M:
            def setup(self):
                self.lr = 1e-3
        class A:
            def __init__(self):
                self.lr = 1e-5
            def make(self):
                print(lr=self.lr)
        class D(A, M):
            pass
        D().make()
    """) == {"lr": UNKNOWN}
    assert printed("""
        class A:
            rate = 1e-3
            def __init__(self):
                self.lr = 1e-5
        class B(A):
            def make(self):
                print(lr=self.lr, rate=self.rate)
        B().make()
    """) == {"lr": 1e-5, "rate": 1e-3}


def test_self_attribute_bound_where_no_assignment_of_a_class_shows_it_is_unknown():
    base = textwrap.dedent("""
        class A:
            rate = 1e-3
            def __init__(self):
                self.lr = 1e-5
            def make(self):
                print(lr=self.lr, rate=self.rate)
        a = A()
    """)
    assert printed(base + "a.make()\n") == {"lr": 1e-5, "rate": 1e-3}
    for change in ("a.lr = 1e-3", "setattr(a, 'lr', 1e-3)", "setattr(a, name, 1e-3)", "a.__dict__.update(lr=1e-3)",
                   "a.lr, b = 1e-3, 0", "del a.lr", "a.lr *= 2"):
        assert printed(base + change + "\na.make()\n")["lr"] is UNKNOWN, change
    for inside in ("self.lr, self.b = 1e-3, 0", "self.lr += 1", "for self.lr in [1e-3]: pass", "del self.lr"):
        assert printed(base + f"class B(A):\n    def more(self):\n        {inside}\nB().make()\n")["lr"] is UNKNOWN, inside
    assert printed(base.replace("rate = 1e-3", "def rate(self):\n        return 1e-3") + "a.make()\n")["rate"] is UNKNOWN


def test_a_property_read_on_self_is_what_its_getter_returns():
    source = """
        class Trainer:
            def __init__(self):
                self._lr = 2e-5
            @property
            def lr(self):
                return self._lr
            def train(self):
                print(lr=self.lr)
        Trainer().train()
    """
    assert printed(source) == {"lr": 2e-5}
    setter = "\n    @lr.setter\n    def lr(self, value):\n        self._lr = value\n"
    assert printed(textwrap.dedent(source).replace("\n    def train", setter + "    def train")) == {"lr": UNKNOWN}
    overridden = "class Fast(Trainer):\n    lr = 1e-3\nFast().train()\n"
    assert printed(textwrap.dedent(source) + overridden) == {"lr": UNKNOWN}


def test_a_method_self_calls_may_be_inherited_from_a_class_of_the_file():
    source = """
        import torch
        class Base(torch.nn.Module):
            def rate(self):
                return 1e-3
        class Model(Base):
            def make(self):
                print(lr=self.rate())
        Model().make()
    """
    assert printed(source) == {"lr": 1e-3}
    # a subclass of Model or a mixin listed with it may define its own: which one runs depends on the instance
    assert printed(textwrap.dedent(source) + "class Fast(Model):\n    def rate(self):\n        return 1e-2\n") == {"lr": UNKNOWN}
    assert printed(textwrap.dedent(source) + "class M:\n    def rate(self):\n        return 1e-2\nclass D(M, Model):\n    pass\n") == {"lr": UNKNOWN}
    # a library class listed before the file's base may define it first
    assert printed(textwrap.dedent(source).replace("class Model(Base)", "class Model(torch.nn.Module, Base)")) == {"lr": UNKNOWN}


def test_self_attribute_set_to_none_until_a_method_binds_an_object_is_that_object():
    facts = facts_of("""
        from transformers import AutoModel
        class Runner:
            def __init__(self, lr=None):
                self.model = None
                self.lr = None
            def load(self):
                self.model = AutoModel.from_pretrained("bert-base-uncased")
                self.lr = 1e-3
            def train(self):
                print(model=self.model, lr=self.lr)
        Runner().train()
    """)
    call = [c for c in facts.calls if facts.text(c.node.func) == "print"][-1]
    model = facts.kind(call.kwargs["model"].value, call.scope, call.order)
    assert model is not None and model.kind == "model"
    assert facts.kw_value(call, "lr") is UNKNOWN  # a constant may well be None when read


def test_a_method_called_on_an_instance_may_be_inherited():
    source = """
        class Options:
            rate = 1e-3
            def get(self):
                return self.rate
        class Fast(Options):
            pass
        print(lr=Fast().get())
    """
    assert printed(source) == {"lr": 1e-3}
    assert printed(source.replace("pass", "def get(self):\n                return 1e-2")) == {"lr": 1e-2}
    assert printed(source.replace("class Fast(Options)", "class Fast(dict, Options)")) == {"lr": UNKNOWN}  # dict's own `get` first


def test_an_object_a_class_attribute_holds_is_called_through_the_class():
    facts = facts_of("""
        from transformers import AutoTokenizer
        def main():
            class CFG:
                tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")
            print(enc=CFG.tokenizer(["a", "b"], padding=True))
        main()
    """)
    call = [c for c in facts.calls if facts.text(c.node.func) == "print"][-1]
    found = facts.kind(call.kwargs["enc"].value, call.scope, call.order)
    assert found is not None and found.kind == "encoding"


def test_a_dataclass_field_read_on_self_is_what_its_constructions_pass():
    source = textwrap.dedent("""
        from dataclasses import dataclass, field
        from transformers import HfArgumentParser
        @dataclass
        class Collator:
            max_length: int
            lr: float = 1e-5
            sizes: list = field(default_factory=list)
            def make(self):
                print(lr=self.lr, max_length=self.max_length)
    """)
    assert printed(source + "Collator(128, lr=1e-3).make()\n") == {"lr": 1e-3, "max_length": 128}
    assert printed(source + "Collator(max_length=64).make()\n") == {"lr": 1e-5, "max_length": 64}
    assert printed(source + "Collator(64).make()\nCollator(64, 1e-3)\n") == {"lr": UNKNOWN, "max_length": 64}
    for hidden in ("HfArgumentParser(Collator).parse_args_into_dataclasses()[0].make()", "Collator(**{'max_length': 8}).make()"):
        assert printed(source + hidden + "\n") == {"lr": UNKNOWN, "max_length": UNKNOWN}, hidden


def test_a_class_attribute_read_on_self_is_unknown_where_a_library_base_or_decorator_may_remake_it():
    source = """
        import enum
        import typing
        class Options{bases}:
            lr: float = 1e-5
            def make(self):
                print(lr=self.lr)
        Options().make()
    """
    assert printed(source.format(bases="")) == {"lr": 1e-5}
    for bases in ("(typing.NamedTuple)", "(enum.Enum)"):
        assert printed(source.format(bases=bases)) == {"lr": UNKNOWN}, bases
    assert printed(source.format(bases="").replace("class Options", "@register\n        class Options")) == {"lr": UNKNOWN}


MODULE = """
    import torch
    from transformers import Trainer
    class Net(torch.nn.Module):
        def forward(self, x):
            print(x=x)
            return x
        def step(self):
            return {call}
    net = Net()
"""


@pytest.mark.parametrize("call, rest, expected", [
    ("self(7)", "net.step()\n", 7),  # the module's `__call__` runs `forward`
    ("self.forward(7)", "net.step()\n", 7),
    ("self(7)", "net.step()\nisinstance(net, torch.nn.Module)\n", 7),  # a builtin never calls it
    ("self(7)", "net.step()\nnet(7)\n", 7),
    ("self(7)", "net.step()\nnet(5)\n", UNKNOWN),  # two sites, two values: `net(5)` alone would say 5
    ("self(7)", "net.step()\ntorch.save(net, 'net.pt')\n", 7),  # pickled, never called
    ("self(7)", "net.step()\nTrainer(model=net).train()\n", UNKNOWN),  # a library handed the module calls it as it likes
    ("7", "net(5)\ntorch.nn.DataParallel(net)(3)\n", UNKNOWN),  # a wrapper runs it with its own calls' arguments
    ("7", "net(5)\ndef go(m):\n    Trainer(model=m)\ngo(net)\n", UNKNOWN),  # handed on through the file's function
    ("7", "net(5)\ndef go(m):\n    return m(5)\ngo(net)\n", 5),  # the file's function calls it itself
])
def test_forward_of_the_files_module_is_what_every_call_of_it_passes_self_calls_too(call, rest, expected):
    found = printed(textwrap.dedent(MODULE).format(call=call) + rest)["x"]
    assert found == expected if expected is not UNKNOWN else found is UNKNOWN


def test_forward_of_a_module_the_file_never_builds_is_unknown_whatever_its_methods_pass():
    """An importer builds it and may call it with anything: its own `self(...)` calls are not every run."""
    assert printed(textwrap.dedent(MODULE).format(call="self(7)").replace("net = Net()", "")) == {"x": UNKNOWN}


def test_a_base_init_runs_for_a_subclass_only_through_super_when_the_subclass_has_its_own_init():
    """`Sub(texts)` runs `Sub.__init__`, whose `super().__init__(max_length)` is the one call of the base's `__init__`
    it makes: the subclass's construction passes nothing to the base's parameters by position."""
    source = """
        class Base:
            def __init__(self, max_length=64):
                self.max_length = max_length
        class Sub(Base):
            def __init__(self, texts, max_length=16):
                super().__init__(max_length)
                self.texts = texts
            def run(self):
                print(m=self.max_length)
        Sub(["a", "b"])
        {}
    """
    assert printed(source.format("")) == {"m": 16}
    assert printed(source.format('Sub(["c"], max_length=32)')) == {"m": UNKNOWN}  # two constructions, two lengths


def test_a_subclass_without_init_of_its_own_is_a_construction_of_its_base_init():
    assert printed("""
        class Base:
            def __init__(self, max_length=64):
                self.max_length = max_length
        class Sub(Base):
            def run(self):
                print(m=self.max_length)
        Sub(max_length=32)
    """) == {"m": 32}


DATASET = """
    from transformers import AutoTokenizer
    class Texts:
        def __init__(self, texts, tokenizer, max_length=128):
            self.texts = texts
            self.tokenizer = tokenizer
            self.max_length = max_length
        def all_texts(self):
            return self.texts
        def encode(self):
            self.tokenizer(self.texts, max_length=self.max_length)
            self.tokenizer(self.all_texts(), max_length=self.max_length)
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
    {}
"""


def texts_answers(*constructions: str) -> list:
    """`is_batch` of the texts of each tokenizer call in `Texts.encode`, and the `max_length` each passes."""
    facts = facts_of(DATASET.format("\n    ".join(constructions)))
    calls = [c for c in facts.tokenizer_calls if enclosing_name(c) == "encode"]
    return [(facts.is_batch(c.positional[0].value, c.scope, c.order), facts.kw_value(c, "max_length")) for c in calls]


def enclosing_name(call) -> str:
    return call.scope.node.name.value


def test_self_texts_are_several_or_one_where_every_construction_of_the_class_says_so():
    """Texts an instance stores, read in its methods directly or through a method returning them: what each
    construction passes, joined (two lists of other lengths are several texts; two strings one text each), with the
    `max_length` each construction passes or the default."""
    assert texts_answers('Texts(["a b", "c"], tok).encode()', 'Texts(["x", "y", "z"], tok, max_length=128)') == [(True, 128)] * 2
    assert texts_answers('Texts("one", tok)', 'Texts(texts="two", tokenizer=tok)') == [(False, 128)] * 2


def test_self_texts_are_unknown_where_constructions_disagree_or_none_is_shown():
    assert texts_answers('Texts(["a b", "c"], tok)', 'Texts("two", tok, max_length=64)') == [(UNKNOWN, UNKNOWN)] * 2
    assert texts_answers("") == [(UNKNOWN, UNKNOWN)] * 2  # never constructed here: whoever builds it passes what it passes


STORED_BESIDE = """
    import argparse
    class Texts:
        def __init__(self, max_length=128):
            self.max_length = max_length
        def encode(self):
            print(m=self.max_length)
    class Config:
        max_length = 64
    {}
    Texts().encode()
"""


def test_a_store_of_the_attribute_on_an_object_no_instance_of_the_class_leaves_self_attribute_known():
    """`args.max_length = 256` binds the attribute of a parsed command line, `cfg.max_length = ...` of another class's
    instance: neither can be the instance whose `self.max_length` is read."""
    for store in ("args = argparse.ArgumentParser().parse_args()\n    args.max_length = 256", "cfg = Config()\n    cfg.max_length = 256"):
        assert printed(STORED_BESIDE.format(store)) == {"m": 128}, store


def test_a_store_of_the_attribute_on_an_instance_of_the_class_or_an_unknown_object_leaves_it_unknown():
    for store in ("t = Texts()\n    t.max_length = 256", "import sys\n    obj = sys.modules[__name__]\n    obj.max_length = 256", "def f(o):\n        o.max_length = 256"):
        assert printed(STORED_BESIDE.format(store)) == {"m": UNKNOWN}, store
