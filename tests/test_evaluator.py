"""The evaluator (facts/evaluator.py) and the library models it runs (facts/brain/): the everyday shapes of
training scripts resolve through general mechanisms — targets of any shape, comprehensions, the file's own
functions, classes and instances, configuration returned by helpers, padding by other means, texts that are many —
each on several variants, and UNKNOWN (no finding) where the value could differ."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from conftest import lint_text

from bertlint.facts import UNKNOWN, Facts, shared


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def last_call(facts: Facts, name: str):
    return [c for c in facts.calls if facts.text(c.node.func) == name][-1]


def ids_reaching(source: str, callee: str = "model"):
    """(kind, key, parent kind) of the first argument of the last call of `callee`."""
    facts = facts_of(source)
    call = last_call(facts, callee)
    found = facts.kind(call.arg(0, "input_ids").value, call.scope, call.order)
    return None if found is None else (found.kind, found.detail, found.parent.kind if found.parent else None)


# --------------------------------------------------------------------------- a batch unpacked

LOADER = """\
import torch
from torch.utils.data import TensorDataset, DataLoader
from transformers import AutoTokenizer, AutoModelForSequenceClassification
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
enc = tok(["a b", "c"], padding=True, return_tensors="pt")
ds = TensorDataset(enc["input_ids"], enc["attention_mask"], torch.tensor([0, 1]))
loader = DataLoader(ds, batch_size=2)
"""


@pytest.mark.parametrize(
    "loop",
    [
        "for b_ids, b_mask, b_labels in loader:\n    model(b_ids, labels=b_labels)\n",
        "for step, (b_ids, b_mask, b_labels) in enumerate(loader):\n    model(b_ids, labels=b_labels)\n",
        "for batch in loader:\n    b_ids, b_mask, b_labels = batch\n    model(b_ids, labels=b_labels)\n",
        "for batch in loader:\n    batch = tuple(t.to('cpu') for t in batch)\n    b_ids, b_mask, b_labels = batch\n    model(b_ids, labels=b_labels)\n",
        "for batch in loader:\n    b_ids, b_mask, b_labels = [x.to('cpu') for x in batch]\n    model(b_ids, labels=b_labels)\n",
        "for batch in loader:\n    b_ids, *rest = batch\n    model(b_ids, labels=rest[-1])\n",
        "from tqdm import tqdm\nfor step, batch in enumerate(tqdm(loader)):\n    b_ids = batch[0].to('cpu')\n    model(b_ids)\n",
        "for (b_ids, b_mask, b_labels), n in zip(loader, range(3)):\n    model(b_ids)\n",
        "def unpack(b):\n    return b[0].cuda(), b[2].cuda()\nfor batch in loader:\n    ids, labels = unpack(batch)\n    model(ids, labels=labels)\n",
        "for batch in loader:\n    ids, mask, labels = map(lambda t: t.to('cpu'), batch)\n    model(ids)\n",
        "for batch in loader:\n    batch = [x.long() for x in batch]\n    model(batch[0])\n",
    ],
)
def test_a_batch_unpacked_by_any_target_is_the_datasets_tensor_at_that_position(loop):
    assert ids_reaching(LOADER + loop) == ("ids", "input_ids", "encoding")


@pytest.mark.parametrize(
    "loop",
    [
        "for b_mask, b_ids, b_labels in loader:\n    model(b_ids)\n",  # the mask's position: not the ids
        "for batch in loader:\n    b_ids, b_labels = batch[1], batch[2]\n    model(b_ids)\n",
        "for batch in loader:\n    batch = tuple(t.to('cpu') for t in batch if t is not None)\n    model(batch[0])\n",  # filtered
    ],
)
def test_a_batch_element_that_is_not_the_ids_or_not_known_stays_so(loop):
    assert ids_reaching(LOADER + loop) in (None, ("ids", "attention_mask", "encoding"))


def test_constants_unpack_through_tuple_returns_nested_and_starred_targets():
    facts = facts_of("""
        def hp():
            return (1e-5, 16), "x"
        (lr, bs), name = hp()
        first, *rest = [1, 2, 3]
        *init, last = (4, 5, 6)
        print(a=lr, b=bs, c=name, d=rest, e=init, f=last)
    """)
    call = last_call(facts, "print")
    assert [facts.kw_value(call, k) for k in "abcdef"] == [1e-5, 16, "x", [2, 3], [4, 5], 6]


# --------------------------------------------------------------------------- configuration

ARGPARSE = "import argparse\n"


@pytest.mark.parametrize(
    "source",
    [
        ARGPARSE + "def parse_args():\n    p = argparse.ArgumentParser()\n    p.add_argument('--lr', type=float, default=3e-5)\n    return p.parse_args()\nargs = parse_args()\nprint(lr=args.lr)\n",
        ARGPARSE + "def main(args):\n    print(lr=args.lr)\nif __name__ == '__main__':\n    p = argparse.ArgumentParser()\n    p.add_argument('--lr', default=3e-5)\n    main(p.parse_args())\n",
        ARGPARSE + "def get_parser():\n    p = argparse.ArgumentParser()\n    p.add_argument('--lr', default=3e-5)\n    return p\nargs = get_parser().parse_args()\nprint(lr=args.lr)\n",
        ARGPARSE + "p = argparse.ArgumentParser()\np.add_argument('--lr', default=3e-5)\nargs, _ = p.parse_known_args()\nprint(lr=args.lr)\n",
    ],
)
def test_configuration_returned_by_a_helper_is_a_command_line_like_default(source):
    facts = facts_of(source)
    call = last_call(facts, "print")
    assert facts.kw_value(call, "lr") == 3e-5 and facts.kw_value(call, "lr", cli=False) is UNKNOWN


def test_the_init_default_of_a_class_the_file_never_builds_is_unknown():
    # another file builds it, with arguments this file does not show (built here without them, the default is
    # certain: `cfg = Cfg()` below)
    facts = facts_of("class Trainer:\n    def __init__(self, lr=3e-5):\n        self.lr = lr\n    def fit(self):\n        print(lr=self.lr)\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


@pytest.mark.parametrize(
    "source",
    [
        "class Cfg:\n    def __init__(self, lr=1e-2):\n        self.lr = lr\ncfg = Cfg(lr=3e-5)\nprint(lr=cfg.lr)\n",
        "class Cfg:\n    def __init__(self, lr=3e-5, bs=8):\n        self.lr = lr\ncfg = Cfg()\nprint(lr=cfg.lr)\n",
        "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    lr: float = 3e-5\nprint(lr=Cfg().lr)\n",
        "class Cfg:\n    def __init__(self, lr):\n        self.lr = lr\n    def get(self):\n        return self.lr\nprint(lr=Cfg(3e-5).get())\n",
        "def outer():\n    lr = 3e-5\n    def inner():\n        return lr\n    return inner()\nprint(lr=outer())\n",
        "f = lambda: 3e-5\nprint(lr=f())\n",
        "import functools\ndef scale(base, k):\n    return base * k\ng = functools.partial(scale, k=3)\nprint(lr=g(1e-5))\n",
    ],
)
def test_values_built_in_the_files_own_classes_closures_lambdas_and_partials_resolve(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr", cli=False) == pytest.approx(3e-5)


@pytest.mark.parametrize(
    "source",
    [
        "class T:\n    def __init__(self, lr=1e-2):\n        self.lr = lr\n    def reset(self):\n        self.lr = 0.5\n    def fit(self):\n        print(lr=self.lr)\n",
        "class Cfg:\n    def __init__(self, lr=1e-2):\n        self.lr = lr\ncfg = Cfg()\ncfg.lr = 0.5\nprint(lr=cfg.lr)\n",
        "import torch\nclass Cfg(torch.nn.Module):\n    def __init__(self, lr=1e-2):\n        self.lr = lr\nprint(lr=Cfg().lr)\n",
        "import random\nf = lambda: 1e-2\nif random.random() > 0.5:\n    f = lambda: 2e-2\nprint(lr=f())\n",
        # a dataclass field rebound through the instance's name, read through another object's attribute
        "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    lr: float = 1e-2\nclass M:\n    def __init__(self, cfg):\n        self.cfg = cfg\n"
        "        print(lr=self.cfg.lr)\ncfg = Cfg()\ncfg.lr = 0.5\nM(cfg)\n",
        "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    lr: float = 1e-2\ndef run(cfg):\n    holder = [cfg]\n    print(lr=holder[0].lr)\n"
        "for lr in [0.5]:\n    cfg = Cfg()\n    cfg.lr = lr\n    run(cfg)\n",
    ],
)
def test_attributes_set_in_several_places_or_on_foreign_bases_stay_unknown(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


# --------------------------------------------------------------------------- ids padded by other means, texts that are many

HEAD = """\
import torch
import torch.nn.functional as F
from torch.utils.data import TensorDataset, DataLoader
from torch.nn.utils.rnn import pad_sequence
from transformers import AutoTokenizer, AutoModelForSequenceClassification
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
texts = ["a b", "c"]
"""

PADDED = {
    "per-text max_length, torch.cat": "rows = []\nfor t in texts:\n    e = tok(t, padding='max_length', max_length=64, truncation=True, return_tensors='pt')\n    rows.append(e['input_ids'])\nids = torch.cat(rows, dim=0)\n{call}\n",
    "per-text max_length, torch.stack": "ids = torch.stack([tok.encode_plus(t, padding='max_length', max_length=32, return_tensors='pt')['input_ids'][0] for t in texts])\n{call}\n",
    "batch_encode_plus in a TensorDataset": "ids = tok.batch_encode_plus(texts, padding=True, return_tensors='pt')['input_ids']\nloader = DataLoader(TensorDataset(ids, torch.tensor([0, 1])), batch_size=2)\nfor ids, labels in loader:\n    {call}\n",
    "pad_sequence": "ids = pad_sequence([torch.tensor(tok.encode(t)) for t in texts], batch_first=True, padding_value=0)\n{call}\n",
    "F.pad": "ids = torch.tensor(tok.encode(texts[0]))\nids = F.pad(ids, (0, 64 - len(ids)), value=0).unsqueeze(0)\n{call}\n",
    "keras pad_sequences": "from tensorflow.keras.preprocessing.sequence import pad_sequences\nids = torch.tensor(pad_sequences([tok.encode(t) for t in texts], maxlen=64, padding='post'))\n{call}\n",
    "padded by hand": "ids = tok.encode(texts[0])\nids = ids + [0] * (64 - len(ids))\nids = torch.tensor([ids])\n{call}\n",
    "padded by hand with the pad id": "ids = tok.encode(texts[0])\nids = ids + [tok.pad_token_id] * (64 - len(ids))\nids = torch.tensor([ids])\n{call}\n",
    "a padding collator's batch": "from transformers import DataCollatorWithPadding\nloader = DataLoader([tok(t) for t in texts], batch_size=2, collate_fn=DataCollatorWithPadding(tok))\nfor batch in loader:\n    ids = batch['input_ids']\n    {call}\n",
    "a pandas column": "import pandas as pd\ndf = pd.read_csv('train.csv').dropna()\nids = tok(df['text'].tolist(), padding=True, return_tensors='pt')['input_ids']\n{call}\n",
    "a pandas column's values": "import pandas as pd\ndf = pd.read_csv('train.csv')\nsentences = df['sentence'].values\nids = tok(sentences, padding='longest', return_tensors='pt').input_ids\n{call}\n",
    "a datasets column": "from datasets import load_dataset\nraw = load_dataset('imdb')\nids = tok(raw['train']['text'], padding=True, truncation=True, return_tensors='pt')['input_ids']\n{call}\n",
    "a file's lines": "with open('train.txt') as f:\n    lines = [l.strip() for l in f]\nids = tok(lines, padding=True, return_tensors='pt')['input_ids']\n{call}\n",
    "a file's splitlines": "lines = open('train.txt').read().splitlines()\nids = tok(lines, padding=True, return_tensors='pt')['input_ids']\n{call}\n",
}


@pytest.mark.parametrize("shape", sorted(PADDED))
def test_ids_padded_by_any_means_reach_bl201(shape):
    bad = HEAD + PADDED[shape].format(call="out = model(ids)")
    good = HEAD + PADDED[shape].format(call="out = model(ids, attention_mask=(ids != 0).long())")
    assert [f.code for f in lint_text(bad) if f.code == "BL201"] == ["BL201"]
    assert [f.code for f in lint_text(good) if f.code == "BL201"] == []


@pytest.mark.parametrize(
    "lines",
    [
        "ids = tok.encode(texts[0])\nids = ids + [tok.sep_token_id]\nout = model(torch.tensor([ids]))\n",  # a token added, no padding
        "ids = F.pad(torch.zeros(3, 4), (0, 2))\nout = model(ids)\n",  # a padded tensor that held no ids
        "rows = [tok(t, truncation=True, return_tensors='pt')['input_ids'] for t in texts]\nout = model(rows[0])\n",  # one text, unpadded
        "import pandas as pd\ndf = pd.read_csv('train.csv')\nout = model(tok(df['text'][0], padding=True, return_tensors='pt')['input_ids'])\n",  # one row
        "from datasets import load_dataset\nraw = load_dataset('imdb')\nout = model(tok(raw['train'][0]['text'], padding=True, return_tensors='pt')['input_ids'])\n",
        "def enc(example):\n    return tok(example['text'], padding=True)\nout = model(torch.tensor(enc({'text': 'one'})['input_ids']))\n",
    ],
)
def test_ids_that_may_be_unpadded_stay_silent(lines):
    assert [f.code for f in lint_text(HEAD + lines) if f.code == "BL201"] == []


BRANCHES = """\
import sys
import torch
from transformers import AutoTokenizer, AutoModelForSequenceClassification
if sys.argv[1] == "bert":
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
elif sys.argv[1] == "roberta":
    tok = AutoTokenizer.from_pretrained("roberta-base")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
