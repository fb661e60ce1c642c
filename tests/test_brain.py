"""The library models (facts/brain/) and the judgements every rule takes from them: what a datasets `map` function
receives, PEFT adapter loads, collators and processors that pad, ids padded by hand, texts that are several."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts.abstract import Series
from bertlint.facts import UNKNOWN, Facts, checkpoint_argument, load_behind, padded_ids, padding_of
from bertlint.facts.brain.tensors import own_tensors

VERSION = (5, 23)
HEADER = """\
import torch
import pandas as pd
from datasets import load_dataset
from torch.utils.data import DataLoader
from peft import PeftModel
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoProcessor, AutoTokenizer
from transformers import DataCollatorForLanguageModeling, DataCollatorWithFlattening, DataCollatorWithPadding
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
"""


def facts_of(body: str) -> Facts:
    source = HEADER + textwrap.dedent(body)
    return Facts(cst.parse_module(source), source)


def batch(facts: Facts, name: str):
    return facts.is_batch(*probe(facts, name))


def why_padded(facts: Facts, name: str):
    expr, scope, order = probe(facts, name)
    return padded_ids(facts, facts.kind(expr, scope, order), VERSION)


# ---- datasets: what a map function receives ---------------------------------------------------------


@pytest.mark.parametrize("call, expected", [
    ("raw.map(prep, batched=True)", True),
    ("raw.map(prep)", False),  # not batched: one example
    ("raw['train'].filter(prep, batched=False)", False),
    ("raw.map(functools.partial(prep), batched=True)", True),
    ("raw.map(prep, batched=True, input_columns=['text'])", UNKNOWN),  # the columns come as arguments
    ("raw.map(prep, batched=True, batch_size=1)", UNKNOWN),  # batches of one
    ("unknown.map(prep)", UNKNOWN),  # maybe a pandas Series: no `batched=`, no dataset known
])
def test_a_map_functions_column_is_several_texts_when_batched(call, expected):
    facts = facts_of(f"""
        import functools
        raw = load_dataset("imdb")
        def prep(examples):
            probe(texts=examples["text"])
            return tok(examples["text"], truncation=True)
        out = {call}
    """)
    assert batch(facts, "texts") is expected


def test_a_batchs_column_at_a_key_not_known_is_still_several():
    facts = facts_of("""
        import sys
        raw = load_dataset("imdb")
        column = sys.argv[1]
        def prep(examples):
            probe(batch=examples[column])
            return tok(examples[column], truncation=True)
        out = raw.map(prep, batched=True)
    """)
    assert batch(facts, "batch") is True


def test_a_method_handed_to_map_receives_the_batch_after_self():
    facts = facts_of("""
        class Data:
            def __init__(self):
                self.raw = load_dataset("imdb")

            def tokenize(self, batch):
                probe(texts=batch["text"])
                return tok(batch["text"], padding=True)

            def build(self):
                return self.raw.map(self.tokenize, batched=True)
    """)
    assert batch(facts, "texts") is True


def test_a_map_function_called_directly_too_is_unknown():
    facts = facts_of("""
        raw = load_dataset("imdb")
        def prep(examples):
            probe(texts=examples["text"])
            return tok(examples["text"])
        out = raw.map(prep, batched=True)
        prep({"text": "one"})
    """)
    assert batch(facts, "texts") is UNKNOWN


def test_two_map_sites_must_agree():
    facts = facts_of("""
        raw = load_dataset("imdb")
        def prep(examples):
            probe(texts=examples["text"])
            return tok(examples["text"])
        a = raw["train"].map(prep, batched=True)
        b = raw["test"].map(prep, batched=True)
        c = raw["test"].map(prep)
    """)
    assert batch(facts, "texts") is UNKNOWN


def test_a_lambda_map_pads_a_batch_and_its_ids_column_is_that_encoding():
    facts = facts_of("""
        raw = load_dataset("imdb")
        enc = raw.map(lambda b: tok(b["text"], padding=True), batched=True, remove_columns=["text"]).with_format("torch")
        one = raw.map(lambda b: tok(b["text"], padding=True))
        probe(ids=enc["train"]["input_ids"][:8], single=one["train"]["input_ids"][:8])
    """)
    assert "pads a batch of several texts" in why_padded(facts, "ids")
    assert why_padded(facts, "single") is None


def test_is_split_into_words_reads_a_batch_column_as_several_and_a_list_as_one():
    facts = facts_of("""
        raw = load_dataset("conll2003")
        def prep(examples):
            return tok(examples["tokens"], is_split_into_words=True, padding=True)
        out = raw.map(prep, batched=True)
        words = tok(["New", "York"], is_split_into_words=True, padding=True)
    """)
    by_line = {facts.text(c.node)[:22]: padding_of(facts, c).batch for c in facts.tokenizer_calls}
    assert by_line == {'tok(examples["tokens"]': True, 'tok(["New", "York"], i': UNKNOWN}


# ---- texts that are several ---------------------------------------------------------------------------


@pytest.mark.parametrize("expr, expected", [
    ('df["text"].tolist()', True),
    ('df["text"].values', True),
    ("list(df.text)", True),
    ("df.text.values", True),
    ("df.shape", UNKNOWN),
    ('ds["text"]', True),
    ("[line.strip() for line in open('f.txt')]", True),
    ("texts[i : i + 8]", True),
    ("rows", True),  # appended to in a loop
    ("one", False),  # appended to once, not in a loop: ["a"] where run() is called, one text
    ("[df.text] if isinstance(df.text, str) else df.text", True),  # normalised to a list, whatever it held
    ("df.text if not isinstance(df.text, str) else [df.text]", True),
    ("[df.text] if isinstance(df.text, list) else df.text", UNKNOWN),
    ("[prompt] if isinstance(prompt, str) else prompt", False),  # "a" where run() is called: one text, listed
    ("[prompt] if isinstance(prompt, list) else prompt", False),
    ("[prompt]", False),
    ('f"Question: {prompt}"', False),
    ('" ".join(prompt)', False),
    ("prompt.strip()", False),
    ('"summarize: " + prompt', False),
    ('df["text"].str.lower()', UNKNOWN),
    ('"summarize: " + df["text"]', UNKNOWN),
    ("texts[i]", False),  # one of several
    ('df["text"][i]', False),
    ("rows[0]", UNKNOWN),  # an element of a list need be no text
    ("[0, texts][1]", True),  # the element is the column itself
    ('ds[i]', UNKNOWN),  # an example (a dict), not a text
    ("df.text.strip()", UNKNOWN),  # not a str method of a column
])
def test_texts_that_are_obviously_several(expr, expected):
    facts = facts_of(f"""
        df = pd.read_csv("x.csv")
        ds = load_dataset("imdb", split="train")
        texts = df["text"].tolist()
        rows = []
        for line in open("f.txt"):
            rows.append(line.strip())
        one = []
        one.append("a")
        def run(prompt, i):
            probe(x={expr})
        run("a", 0)
    """)
    assert batch(facts, "x") is expected


@pytest.mark.parametrize("change, expected", [
    ("texts.sort()", True),  # reordered in place: every text stays
    ("texts.reverse()", True),
    ("texts.sort(key=lambda t: len(t.split()), reverse=True)", True),
    ("texts.pop()", UNKNOWN),  # one text fewer: one may be left
    ("texts.clear()", UNKNOWN),
    ("texts.insert(0, prompt)", UNKNOWN),
])
def test_a_list_of_several_texts_reordered_in_place_stays_several(change, expected):
    facts = facts_of(f"""
        import json
        texts = []
        for row in json.load(open("x.json")):
            texts.extend(row["text"].split("\\n"))
        prompt = "a"
        {change}
        probe(x=texts)
    """)
    assert batch(facts, "x") is expected


def test_a_collate_functions_batch_is_several_unless_batch_size_is_none():
    facts = facts_of("""
        def collate(batch):
            probe(b=batch)
            return tok(batch, padding=True, return_tensors="pt")
        def single(item):
            probe(s=item)
            return tok(item, padding=True, return_tensors="pt")
        a = DataLoader(["x", "y z"], batch_size=2, collate_fn=collate)
        b = DataLoader(["x", "y z"], batch_size=None, collate_fn=single)
    """)
    assert batch(facts, "b") is True and batch(facts, "s") is UNKNOWN


# ---- ids padded other ways ----------------------------------------------------------------------------


@pytest.mark.parametrize("pad", [
    "ids = ids + [0] * (16 - len(ids))",
    "ids += [tok.pad_token_id] * (16 - len(ids))",
    "ids.extend([0] * (16 - len(ids)))",
])
def test_ids_padded_by_hand_in_a_loop_then_stacked(pad):
    facts = facts_of(f"""
        rows = []
        for text in ["a", "b c d"]:
            ids = tok.encode(text)
            {pad}
            rows.append(ids)
        probe(ids=torch.tensor(rows))
    """)
    assert why_padded(facts, "ids") == "padded by hand with the pad id"


@pytest.mark.parametrize("pad, padded", [
    ("pad_id = tok.pad_token_id\n        rows = [ids + [pad_id] * (16 - len(ids)) for ids in lists]", True),
    ("rows = fill(lists, tok.pad_token_id)", True),  # the pad id handed to a helper's parameter
    ("rows = fill(lists, tok.eos_token_id)", False),  # another special token's id pads nothing the model knows of
])
def test_the_pad_id_reaches_the_padding_through_a_name_or_a_parameter(pad, padded):
    facts = facts_of(f"""
        def fill(seqs, value):
            return [seq + [value] * (16 - len(seq)) for seq in seqs]
        lists = [tok.encode(text) for text in ["a", "b c d"]]
        {pad}
        probe(ids=torch.tensor(rows))
    """)
    assert (why_padded(facts, "ids") == "padded by hand with the pad id") is padded


def test_ids_padded_by_hand_only_on_a_branch_are_unknown():
    facts = facts_of("""
        rows = []
        for text in ["a", "b c d"]:
            ids = tok.encode(text)
            if len(ids) < 16:
                ids += [0] * (16 - len(ids))
            rows.append(ids)
        probe(ids=torch.tensor(rows))
    """)
    expr, scope, order = probe(facts, "ids")
    assert facts.evaluate(expr, scope, order) is UNKNOWN


def test_a_later_binding_in_the_loop_body_reaches_the_read_and_a_branch_does_not():
    facts = facts_of("""
        for text in ["a", "b"]:
            x = tok(text)
            x = tok(text, padding="max_length", max_length=8)
            probe(straight=x["input_ids"])
            y = tok(text)
            if text:
                y = tok(text, padding="max_length", max_length=8)
            probe(branched=y["input_ids"])
    """)
    assert "max_length" in why_padded(facts, "straight")
    expr, scope, order = probe(facts, "branched")
    assert len(facts.kind(expr, scope, order).joined) == 2  # both bindings reach: a join of the two ids ...
    assert why_padded(facts, "branched") is None  # ... whose padding they do not share


@pytest.mark.parametrize("collator, padded", [
    ("DataCollatorForLanguageModeling(tok)", "batches padded by `DataCollatorForLanguageModeling`"),
    ("DataCollatorWithPadding(tok)", "batches padded by `DataCollatorWithPadding`"),
    ('DataCollatorWithPadding(tok, padding="max_length", max_length=32)', "batches padded by `DataCollatorWithPadding`"),
    ("DataCollatorWithPadding(tok, padding=False)", None),
    ("DataCollatorWithFlattening()", None),
])
def test_collators_that_pad(collator, padded):
    facts = facts_of(f"""
        collator = {collator}
        batch = collator([{{"input_ids": [1, 2]}}, {{"input_ids": [3]}}])
        loader = DataLoader([], collate_fn=collator)
        for item in loader:
            probe(direct=batch["input_ids"], loaded=item["input_ids"])
    """)
    assert why_padded(facts, "direct") == padded and why_padded(facts, "loaded") == padded


def test_a_processor_pads_its_text_keyword_only():
    facts = facts_of("""
        processor = AutoProcessor.from_pretrained("openai/clip-vit-base-patch32")
        named = processor(text=["a cat", "a dog"], images=image, padding=True, return_tensors="pt")
        positional = processor(image, ["a cat", "a dog"], padding=True, return_tensors="pt")
        probe(named=named["input_ids"], positional=positional["input_ids"])
    """)
    assert "processor(..., padding=True)" in why_padded(facts, "named")
    assert why_padded(facts, "positional") is None


# ---- PEFT ---------------------------------------------------------------------------------------------


def test_a_peft_adapter_load_names_its_checkpoint_second_and_keeps_the_base_models_kind():
    facts = facts_of("""
        base = AutoModelForCausalLM.from_pretrained("gpt2")
        peft_model = PeftModel.from_pretrained(base, "acme/gpt2-lora")
        probe(m=peft_model)
    """)
    adapter = next(load for load in facts.model_loads if load.adapter)
    assert adapter.checkpoint == "acme/gpt2-lora"
    assert facts.text(checkpoint_argument(adapter.call).value) == '"acme/gpt2-lora"'
    expr, scope, order = probe(facts, "m")
    assert load_behind(facts, facts.kind(expr, scope, order)).checkpoint == "gpt2"


# A DataFrame column the file stores holds what was stored (`brain/tables.py` `column`): ids stored into a column read
# as the ids (never as texts), through any name or function that holds the table, before or after the read in a loop;
# a table whose columns are not all known (read from a file) joins the file's column with the stored one (unknown),
# unless the store runs before every read and nothing between may change the column (`Access.last_store`).
STORES = {
    "the-name": 'df["input_ids"] = ids',
    "an-alias": 'frame = df\nframe["input_ids"] = ids',
    "a-function": 'def store(d):\n    d["input_ids"] = ids\nstore(df)',
    "an-attribute-read": 'df["input_ids"] = ids',
    "later-in-a-loop": None,
}
TABLES = {"a-dict-display": 'pd.DataFrame({"text": ["a b", "c"]})', "a-file": 'pd.read_csv("x.csv")', "a-pickle": 'pd.read_pickle("x.pkl")',
          "a-feather": 'pd.read_feather("x.feather")'}


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("shape", STORES)
def test_a_stored_column_holds_what_was_stored(shape, table):
    read = "df.input_ids" if shape == "an-attribute-read" else 'df["input_ids"]'
    body = f'df = {TABLES[table]}\nids = tok(["a b", "c"], padding=True, return_tensors="pt")["input_ids"]\n'
    if STORES[shape] is None:
        body += f'for _ in range(2):\n    probe(x={read})\n    df["input_ids"] = ids\n'
    else:
        body += STORES[shape] + f"\nprobe(x={read})\n"
    facts = facts_of(body)
    found = facts.evaluate(*probe(facts, "x"))
    assert getattr(found, "kind", None) == "ids" if table == "a-dict-display" or shape == "the-name" else found is UNKNOWN, found


@pytest.mark.parametrize("store", [
    'df["clean"] = df["text"].apply(str.strip)',  # the texts again
    'df["n"] = [1, 2]',  # another column
    'df.loc[:, "text"] = ["x", "y"]',  # a store the model does not follow: the column unknown
])
def test_a_texts_column_stays_several_texts_unless_a_store_may_change_it(store):
    facts = facts_of(f'df = pd.DataFrame({{"text": ["a b", "c"]}})\n{store}\nprobe(x=df["text"], y=df["clean"])\n')
    assert batch(facts, "x") is (UNKNOWN if ".loc" in store else True)
    assert batch(facts, "y") is (UNKNOWN if ".loc" in store else True)


# `col.apply(f)` / `col.map(f)` give each element through `f` (pandas `Series.apply`/`Series.map`): a column of the object
# every return is, no texts where a return is a number (`len`, a label mapping), the texts again where `f` returns
# strings or the file does not show it (`str.strip`, a cleaner of its own); `.tolist()`, `.values` keep the elements.
@pytest.mark.parametrize("made, expected", [
    ('df["text"].apply(lambda t: tok(t, padding="max_length", max_length=8)["input_ids"])', "ids"),
    ('df["text"].apply(lambda t: tok(t, padding="max_length", max_length=8)["input_ids"]).tolist()', "ids"),  # the same elements
    ('df["text"].apply(lambda t: tok(t, padding="max_length", max_length=8)["input_ids"]).values', "ids"),
    ('df["text"].apply(len)', None),
    ('df["text"].map({"a b": 1, "c": 0})', None),
    ('df["text"].apply(lambda t: 1 if "a" in t else 0)', None),
    ('df["text"].apply(str.strip)', "texts"),
    ('df["text"].apply(lambda t: t.lower())', "texts"),
    ('df["text"].map({"a b": "pos", "c": "neg"})', "texts"),
])
def test_a_column_mapped_element_by_element_holds_what_the_function_gives(made, expected):
    facts = facts_of(f'df = pd.DataFrame({{"text": ["a b", "c"]}})\nprobe(x={made})\n')
    found = facts.evaluate(*probe(facts, "x"))
    if expected == "ids":
        assert isinstance(found, Series) and found.element.kind == "ids", found
    elif expected == "texts":
        assert batch(facts, "x") is True, found
    else:
        assert found is UNKNOWN, found


# ---- torch: tensors the file makes itself ------------------------------------------------------------


@pytest.mark.parametrize("params, own", [
    ("[torch.randn(1, 8, requires_grad=True)]", True),
    ("[torch.zeros(4, 8).to('cuda').requires_grad_()]", True),  # moved and switched on: still the file's own tensor
    ("(torch.nn.Parameter(torch.ones(8)), torch.rand_like(torch.ones(8)))", True),
    ("[dummy]", True),  # through a name
    ("[]", False),  # nothing in it: no claim
    ("list(model.parameters())", False),
    ("[torch.randn(8), *model.parameters()]", False),  # the model's weights among them
])
def test_a_list_of_tensors_the_file_made_is_no_models_parameters(params, own):
    facts = facts_of(f"""
        dummy = torch.randn(1, 8, requires_grad=True)
        probe(params={params})
        """)
    expr, scope, order = probe(facts, "params")
    assert own_tensors(facts.evaluate(expr, scope, order)) is own
