"""Lightning's `self.save_hyperparameters()` (`facts/brain/hparams.py`): `self.hparams.x` is the `__init__` parameter
`x` where the call runs, joined over the file's constructions; unknown wherever Lightning would collect other
arguments, or the file stores into, mutates or hands along `hparams`, or loads the class from a checkpoint."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts import UNKNOWN, Facts
from bertlint.facts.abstract import Choice

MODULE = """\
import pytorch_lightning as pl


class Module(pl.LightningModule):
    def __init__(self, name, lr=1e-3, wd=0.1, *args, **kwargs):
        {init}
        self.save_hyperparameters({saver})

    def configure_optimizers(self):
        probe(lr=self.hparams.lr, name=self.hparams.name, wd=self.hparams.wd, kwargs=self.hparams.kwargs)

{after}
"""


def hparam(name: str, init: str = "super().__init__()", saver: str = "", after: str = 'model = Module("bert", lr=2e-5)'):
    source = MODULE.format(init=init, saver=saver, after=textwrap.dedent(after))
    facts = Facts(cst.parse_module(source), source)
    return facts.evaluate(*probe(facts, name))


def test_an_hparam_is_the_init_argument_passed_or_its_default():
    assert hparam("lr") == 2e-5
    assert hparam("name") == "bert"
    assert hparam("wd") == 0.1


def test_two_constructions_that_agree_or_not():
    assert hparam("name", after='a = Module("bert", lr=2e-5)\nb = Module("bert")') == "bert"
    # the two constructions' rates: one of them, no one constant (`abstract.Choice`; a consumer asking a constant reads UNKNOWN)
    assert hparam("lr", after='a = Module("bert", lr=2e-5)\nb = Module("bert")') == Choice((2e-5, 1e-3))


def test_an_init_argument_rebound_before_the_call_is_the_new_value():
    assert hparam("lr", init="super().__init__()\n        lr = lr * 10") == pytest.approx(2e-4)


def test_self_and_star_arguments_and_ignored_names_are_not_hparams():
    assert hparam("kwargs") is UNKNOWN
    assert hparam("wd", saver='ignore=["wd"]') is UNKNOWN
    assert hparam("wd", saver='ignore="wd"') is UNKNOWN
    assert hparam("lr", saver='ignore=["wd"]') == 2e-5


@pytest.mark.parametrize("init", [
    "pl.LightningModule.__init__(self)",  # no `__class__` cell: `_get_init_args` collects nothing
])
def test_an_init_that_never_names_super_saves_nothing(init):
    assert hparam("lr", init=init) is UNKNOWN


def test_the_class_named_other_than_constructed_is_unknown():
    # `super(Module, self)` has the `__class__` cell too, but the name read there is not told from a hand-off
    assert hparam("lr", init="super(Module, self).__init__()") is UNKNOWN


@pytest.mark.parametrize("saver, after", [
    ('"lr"', 'model = Module("bert", lr=2e-5)'),  # named arguments only
    ("", 'model = Module("bert", lr=2e-5)\nmodel.hparams.lr = 1.0'),
    ("", 'model = Module("bert", lr=2e-5)\nmodel.hparams.update(lr=1.0)'),
    ("", 'model = Module("bert", lr=2e-5)\nmodel.hparams["lr"] = 1.0'),
    ("", 'model = Module("bert", lr=2e-5)\nhp = model.hparams'),
    ("", 'model = Module.load_from_checkpoint("last.ckpt")'),
    ("", 'model = Module("bert", lr=2e-5)\nloaded = model.load_from_checkpoint("last.ckpt")'),
    ("", 'model = Module("bert", lr=2e-5)\ncli = LightningCLI(Module)'),  # constructed elsewhere too
    ("", 'class Other(pl.LightningModule):\n    def __init__(self):\n        super().__init__()\n        self.inner = Module("bert", lr=2e-5)'),
    ("", 'class Sub(Module):\n    def __init__(self):\n        super().__init__("bert", lr=1.0)'),
])
def test_where_lightning_may_save_something_else_the_hparam_is_unknown(saver, after):
    assert hparam("lr", saver=saver, after=after) is UNKNOWN


def test_another_class_of_the_file_loaded_from_a_checkpoint_is_no_doubt():
    after = 'class Other(pl.LightningModule):\n    pass\nmodel = Module("bert", lr=2e-5)\nother = Other.load_from_checkpoint("last.ckpt")'
    assert hparam("lr", after=after) == 2e-5
    after = 'from main import Pretrained\nmodel = Module("bert", lr=2e-5)\nother = Pretrained.load_from_checkpoint("last.ckpt")'
    assert hparam("lr", after=after) == 2e-5


def test_another_class_saving_its_own_hparams_is_no_doubt():
    after = 'class Data(pl.LightningDataModule):\n    def __init__(self, bs=8):\n        super().__init__()\n        self.save_hyperparameters()\nmodel = Module("bert", lr=2e-5)\ndata = Data()'
    assert hparam("lr", after=after) == 2e-5


def test_hparams_of_a_class_of_no_lightning_base_are_unknown():
    source = MODULE.format(init="super().__init__()", saver="", after='model = Module("bert", lr=2e-5)').replace("(pl.LightningModule)", "")
    facts = Facts(cst.parse_module(source), source)
    assert facts.evaluate(*probe(facts, "lr")) is UNKNOWN