"""


def test_tokenizers_loaded_on_several_branches_join_into_a_tokenizer_of_unknown_checkpoint():
    facts = facts_of(BRANCHES + "print(tok)\n")
    call = last_call(facts, "print")
    found = facts.kind(call.positional[0].value, call.scope, call.order)
    assert found is not None and found.kind == "tokenizer" and found.call is None


def test_ids_a_tokenizer_of_several_branches_makes_and_f_pad_pads_reach_bl201():
    lines = "ids = tok.convert_tokens_to_ids(tok.tokenize('a b'))\nids = torch.nn.functional.pad(torch.tensor(ids), (0, 62), value=0).unsqueeze(0)\n"
    assert [f.code for f in lint_text(BRANCHES + lines + "out = model(ids)\n") if f.code == "BL201"] == ["BL201"]
    assert [f.code for f in lint_text(BRANCHES + lines + "out = model(ids, attention_mask=(ids != 0).long())\n") if f.code == "BL201"] == []


@pytest.mark.parametrize("owner", ["self.model", "self.net"])
def test_a_model_and_tokenizer_built_in_the_files_own_class_are_used_through_self(owner):
    source = HEAD + textwrap.dedent(f"""\
        class Classifier:
            def __init__(self, name="bert-base-uncased"):
                self.tokenizer = AutoTokenizer.from_pretrained(name)
                {owner} = AutoModelForSequenceClassification.from_pretrained(name)
            def predict(self, batch_texts):
                enc = self.tokenizer(batch_texts, padding=True, return_tensors="pt")
                return {owner}(enc["input_ids"])
        Classifier().predict(["a", "b c"])
    """)
    assert [f.code for f in lint_text(source) if f.code == "BL201"] == ["BL201"]
    assert [f.code for f in lint_text(source.replace('Classifier().predict(["a", "b c"])', 'Classifier().predict("a")')) if f.code == "BL201"] == []


# --------------------------------------------------------------------------- several sources agree only on one object

TWO = """\
from transformers import AutoTokenizer, AutoModelForSequenceClassification
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
padded = tok(["a", "b c"], padding=True)
to_max = tok(["a", "b c"], padding="max_length", max_length=8)
"""


def encoding_reaching(source: str):
    facts = facts_of(TWO + source)
    call = last_call(facts, "model")
    star = next(a for a in call.node.args if a.star == "**")
    return facts.kind(star.value, call.scope, call.order)


@pytest.mark.parametrize(
    "source",
    [
        "def forward(e):\n    model(**e)\nforward(padded)\nforward(to_max)\n",  # two call sites, two encodings
        "class Runner:\n    def __init__(self, e):\n        self.e = e\n    def run(self):\n        model(**self.e)\nRunner(padded).run()\nRunner(to_max).run()\n",
        "class Runner:\n    def __init__(self):\n        self.e = padded\n    def reset(self):\n        self.e = to_max\n    def run(self):\n        model(**self.e)\n",
    ],
)
def test_objects_from_different_calls_join_into_either(source):
    assert either_encoding(encoding_reaching(source)) == ['"max_length"', "True"]


def either_encoding(found) -> list[str] | None:
    """The `padding` of each tokenizer call whose encoding a join (no one call) may be."""
    return sorted(m.call.kwargs["padding"].value.value for m in found.joined) if found is not None and found.call is None else None


@pytest.mark.parametrize(
    "source",
    [
        "def forward(e):\n    model(**e)\nforward(padded)\nforward(padded)\n",
        "class Runner:\n    def __init__(self, e):\n        self.e = e\n    def run(self):\n        model(**self.e)\nRunner(padded).run()\n",
        "class Runner:\n    def __init__(self):\n        self.e = padded\n    def run(self):\n        model(**self.e)\n",
    ],
)
def test_one_object_from_every_source_is_kept(source):
    found = encoding_reaching(source)
    assert found is not None and found.kind == "encoding" and found.call.kwargs["padding"].value.value == "True"


def test_self_attributes_are_read_from_the_class_of_the_method():
    found = encoding_reaching(
        "class A:\n    def __init__(self):\n        self.e = padded\nclass B:\n    def __init__(self):\n        self.e = to_max\n"
        "    def run(self):\n        model(**self.e)\nA()\nB().run()\n"
    )
    assert found is not None and found.call.kwargs["padding"].value.value == '"max_length"'


def test_an_argparse_field_stored_after_parsing_is_unknown():
    facts = facts_of("import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', default=1e-5)\nargs = p.parse_args()\nargs.lr = 1e-3\nprint(lr=args.lr)\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


@pytest.mark.parametrize(
    "source",
    [
        "import json\ncfg = {'lr': 1e-5}\ncfg.update(json.load(open('c.json')))\nprint(lr=cfg['lr'])\n",
        "cfg = {}\nif len(__name__) > 100:\n    cfg.setdefault('lr', 1e-3)\nprint(lr=cfg.get('lr', 1e-5))\n",
        "cfg = {}\ncfg['opt'] = {}\ncfg['opt'].setdefault('lr', 1e-3)\nprint(lr=cfg['opt'].get('lr', 1e-5))\n",
        "cfg = {}\ncfg['opt'] = {}\ncfg['opt'].update(lr=1e-3)\nprint(lr=cfg['opt'].get('lr', 1e-5))\n",  # was 1e-5: a wrong value
        "lrs = [1e-5, 2e-5]\nlrs.insert(0, 1e-3)\nprint(lr=lrs[0])\n",
        "lrs = [1e-5, 2e-5]\nlrs.pop()\nprint(lr=lrs[-1])\n",
        "class Cfg:\n    lr = 1e-5\ncfg = Cfg()\nsetattr(cfg, 'lr', 1e-3)\nprint(lr=cfg.lr)\n",
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', default=1e-5)\nargs = p.parse_args()\nsetattr(args, 'lr', 1e-3)\nprint(lr=args.lr)\n",
        "class A:\n    def lr(self):\n        return 1e-5\n    def make(self):\n        print(lr=self.lr())\nclass B(A):\n    def lr(self):\n        return 1e-3\nB().make()\n",
    ],
)
def test_a_value_changed_in_place_or_overridden_is_unknown(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


def test_an_encodings_key_stored_again_agrees_with_what_is_stored():
    moved = encoding_reaching('padded["input_ids"] = padded["input_ids"].to("cpu")\nmodel(**padded)\n')
    assert moved is not None
    facts = facts_of(TWO + 'padded["input_ids"] = padded["attention_mask"]\nmodel(input_ids=padded["input_ids"])\n')
    call = last_call(facts, "model")
    stored = facts.kind(call.kwargs["input_ids"].value, call.scope, call.order)  # the store runs before every read: the mask
    assert stored.detail == "attention_mask"
    facts = facts_of(TWO + 'if len(__name__) > 9:\n    padded["input_ids"] = padded["attention_mask"]\nmodel(input_ids=padded["input_ids"])\n')
    call = last_call(facts, "model")
    either = facts.kind(call.kwargs["input_ids"].value, call.scope, call.order)  # the mask or, the store skipped, the ids
    assert either.call is None and shared(either, lambda ids: ids.detail) is None
    facts = facts_of(TWO + 'padded["input_ids"] = padded["input_ids"].to("cpu")\nmodel(input_ids=padded["input_ids"])\n')
    call = last_call(facts, "model")
    assert facts.kind(call.kwargs["input_ids"].value, call.scope, call.order).detail == "input_ids"


# `x[key] = v` then `x[key]`: Python's `__setitem__` then `__getitem__` give back what was stored, whatever container
# `x` is (a dict, a DataFrame column, an object the value layer does not know), where the store runs before every read
# and nothing between may change the item (`Access.last_store`); otherwise the stores and the object's own item join.
@pytest.mark.parametrize("between, known", [
    ("", True),
    ('x["a"] = 2', True),  # another key
    ('print(x["k"])', True),  # a read
    ('if len(__name__) > 9:\n    x["k"] = other', False),
    ('for _ in range(2):\n    x["k"] = other', False),
    ('alias = x\nalias["k"] = other', False),
    ('def fill(h):\n    h["k"] = other\nfill(x)', False),
    ("fill_in(x)", False),  # handed to a call that may store into it
    ('x.update({"k": other})', False),
    ('x.rename(columns={"other": "k"}, inplace=True)', False),
    ('del x["k"]\nx["k"] = other', False),
    ('x = {"k": other}', False),
    ('key = "k"\nx[key] = other', False),  # a store at a key the store's text does not spell
    ('y = x\ny["k"] = other', False),  # the same object under another name
])
@pytest.mark.parametrize("holder", ["json.loads(text)", 'pd.read_csv("x.csv")'])  # (a dict display's items: `item_changes`)
def test_an_item_stored_before_every_read_is_what_was_stored(between, known, holder):
    facts = facts_of(TWO + f'import json\nimport pandas as pd\nother = tok("c", return_tensors="pt")\nx = {holder}\n'
                     f'x["k"] = padded\n{between}\nmodel(**x["k"])\n')
    call = last_call(facts, "model")
    found = facts.kind(call.node.args[0].value, call.scope, call.order)
    assert (found is not None and found.call is not None and facts.text(found.call.node).startswith("tok([")) is known, found


@pytest.mark.parametrize("other, known", [
    ('pd.read_csv("dev.csv")', True),  # another table, made by another call: one helper both are passed to joins no object
    ("x", False),  # the same table
    ("load()", False),  # a table of the file's function: which object, not seen
])
def test_a_store_into_another_object_that_one_helper_joins_changes_no_item(other, known):
    facts = facts_of(TWO + "import pandas as pd\ndef size(col):\n    return len(col)\ndef load():\n    return x\n"
                     f'x = pd.read_csv("train.csv")\ny = {other}\nx["k"] = padded\ny["k"] = to_max\nsize(x["a"])\nsize(y["a"])\nmodel(**x["k"])\n')
    call = last_call(facts, "model")
    found = facts.kind(call.node.args[0].value, call.scope, call.order)
    assert (found is not None and found.call is not None and "padding=True" in facts.text(found.call.node)) is known, found


def test_two_models_meeting_in_a_helper_join_into_a_model_of_unknown_load():
    facts = facts_of(TWO + 'other = AutoModelForSequenceClassification.from_pretrained("roberta-base")\ndef forward(m):\n    m(**padded)\nforward(model)\nforward(other)\n')
    call = last_call(facts, "m")
    found = facts.kind(call.node.func, call.scope, call.order)
    assert found is not None and found.kind == "model" and found.call is None


# --------------------------------------------------------------------------- bindings that may reach a read join


@pytest.mark.parametrize(
    "source",
    [
        "if FLAG:\n    enc = padded\nelse:\n    enc = padded\nmodel(**enc)\n",  # the same object on both branches
        "try:\n    enc = padded\nexcept Exception:\n    enc = padded\nmodel(**enc)\n",
        "enc = padded\nif FLAG:\n    enc = padded\nmodel(**enc)\n",  # the branch binds what was there already
        "enc = padded\nif FLAG:\n    enc.to('cpu')\nmodel(**enc)\n",  # a branch that changes the object in place
        "enc = None\nfor _ in range(2):\n    enc = padded\nmodel(**enc)\n",  # a None sentinel first: no object on that path
        "enc = None\nif FLAG:\n    enc = padded\nelse:\n    enc = padded\nmodel(**enc)\n",
    ],
)
def test_an_object_bound_alike_on_every_path_is_known(source):
    found = encoding_reaching("FLAG = True\n" + source)
    assert found is not None and found.call.order is not None and found.kind == "encoding"


@pytest.mark.parametrize(
    "source",
    [
        "if FLAG:\n    enc = padded\nelse:\n    enc = to_max\nmodel(**enc)\n",
        "enc = to_max\nfor _ in range(N):\n    enc = padded\nmodel(**enc)\n",  # the loop may not run
        "enc = to_max\nfor _ in range(2):\n    if FLAG:\n        break\n    enc = padded\nmodel(**enc)\n",  # it may break first
        "enc = to_max\nfor _ in range(2):\n    model(**enc)\n    enc = padded\n",  # the second time round, the loop's own binding
    ],
)
def test_an_object_bound_differently_on_two_paths_is_either(source):
    assert either_encoding(encoding_reaching("import sys\nFLAG = len(sys.argv) > 1\nN = len(sys.argv)\n" + source)) == ['"max_length"', "True"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("if FLAG:\n    enc = padded\nelse:\n    enc = to_max\nmodel(**enc)\n", "padded"),  # a constant test takes one arm
        ("if not FLAG:\n    enc = padded\nelif FLAG:\n    enc = to_max\nmodel(**enc)\n", "to_max"),
        ("if len([0]) == 1:\n    enc = to_max\nelse:\n    enc = padded\nmodel(**enc)\n", "to_max"),
        ("enc = to_max\nfor _ in range(2):\n    enc = padded\nmodel(**enc)\n", "padded"),  # the loop runs
        ("enc = to_max\nfor _ in []:\n    enc = padded\nmodel(**enc)\n", "to_max"),  # the loop never runs
        ("n = 0\nenc = to_max\nwhile n < 2:\n    enc = padded\n    n += 1\nmodel(**enc)\n", "padded"),  # true on entry
        ("for enc in [to_max, padded]:\n    pass\nmodel(**enc)\n", "padded"),  # the last element stays bound
    ],
)
def test_a_constant_test_or_a_loop_that_runs_picks_the_binding(source, expected):
    found = encoding_reaching("FLAG = True\n" + source)
    assert found is not None and found.call is not None and ("max_length" in str(found.call.kwargs)) == (expected == "to_max")


@pytest.mark.parametrize(
    "source",
    [
        "cfg = {'lr': 1e-5}\nalias = cfg\nprint(lr=cfg['lr'])\n",  # aliased, changed by no name
        "cfg = {'lr': 1e-5}\ndef show(c):\n    print(c['lr'])\nshow(cfg)\nprint(lr=cfg['lr'])\n",  # passed to a function that only reads it
        "cfg = {'opt': {'lr': 1e-5}}\nother = {'opt': {}}\nother['opt']['lr'] = 1e-3\nprint(lr=cfg['opt']['lr'])\n",  # another dict's item stored
        "lr = 1e-5\nalias = lr\nalias *= 2\nprint(lr=lr)\n",  # a number is not changed through a name that holds it
        "import types\ncfg = types.SimpleNamespace(lr=1e-5)\nalias = cfg\nalias.wd = 0.1\nprint(lr=cfg.lr)\n",  # another field stored
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float, default=1e-5)\np.add_argument('--epochs', type=int, default=1)\n"
        "args = p.parse_args()\nargs.epochs *= 2\nprint(lr=args.lr)\n",  # another field augmented
        "texts = ['a', 'b']\nother = ['c']\ndel other[0]\nprint(lr=len(texts) * 5e-6)\n",
    ],
)
def test_a_value_near_a_changed_one_stays_known(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-5


PARSER = "import argparse\np = argparse.ArgumentParser()\n"


@pytest.mark.parametrize(
    ("source", "value"),
    [
        (PARSER + "p.add_argument('--lr', type=float, default='1e-05')\nargs = p.parse_args()\nprint(lr=args.lr)\n", 1e-5),  # argparse converts it
        (PARSER + "p.add_argument('--lr', default='1e-05')\nargs = p.parse_args()\nprint(lr=args.lr)\n", "1e-05"),  # no type: the string
        (PARSER + "p.add_argument('--lr', type=float, default=1e-05)\nq = argparse.ArgumentParser()\nq.add_argument('--lr', type=float, default=1e-05)\n"
         "args = p.parse_args()\nprint(lr=args.lr)\n", 1e-5),  # two parsers that agree
        ("import os\nos.environ['OTHER'] = '1'\nprint(lr=float(os.environ.get('LR', '1e-05')))\n", 1e-5),  # another variable set
    ],
)
def test_a_command_line_or_environment_default_near_a_changed_one_is_known(source, value):
    facts = facts_of(source)
    found = facts.kw_value(last_call(facts, "print"), "lr")
    assert found == value and type(found) is type(value)


@pytest.mark.parametrize(
    "source",
    [
        PARSER + "p.add_argument('--lr', type=float, default='fast')\nargs = p.parse_args()\nprint(lr=args.lr)\n",  # argparse would fail
        PARSER + "p.add_argument('--lr', type=lambda s: float(s) * 2, default='1e-05')\nargs = p.parse_args()\nprint(lr=args.lr)\n",
        "import os\nos.environ.update(LR='1e-3')\nprint(lr=float(os.environ.get('LR', '1e-05')))\n",
    ],
)
def test_a_command_line_or_environment_default_changed_is_unknown(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


@pytest.mark.parametrize(
    "source",
    [
        "LR = 1e-5\ndef make(lr=LR):\n    print(lr=lr)\nLR = 1e-3\nmake()\n",  # the default is evaluated where the def runs
        "LR = 1e-5\ndef train():\n    print(lr=LR)\ntrain()\n",  # a global bound once
        "def rate():\n    return 1e-5\ndef train():\n    print(lr=rate())\ntrain()\n",  # a function defined once
        "def main():\n    lr = 1e-5\n    def show():\n        other = 1e-3\n    show()\n    print(lr=lr)\nmain()\n",  # no nonlocal: the inner binding is its own
    ],
)
def test_a_name_python_binds_once_is_known(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-5


def test_an_object_bound_by_walrus_is_known():
    assert encoding_reaching("if (enc := padded) is not None:\n    model(**enc)\n") is not None


# --------------------------------------------------------------------------- tf.data datasets (brain/tf_data.py)


def tf_dataset_kind(source: str, name: str = "ds") -> str | None:
    """The kind of the receiver of the last `.map(...)` call on `name`."""
    facts = facts_of(source)
    call = [c for c in facts.calls if c.method == "map" and facts.text(c.receiver).startswith(name)][-1]
    found = facts.kind(call.receiver, call.scope, call.order)
    return None if found is None else found.kind


@pytest.mark.parametrize("source", [
    # a chain through rebinding: each method returns a dataset
    """\
    import tensorflow as tf
    ds = tf.data.Dataset.from_tensor_slices(texts)
    ds = ds.shuffle(100)
    ds = ds.batch(8).prefetch(1)
    ds.map(encode)
    """,
    # two branches, each a tf.data dataset
    """\
    import tensorflow as tf
    if big:
        ds = tf.data.TFRecordDataset(files)
    else:
        ds = tf.data.Dataset.from_tensor_slices(texts)
    ds.map(encode)
    """,
    # handed to a helper
    """\
    import tensorflow as tf
    def pipeline(ds):
        return ds.map(encode)
    pipeline(tf.keras.utils.text_dataset_from_directory("data/"))
    """,
    # a `datasets` split converted
    """\
    from datasets import load_dataset
    ds = load_dataset("imdb")["train"].to_tf_dataset(batch_size=8)
    ds.map(encode)
    """,
])
def test_tf_data_dataset_through_its_methods(source):
    assert tf_dataset_kind(source) == "tf_dataset"


@pytest.mark.parametrize("source", [
    # a Hugging Face dataset's map is no tf.data map
    """\
    from datasets import load_dataset
    ds = load_dataset("imdb")["train"]
    ds.map(encode)
    """,
    # a pandas column
    """\
    import pandas as pd
    ds = pd.read_csv("x.csv")["text"]
    ds.map(str.lower)
    """,
    # one branch unknown
    """\
    import tensorflow as tf
    if big:
        ds = tf.data.TFRecordDataset(files)
    else:
        ds = make_dataset()
    ds.map(encode)
    """,
])
def test_tf_data_dataset_not_claimed_for_others(source):
    assert tf_dataset_kind(source) != "tf_dataset"


# --------------------------------------------------------------------------- a name of an outer scope bound more than once


def padding_reaching(source: str):
    """The `padding` of the tokenizer call whose encoding reaches the last `model(**...)` (of every call whose
    encoding it may be), or None."""
    found = encoding_reaching(source)
    return None if found is None or found.kind != "encoding" else shared(found, lambda enc: enc.call.kwargs["padding"].value.value)


@pytest.mark.parametrize(
    ("source", "padding"),
    [
        ("enc = to_max\nenc = padded\ndef train():\n    model(**enc)\ntrain()\n", "True"),  # called after the last rebinding
        ("enc = padded\ndef train():\n    model(**enc)\ntrain()\nenc = to_max\n", "True"),  # a later cell rebinds it after the run
        ("enc = padded\ndef train():\n    model(**enc)\ntrain()\ntrain()\nenc = to_max\n", "True"),  # every call sees the same
        ("enc = padded\ndef step():\n    model(**enc)\ndef main():\n    step()\nmain()\nenc = to_max\n", "True"),  # through a caller
        ("enc = to_max\ndef step():\n    model(**enc)\nenc = padded\nfor _ in range(2):\n    step()\n", "True"),  # called in a loop
        ("enc = padded\nlabel = [model(**enc) for _ in range(2)]\nenc = to_max\n", "True"),  # a comprehension runs where it sits
        ("def main():\n    enc = to_max\n    enc = padded\n    def inner():\n        model(**enc)\n    inner()\nmain()\n", "True"),  # a closure
        ("import torch\nenc = padded\n@torch.no_grad()\ndef evaluate():\n    model(**enc)\nevaluate()\nenc = to_max\n", "True"),  # a wrapper
    ],
)
def test_an_outer_name_holds_the_binding_in_force_where_the_function_runs(source, padding):
    assert padding_reaching(source) == padding


@pytest.mark.parametrize(
    "source",
    [
        "enc = padded\ndef train():\n    model(**enc)\ntrain()\nenc = to_max\ntrain()\n",  # two calls, two encodings
        "enc = padded\ndef train():\n    model(**enc)\nrun = train\nenc = to_max\nrun()\n",  # passed along: may run any time after
        "enc = padded\ndef train():\n    model(**enc)\nenc = to_max\n",  # never called in the file
        "enc = padded\ndef step():\n    model(**enc)\nfor _ in range(2):\n    step()\n    enc = to_max\n",  # the next pass sees the rebinding
        "enc = padded\nclass Runner:\n    def run(self):\n        model(**enc)\nRunner().run()\nenc = to_max\n",  # a method: any time after
        "enc = padded\ndef train():\n    model(**enc)\ndef rebind():\n    global enc\n    enc = to_max\nrebind()\ntrain()\n",  # a function rebinds it
        "enc = padded\nimport atexit\n@atexit.register\ndef train():\n    model(**enc)\ntrain()\nenc = to_max\n",  # a decorator that calls it later
    ],
)
def test_an_outer_name_that_may_hold_another_binding_where_the_function_runs_is_unknown(source):
    assert padding_reaching(source) is None


@pytest.mark.parametrize(
    ("source", "lr"),
    [
        ("LR = 1e-3\ndef train():\n    print(lr=LR)\nLR = 1e-5\ntrain()\n", 1e-5),
        ("LR = 1e-5\ndef train():\n    print(lr=LR)\ntrain()\nLR = 1e-3\n", 1e-5),
        ("def rate():\n    return 1e-3\ndef rate():\n    return 1e-5\ndef train():\n    print(lr=rate())\ntrain()\n", 1e-5),  # the def in force
        ("def rate():\n    return 1e-5\ndef train():\n    print(lr=rate())\ntrain()\ndef rate():\n    return 1e-3\n", 1e-5),
        ("LR = 1e-5\ndef train():\n    print(lr=LR)\ntrain()\nLR = 1e-3\ntrain()\n", UNKNOWN),
    ],
)
def test_an_outer_constant_or_function_is_the_one_in_force_where_the_function_runs(source, lr):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == lr


# --------------------------------------------------------------------------- `*args` and `**kwargs` beside known arguments


@pytest.mark.parametrize(
    "source",
    [
        "def make(lr, wd=0):\n    return lr\nkw = {'wd': 0.1}\nprint(lr=make(1e-5, **kw))\n",  # a positional before **kwargs
        "def make(lr, *rest):\n    return lr\nprint(lr=make(1e-5, *[1, 2]))\n",  # ... before *args
        "def train(lr, wd=0):\n    print(lr=lr)\nkw = {'wd': 0.1}\ntrain(1e-5, **kw)\n",  # a parameter its call sites pass by position
        "class Opt:\n    def __init__(self, lr=1e-3, wd=0):\n        self.lr = lr\nkw = {'wd': 0.1}\nprint(lr=Opt(1e-5, **kw).lr)\n",
    ],
)
def test_a_positional_beside_star_arguments_is_that_positional(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-5


@pytest.mark.parametrize(
    "source",
    [
        "import json\ndef make(lr=1e-5):\n    return lr\nkw = json.load(open('c.json'))\nprint(lr=make(**kw))\n",  # a keyword may hide in **kwargs
        "import sys\ndef make(a, lr=1e-5):\n    return lr\nprint(lr=make(*sys.argv))\n",  # ... a position in *args
        "import json\ndef train(lr=1e-5):\n    print(lr=lr)\ntrain(**json.load(open('c.json')))\n",
        "import sys\ndef make(a, lr):\n    return lr\nprint(lr=make(*sys.argv, 1e-5))\n",  # a positional after *args: its position is unknown
        "from dataclasses import dataclass\n@dataclass\nclass Cfg:\n    lr: float = 1e-5\nkw = {'lr': 1e-3}\nprint(lr=Cfg(**kw).lr)\n",
    ],
)
def test_an_argument_that_star_arguments_may_pass_is_unknown(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


@pytest.mark.parametrize(
    "source",
    [
        "def make(lr=1e-5):\n    return lr\nkw = {'lr': 1e-3}\nprint(lr=make(**kw))\n",  # a known mapping's keys name the parameters
        "def make(a, lr=1e-5):\n    return lr\nprint(lr=make(*[0, 1e-3]))\n",  # a known sequence fills the positions
        "def make(a, lr):\n    return lr\nrest = [1e-5]\nprint(lr=make(*rest, 1e-3))\n",  # a positional after a known *args
        "def make(lr=1e-5):\n    return lr\ndef go(kw):\n    return make(**kw)\nprint(lr=go({'lr': 1e-3}))\n",  # a parameter holding a known dict
        "def make(a, lr=1e-5):\n    return lr\ndef go(rest):\n    return make(*rest)\nprint(lr=go([0, 1e-3]))\n",  # ... a known list
    ],
)
def test_star_arguments_known_element_by_element_bind_the_parameters(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-3


@pytest.mark.parametrize(
    "args",
    ["lr=1e-3, **{'lr': 1e-4}", "**{'lr': 1e-3}, **{'lr': 1e-4}", "**{'lr': 1e-3}, lr=1e-4", "1e-3, **{'lr': 1e-4}"],
)
def test_a_keyword_given_twice_is_a_type_error_and_unknown(args):
    facts = facts_of(f"def make(lr=1e-5, **kw):\n    return lr\nprint(lr=make({args}))\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


def test_a_checkpoint_passed_beside_kwargs_is_known():
    facts = facts_of("from transformers import AutoModel\nkw = {'num_labels': 2}\nm = AutoModel.from_pretrained('bert-base-uncased', **kw)\n")
    assert facts.arg_value(last_call(facts, "AutoModel.from_pretrained"), 0, "pretrained_model_name_or_path") == "bert-base-uncased"


# --------------------------------------------------------------------------- a lambda or a partial called where it is made


@pytest.mark.parametrize(
    "expr",
    [
        "functools.partial(pick, 0)(1e-5)",
        "functools.partial(pick, p=1e-5)(0)",
        "functools.partial(pick)(0, 1e-5)",
        "(lambda: 1e-5)()",
        "(lambda p: p)(1e-5)",
        "(lambda a, p=1e-5: p)(0)",
    ],
)
def test_a_lambda_or_partial_called_at_once_runs(expr):
    facts = facts_of(f"import functools\ndef pick(a, p):\n    return p\nprint(lr={expr})\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-5


def test_a_tokenizer_handed_through_a_lambda_is_called():
    found = encoding_reaching("enc = (lambda t: t)(tok)(['a', 'b c'], padding=True)\nmodel(**enc)\n")
    assert found is not None and found.kind == "encoding"


def test_a_partial_called_with_what_it_binds_again_takes_the_calls_keyword():
    facts = facts_of("import functools\ndef pick(a, p):\n    return p\nprint(lr=functools.partial(pick, p=1e-5)(0, **{'p': 1e-3}))\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-3
    facts = facts_of("import functools, json\ndef pick(a, p):\n    return p\nprint(lr=functools.partial(pick, p=1e-5)(0, **json.load(open('c.json'))))\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


# --------------------------------------------------------------------------- a method's parameter, from every call that may run it


def test_a_method_called_on_self_takes_what_its_call_passes():
    facts = facts_of("class T:\n    def __init__(self, cfg):\n        self.make(cfg['lr'])\n    def make(self, lr):\n        print(lr=lr)\nT({'lr': 1e-5})\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-5


def test_a_base_init_a_subclass_runs_through_super_takes_what_super_passes():
    """`B()` runs `B.__init__`, not `A.__init__`: `A.__init__` runs once, from `super().__init__(lr=1e-3)`."""
    facts = facts_of("class A:\n    def __init__(self, lr=1e-5):\n        print(lr=lr)\nclass B(A):\n    def __init__(self):\n        super().__init__(lr=1e-3)\nB()\n")
    assert facts.kw_value(last_call(facts, "print"), "lr") == 1e-3


@pytest.mark.parametrize(
    "source",
    [
        # a subclass's __init__ passes another value through super() than the base's construction
        "class A:\n    def __init__(self, lr=1e-5):\n        print(lr=lr)\nclass B(A):\n    def __init__(self):\n        super().__init__(lr=1e-3)\nA()\nB()\n",
        # a subclass constructed with another value runs the base's __init__
        "class A:\n    def __init__(self, lr=1e-5):\n        print(lr=lr)\nclass B(A):\n    pass\nA()\nB(lr=1e-3)\n",
        # a subclass's method calls the inherited one on self with another value
        "class T:\n    def make(self, lr=1e-5):\n        print(lr=lr)\nclass U(T):\n    def go(self):\n        self.make(1e-3)\nT().make()\nU().go()\n",
        # the receiver passed by hand
        "class T:\n    def make(self, lr=1e-5):\n        print(lr=lr)\nt = T()\nt.make()\nT.make(t, 1e-3)\n",
        # a library base may call it with anything
        "import torch\nclass T(torch.nn.Module):\n    def step(self, lr):\n        print(lr=lr)\n    def go(self):\n        self.step(1e-5)\n",
    ],
)
def test_a_method_parameter_another_call_may_pass_is_unknown(source):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


# --------------------------------------------------------------------------- a binding later in a loop around the read


@pytest.mark.parametrize(
    ("source", "padding"),
    [
        ("for enc in [padded]:\n    model(**enc)\n    enc = to_max\n", "True"),  # the loop's own target binds it again first
        ("enc = padded\nfor _ in range(2):\n    model(**enc)\nenc = to_max\n", "True"),  # rebound after the loop
        ("for _ in range(2):\n    enc = padded\n    model(**enc)\n    enc = to_max\n", "True"),  # bound again first on every pass
        ("enc = padded\nfor _ in range(2):\n    model(**enc)\n    enc = to_max\n", None),  # the next pass reads to_max
        ("enc = padded\nwhile True:\n    model(**enc)\n    enc = to_max\n", None),
    ],
)
def test_a_binding_later_in_a_loop_reaches_the_read_on_the_next_pass(source, padding):
    assert padding_reaching(source) == padding


# --------------------------------------------------------------------------- a function a library runs before the call returns

MAPPED = """\
import datasets
raw = datasets.{source}
def encode(batch):
    return tok(batch["text"], padding=True)
mapped = raw.map(encode, batched=True)
tok = AutoTokenizer.from_pretrained("gpt2")
"""


@pytest.mark.parametrize(
    ("source", "known"),
    [
        ('Dataset.from_dict({"text": ["a", "b"]})', True),  # Dataset.map runs `encode` before returning
        ('load_dataset("imdb", split="train")', True),
        ('load_dataset("imdb", split="train", streaming=True)', False),  # an IterableDataset runs it later, when iterated
    ],
)
def test_a_map_function_reads_the_names_bound_when_map_runs_it(source, known):
    facts = facts_of(TWO + MAPPED.format(source=source))
    call = last_call(facts, "tok")
    tokenizer = facts.kind(call.node.func, call.scope, call.order)
    assert tokenizer is not None and tokenizer.kind == "tokenizer"  # streaming: one of two tokenizers, which one unknown
    assert (tokenizer.call is not None) is known


def test_the_batch_rebound_in_a_loop_nested_in_an_epoch_loop_stays_known():
    source = LOADER + "for epoch in range(2):\n    for batch in loader:\n        batch = tuple(t.to('cpu') for t in batch)\n        model(batch[0])\n"
    assert ids_reaching(source) == ("ids", "input_ids", "encoding")


@pytest.mark.xfail(reason="the checked fixed point (s22-iter) is withdrawn: it cost rounds to the power of the nesting on large files (25 s for one transformers modeling file); a value defined through itself round a loop is UNKNOWN again", strict=True)
def test_a_name_bound_again_first_on_every_pass_stays_known():
    source = LOADER + "for epoch in range(2):\n    for batch in loader:\n        ids = batch[0]\n        ids = ids.to('cpu')\n        model(ids)\n"
    assert ids_reaching(source) == ("ids", "input_ids", "encoding")
    source = LOADER + "ids = enc['attention_mask']\nfor batch in loader:\n    if len(batch) > 2:\n        ids = batch[0]\n    ids = ids.to('cpu')\n    model(ids)\n"
    assert ids_reaching(source) is None  # bound again in a branch only: the mask from before the loop may reach the read
    source = source.replace("ids = enc['attention_mask']", "ids = None")  # None: a pass that reads it fails; the others read a batch's
    assert ids_reaching(source) == ("ids", "input_ids", "encoding")


# `x += y` / `x *= y` run for real beside the value layer's answer at the `print`: a known answer must be the value
# the run printed; the shapes marked known must be known (a list changes in place, so a name sharing it may not be).
AUGMENTED = {
    "list": ('v = []\nv += ["a", "b"]\nprint(v)\n', True),
    "list-by-a-tuple-and-a-string": ('v = ["a"]\nv += ("b",)\nv += "cd"\nprint(v)\n', True),
    "list-repeated": ('v = [0]\nv *= 3\nprint(v)\n', True),
    "tuple": ('v = ()\nv += ("a", "b")\nprint(v)\n', True),
    "tuple-then-listed": ('v = ()\nv += tuple(["a", "b"])\nv = list(v)\nprint(v)\n', True),
    "string": ('v = "a"\nv += "b"\nv *= 2\nprint(v)\n', True),
    "int-with-float": ('v = 1.5\nv += 2\nprint(v)\n', True),
    "in-a-function": ('def f():\n    v = [1]\n    v += [2]\n    return v\nprint(f())\n', True),
    "tuple-shared-the-other-name": ('v = ("a",)\nw = v\nw += ("b",)\nprint(v)\n', True),
    "string-shared-the-other-name": ('v = "a"\nw = v\nw += "b"\nprint(v)\n', True),
    "list-shared-the-other-name": ('v = []\nw = v\nw += ["a"]\nprint(v)\n', True),  # a list's `+=` is its `extend`, through any name
    "list-shared-both-names": ('v = list("ab")\nw = v\nv += []\nw += ["c"]\nprint(v)\n', True),
    "list-shared-then-rebound": ('v = [1]\nw = v\nw += [2]\nv = v[-1]\nprint(v)\n', True),
    "list-shared-changed-after-a-rebinding": ('v = [1]\nw = v\nv = [5]\nw += [2]\nprint(v)\n', False),
    "list-shared-changed-in-a-branch": ('import os\nv = [1]\nw = v\nif os.environ.get("BERTLINT_UNSET"):\n    w += [2]\nprint(v)\n', False),
    "list-shared-read-through-the-alias": ('v = []\nw = v\nv += [1]\nprint(w)\n', False),
    "list-held-by-another-list": ('v = [1]\nw = [v, 0]\nv += [2]\nprint(w[0])\n', False),
    "list-in-a-dict-item": ('d = {"k": [1]}\nb = d["k"]\nd["k"] += [2]\nprint(b)\n', False),
    "list-through-a-parameter": ('def f(x):\n    x += [2]\na = [1]\nf(a)\nprint(a)\n', False),
    "global-in-a-function": ('v = (1,)\ndef f():\n    global v\n    v += (2,)\nf()\nprint(v)\n', False),
    "inside-a-loop": ('v = []\nfor i in range(2):\n    v += ["a"]\nprint(v)\n', False),
    "in-a-branch": ('import os\nv = [1]\nif os.environ.get("BERTLINT_UNSET"):\n    v += [2]\nprint(v)\n', False),
    "a-type-error-caught": ('v = 1\ntry:\n    v += "a"\nexcept TypeError:\n    pass\nprint(v)\n', False),
}


def printed_and_answered(name: str, source: str) -> tuple:
    """(what the last `print` of `source` prints when it runs for real, the value layer's answer there)."""
    printed: list = []
    exec(compile(source, name, "exec"), {"print": printed.append})
    facts = facts_of(source)
    call = last_call(facts, "print")
    return printed[-1], facts.value(call.positional[0].value, call.scope, order=call.order)


@pytest.mark.parametrize("name", AUGMENTED)
def test_augmented_assignment_gives_the_value_the_run_prints_or_unknown(name):
    source, known = AUGMENTED[name]
    ran, static = printed_and_answered(name, source)
    assert static is UNKNOWN or static == ran and type(static) is type(ran)
    assert (static is not UNKNOWN) is known


# A def or class statement inside a branch or a loop's body, its function called later in the same region: the
# statement ran whenever the call runs. Run for real beside the value layer's answer at the last `print`.
IN_A_REGION = {
    "class-in-a-loop-body": ('for i in range(2):\n    class C:\n        def __init__(self, p):\n            self.p = p\n\n        def get(self):\n'
                             '            return self.p\n    print(C(1e-5).get())\n', True),
    "def-in-a-branch": ('import os\nif os.environ.get("BERTLINT_UNSET") is None:\n    def f(p):\n        return p\n    print(f(1e-5))\n', True),
    "def-in-an-arm-of-the-loop": ('for i in range(2):\n    if i == 0:\n        def f(p):\n            return p\n    else:\n        def f(p):\n'
                                  '            return None\n    print(f(1e-5))\n', False),
    "def-after-the-call-in-the-loop": ('def f(p):\n    return p\nfor i in range(2):\n    print(f(1e-5))\n    def f(p):\n        return None\n', False),
}


@pytest.mark.parametrize("name", IN_A_REGION)
def test_a_function_defined_in_the_region_of_its_call_runs(name):
    source, known = IN_A_REGION[name]
    ran, static = printed_and_answered(name, source)
    assert static is UNKNOWN or static == ran
    assert (static is not UNKNOWN) is known


@pytest.mark.parametrize("source", [
    "ids = [101, 7, 102]\ncopy = [ids[i] for i in range(len(ids))]\nprint(copy)\n",
    "word = 'abc'\nprint([word[k] for k in range(len(word))])\n",
])
def test_a_sequence_copied_by_index_is_its_elements_in_order(source):
    printed: list = []
    exec(source, {"print": printed.append})
    facts = facts_of(source)
    call = last_call(facts, "print")
    assert facts.value(call.positional[0].value, call.scope, order=call.order) == printed[-1]


def test_a_mapping_indexed_by_position_is_no_copy():
    source = "d = {1: 'a', 0: 'b'}\nprint([d[i] for i in range(len(d))])\n"  # ['b', 'a']; its keys are [1, 0]
    printed: list = []
    exec(source, {"print": printed.append})
    facts = facts_of(source)
    call = last_call(facts, "print")
    assert facts.value(call.positional[0].value, call.scope, order=call.order) in (UNKNOWN, printed[-1])


def tok_texts_are_several(source: str):
    """The value layer's answer to "one text or several" for the last `tok(...)` call's first argument."""
    facts = facts_of(source)
    call = last_call(facts, "tok")
    return facts.is_batch(call.positional[0].value, call.scope, call.order)


@pytest.mark.parametrize("source, several", [
    ("texts = ['a']\ntexts = ['a', 'b c']\nbatch = texts[0:2]\ntok(batch, padding=True)\n", True),
    ("texts = ['a', 'b']\ntexts = 'one text'\ntok(texts, padding=True)\n", False),
    ("def main(rows):\n    qs = [r['q'] for r in rows]\n    qs = [f'Q: {q}' for q in qs]\n    for i in range(0, len(qs), 8):\n"
     "        part = qs[i:i + 8]\n        route(part)\ndef route(questions):\n    tok(questions, padding=True)\nmain(json.load(open('q.json')))\n", True),
    ("def main(rows):\n    for row in rows:\n        qs = row['q']\n        qs = [qs, qs]\n        tok(qs, padding=True)\nmain([])\n", True),
    ("import os\ntexts = ['a', 'b']\nif os.environ.get('ONE'):\n    texts = 'one'\ntok(texts, padding=True)\n", UNKNOWN),
    ("texts = ['a', 'b']\nfor _ in range(2):\n    tok(texts, padding=True)\n    texts = 'one'\n", UNKNOWN),
])
def test_several_texts_answer_from_the_last_binding_that_surely_ran(source, several):
    assert tok_texts_are_several(source) is several


LINES = "train = [l for l in open('a.txt').read().splitlines()]\ndev = []\nfor l in open('b.txt'):\n    dev.append(l)\n"


@pytest.mark.parametrize("source, several", [
    (LINES + "tok(train + dev, padding=True)\n", True),  # a list of both lists' elements
    (LINES + "texts = train\ntexts.extend(dev)\ntok(texts, padding=True)\n", True),  # an alias grown in place
    (LINES + "texts = train\ntexts += dev\ntok(train, padding=True)\n", True),  # seen through the name it aliases too
    (LINES + "def more():\n    dev.append('x')\nmore()\ntok(dev, padding=True)\n", True),  # grown by a function
    (LINES + "class C:\n    def check(self, xs):\n        return len(xs)\nC().check(train)\ntok(train, padding=True)\n", True),  # a method that reads it
    (LINES + "tok(train[0] + ' ' + dev[0], padding=True)\n", False),  # strings made of strings: one text
    (LINES + "tok((train[0] + ' ') + (dev[0] + '.'), padding=True)\n", False),
])
def test_lists_of_several_texts_joined_or_grown_in_place_stay_several(source, several):
    assert tok_texts_are_several(source) is several


@pytest.mark.parametrize("source", [
    LINES + "one = [open('c.txt').read()]\none.extend(dev)\ntok(one, padding=True)\n",  # one text grown: maybe several
    LINES + "one = [open('c.txt').read()]\nalias = one\nalias.extend(dev)\ntok(one, padding=True)\n",  # grown through an alias
    LINES + "def grow(xs):\n    xs.extend(dev)\none = [open('c.txt').read()]\ngrow(one)\ntok(one, padding=True)\n",  # by a helper
    LINES + "class C:\n    def grow(self, xs):\n        xs.extend(dev)\none = [open('c.txt').read()]\nC().grow(one)\ntok(one, padding=True)\n",  # a method
    LINES + "tok([train[0]] + [dev[0]], padding=True)\n",  # one text each, two together: not seen here
    LINES + "texts = train\ntexts.extend(dev)\ndel texts[1:]\ntok(texts, padding=True)\n",  # cut back
    LINES + "texts = train\ntexts.extend(dev)\ntrain.clear()\ntok(texts, padding=True)\n",  # emptied through the other name
    LINES + "def keep_one(xs):\n    del xs[1:]\ntexts = train\ntexts.extend(dev)\nkeep_one(texts)\ntok(texts, padding=True)\n",
    LINES + "texts = train\ntexts.extend(dev)\ntexts *= 0\ntok(texts, padding=True)\n",
    LINES + "tok(train + open('c.txt').read(), padding=True)\n",  # a list and something else
])
def test_lists_of_texts_that_may_shrink_or_hold_one_text_stay_unknown(source):
    assert tok_texts_are_several(source) is UNKNOWN


@pytest.mark.xfail(strict=True, reason="a list grown through a display that holds it is read as its own display (is_batch says one text)")
def test_one_text_grown_through_a_display_holding_it_is_unknown():
    # (the sharing groups that would say so join names through elements too, file-wide: asking them lost a right finding)
    assert tok_texts_are_several(LINES + "one = [open('c.txt').read()]\nh = {'t': one}\nh['t'].extend(dev)\ntok(one, padding=True)\n") is UNKNOWN


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("cfg = {}\ncfg.setdefault('lr', 1e-3)\nprint(lr=cfg.get('lr', 1e-5))\n", 1e-3),  # stored when absent
        ("cfg = {'lr': 1e-5}\ncfg.setdefault('lr', 1e-3)\nprint(lr=cfg['lr'])\n", 1e-5),  # kept when present
        ("cfg = {'lr': 1e-5}\nif len(__name__) > 100:\n    cfg.setdefault('lr', 1e-3)\nprint(lr=cfg['lr'])\n", 1e-5),
        ("print(lr={'a': 1}.setdefault('lr', 1e-3))\n", 1e-3),  # its value: the item, else the default
        ("print(lr={'lr': 1e-5}.setdefault('lr', 1e-3))\n", 1e-5),
        ("import argparse\nns = argparse.Namespace(lr=1e-5)\nprint(lr=getattr(ns, 'lr'))\n", 1e-5),  # getattr is the attribute
        ("class C:\n    lr = 1e-5\nprint(lr=getattr(C, 'lr'))\n", 1e-5),
        ("class C:\n    lr = 1e-5\nprint(lr=getattr(C(), 'lr', 1e-5))\n", 1e-5),  # a default that agrees
        ("class C:\n    lr = 1e-5\nprint(lr=getattr(C(), 'lr', 1e-3))\n", 1e-5),  # its class body binds it: it is there
        ("class C:\n    lr = 1e-5\nprint(lr=getattr(C(), 'lr', None))\n", 1e-5),
        ("class C:\n    if len(__name__) > 1:\n        lr = 1e-5\nprint(lr=getattr(C(), 'lr', 1e-3))\n", UNKNOWN),  # maybe bound: either
        ("class C:\n    lr = 1e-5\n    def __getattribute__(self, name):\n        raise AttributeError\nprint(lr=getattr(C(), 'lr', 1e-3))\n", UNKNOWN),
        ("class C:\n    def load(self):\n        self.lr = 1e-5\n    def go(self):\n        print(lr=getattr(self, 'lr', 1e-3))\nC().go()\n", UNKNOWN),
        ("class C:\n    lr = 1e-5\nname = 'lr'\nprint(lr=getattr(C, name))\n", 1e-5),
        ("def f(lr):\n    print(lr=lr)\nf(**{'lr': 1e-5})\n", 1e-5),
    ],
)
def test_setdefault_and_getattr_follow_python(source, expected):
    facts = facts_of(source)
    assert facts.kw_value(last_call(facts, "print"), "lr") == expected if expected is not UNKNOWN else facts.kw_value(last_call(facts, "print"), "lr") is UNKNOWN


SPREAD_PRELUDE = """\
from transformers import AutoModel, AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
enc = tok(["a b", "c"], padding=True, return_tensors="pt")
"""


@pytest.mark.parametrize(
    ("source", "known"),
    [
        ("def fwd(input_ids, attention_mask):\n    print(ids=input_ids)\nfwd(**enc)\n", True),  # only the mapping can fill it
        ("def fwd(*, input_ids):\n    print(ids=input_ids)\nfwd(**enc)\n", True),
        ("class R:\n    def step(self, input_ids, **rest):\n        print(ids=input_ids)\nR().step(**enc)\n", True),
        ("def fwd(input_ids=None, **kw):\n    print(ids=input_ids)\nfwd(**enc)\n", False),  # a default: the mapping may lack the key
        ("def fwd(input_ids, attention_mask):\n    print(ids=input_ids)\nfwd(*extra, **enc)\n", False),  # a `*` may fill it
        ("def fwd(input_ids, attention_mask):\n    print(ids=input_ids)\nfwd(**enc, **extra)\n", False),  # two mappings: either
        ("def fwd(input_ids, /, attention_mask):\n    print(ids=input_ids)\nfwd(enc['input_ids'], **enc)\n", True),
        ("def fwd(input_ids, /, attention_mask=None):\n    print(ids=input_ids)\nfwd(**enc)\n", False),  # positional-only: a TypeError
    ],
)
def test_a_parameter_only_a_mapping_can_fill_is_its_item(source, known):
    """`fwd(**batch)` with `batch`'s keys unknown: a parameter with no default that no other argument can fill is
    `batch["name"]` (else the call is a TypeError and its body never runs)."""
    facts = facts_of(SPREAD_PRELUDE + source)
    found = facts.kind(last_call(facts, "print").kwargs["ids"].value, last_call(facts, "print").scope, last_call(facts, "print").order)
    assert (found is not None and found.kind == "ids" and found.detail == "input_ids") is known


# --------------------------------------------------------------------------- a name bound again by an import, a class, a def

SHADOW = "from torch.utils.data import Dataset\n"


@pytest.mark.parametrize("source, callee, qualname", [
    (SHADOW + "class Dataset(Dataset):\n    pass\nd = Dataset()\n", "Dataset", "<local>.Dataset"),
    (SHADOW + "d0 = Dataset()\nclass Dataset(Dataset):\n    pass\nprint(d0)\n", "Dataset", "torch.utils.data.Dataset"),
    (SHADOW + "class Dataset(Dataset):\n    pass\ndef main():\n    return Dataset()\n", "Dataset", "<local>.Dataset"),
    ("def main():\n    " + SHADOW + "    class Dataset(Dataset):\n        pass\n    return Dataset()\n", "Dataset", "<local>.Dataset"),
    ("class Dataset:\n    pass\n" + SHADOW + "d = Dataset()\n", "Dataset", "torch.utils.data.Dataset"),
    (SHADOW + "def Dataset():\n    return 0\nd = Dataset()\n", "Dataset", None),
    (SHADOW + "Dataset = dict\nd = Dataset()\n", "Dataset", None),
    (SHADOW + "import os\nif os.environ.get('OWN'):\n    class Dataset(Dataset):\n        pass\nd = Dataset()\n", "Dataset", None),
    ("try:\n    from transformers import AdamW\nexcept ImportError:\n    from torch.optim import AdamW\nopt = AdamW([])\n", "AdamW", "torch.optim.AdamW"),
    ("try:\n    import wandb\nexcept ImportError:\n    wandb = None\nwandb.init()\n", "wandb.init", None),
])
def test_a_name_stands_for_the_binding_that_ran_last_before_the_read(source, callee, qualname):
    facts = facts_of(source)
    assert last_call(facts, callee).qualname == qualname


def test_a_class_that_shadows_the_import_it_derives_from_is_the_files_class():
    source = SHADOW + (
        "class Dataset(Dataset):\n    def __init__(self, n):\n        self.max_len = n\n\n"
        "    def __getitem__(self, i):\n        return print(self.max_len)\nds = Dataset(128)\n"
    )
    facts = facts_of(source)
    call = last_call(facts, "print")
    assert facts.value(call.positional[0].value, call.scope, order=call.order) == 128
    assert facts.classes["Dataset"].bases == ("torch.utils.data.Dataset",)  # the base reads the import, bound before


@pytest.mark.parametrize("source, several", [
    ('for t in ["a b", "c d"]:\n    tok(t, padding=True)\n', False),
    ('for t in ("a b",):\n    tok(t, padding=True)\n', False),
    ('texts = ["a b", "c d"]\nfor t in texts:\n    tok(t, padding=True)\n', False),
    ('a, b = "x", "y"\nfor t in [a, b]:\n    tok(t, padding=True)\n', False),
    ('for pair in [["a", "b"], ["c", "d"]]:\n    tok(pair, padding=True)\n', True),
    ('for t in ["a b", ["c", "d"]]:\n    tok(t, padding=True)\n', UNKNOWN),
    ('for t in ["a b", "c d"]:\n    tok(t, padding=True)\n    t = [t, t]\n', False),  # each pass binds the target first
    ('for t in ["a b", "c d"]:\n    t = [t, t]\n    tok(t, padding=True)\n', True),
    ('texts = ["a b"]\ntexts.append(["c", "d"])\nfor t in texts:\n    tok(t, padding=True)\n', UNKNOWN),
    ('for t in []:\n    tok(t, padding=True)\n', UNKNOWN),
])
def test_a_loop_target_over_a_display_is_what_every_element_is(source, several):
    assert tok_texts_are_several(source) is several


# --------------------------------------------------------------------------- lists of objects joined and grown

TWO_ENCODINGS = """\
from transformers import AutoTokenizer, AutoModel
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
padded = tok(["a", "b c"], padding=True, return_tensors="pt")
plain = tok(["d", "e f"], return_tensors="pt")
"""


def made_on_line(source: str):
    """The line of the call that made what the last `model(**x)` call is given (None: unknown, or a join)."""
    facts = facts_of(TWO_ENCODINGS + source)
    call = last_call(facts, "model")
    found = facts.evaluate(call.node.args[0].value, call.scope, call.order)
    if found is UNKNOWN or found.call is None:
        return [facts.module.code.count("\n", 0, facts.module.code.index(facts.text(m.call.node))) + 1 for m in getattr(found, "joined", ())] or None
    return facts.module.code.count("\n", 0, facts.module.code.index(facts.text(found.call.node))) + 1


@pytest.mark.parametrize("source, line", [
    ("encs = [padded]\nencs.append(plain)\nmodel(**encs[-1])\n", 5),  # Python's list grows: its last is the one appended
    ("encs = [padded]\nencs.extend([plain])\nmodel(**encs[1])\n", 5),
    ("encs = [padded]\nencs += [plain]\nmodel(**encs[-1])\n", 5),
    ("encs = (padded,)\nencs += (plain,)\nmodel(**encs[-1])\n", 5),  # a new, longer tuple
    ("encs = [padded] + [plain]\nmodel(**encs[1])\n", 5),  # a list of both lists' elements
    ("encs = [padded]\nmodel(**(encs + [plain])[0])\n", 4),
    ("encs = (padded,)\nalias = encs\nalias += (plain,)\nmodel(**encs[-1])\n", 4),  # the alias is bound anew; encs is as it was
    ("encs = [padded]\nalias = encs\nalias += [plain]\nmodel(**encs[-1])\n", 5),  # the list both names hold grows
    ("for enc in [padded] + [plain]:\n    model(**enc)\n", [4, 5]),  # either, each pass
    ("encs = [padded]\ndef show(xs):\n    print(len(xs))\ndef report(xs):\n    show(xs)\nreport(encs)\nmodel(**encs[0])\n", 4),  # only read
])
def test_a_list_of_objects_concatenated_or_grown_in_place_holds_each_element(source, line):
    assert made_on_line(source) == line


@pytest.mark.parametrize("source", [
    "encs = [padded, padded]\nencs[0] = plain\nmodel(**encs[0])\n",  # an element replaced
    "encs = [padded]\ndef add(xs):\n    xs.append(plain)\nadd(encs)\nmodel(**encs[-1])\n",  # grown by a helper
    "encs = [padded]\ndef add(xs):\n    xs.append(plain)\ndef route(ys):\n    add(ys)\nroute(encs)\nmodel(**encs[-1])\n",  # handed on
    "encs = [padded, plain]\nencs.pop()\nmodel(**encs[-1])\n",  # a change no event shows
    "import os\nencs = [padded]\nif os.environ.get('MORE'):\n    encs.append(plain)\nmodel(**encs[-1])\n",  # maybe grown
    "encs = [padded]\nfor t in ['x']:\n    encs.append(tok(t, return_tensors='pt'))\nmodel(**encs[-1])\n",
    "encs = [padded]\nencs *= 2\nmodel(**encs[-1])\n",
])
def test_a_list_of_objects_changed_otherwise_or_maybe_is_unknown(source):
    assert made_on_line(source) is None
