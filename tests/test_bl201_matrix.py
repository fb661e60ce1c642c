"""BL201 on generated programs: (ways ids get padded) x (ways they reach a batch) x (ways a batch is unpacked) x (ways
the model is called), each bad program with two twins: one that passes `attention_mask=` and one whose ids are one
unpadded text. Every twin must be silent; the share of bad programs BL201 fires on is a floor that may only rise.

`python tests/test_bl201_matrix.py` lints every program and prints the fire share per dimension (the figures below);
pytest lints a fixed sample (every `STRIDE`-th combination) and all twins of that sample.

Fire share on the bad programs (the matrix written before the code it measures; s23-bl201), all 1,878 combinations:
- main at 13f958c: 794 of 1,878 (0.42); twins silent 3,756 of 3,756. Missed whole: a base model or encoder called as a
  part of the model (`model.bert(ids)`, `model.encoder(input_ids=ids)`), `self.ids, self.labels = ids, labels` in a
  Dataset's `__init__`, ids split by `train_test_split`, a `__getitem__` returning `encoding["input_ids"].flatten()`.
- s23-bl201 (a model's parts, tuple stores of attributes, `flatten`, `train_test_split` of ids): 1,878 of 1,878
  (1.00); twins silent 3,756 of 3,756. The sample pytest runs (every 13th): 145 of 145.
- s24-mask (a list whose last element is padded in place right after it is appended, `rows[-1] = rows[-1] + [0] * ...`,
  the shape of a real token-classification script): 2,061 of 2,061 (1.00); twins silent 4,122 of 4,122.
- s24-several (texts from scikit-learn's `fetch_20newsgroups`: `.data`, `["data"]`, `return_X_y`, split by
  `train_test_split`; ids padded by torchtext `ToTensor(padding_value=...)`, alone or last in `Sequential`):
  2,976 of 2,976 (1.00); twins silent 5,952 of 5,952 (the new pads 549 + 366 of 915, written before the code).
- s25-mask (silent where the run as written never reaches the forward, and on a one-row demo forward): 2,976 of 2,976
  (1.00); twins silent 5,952 of 5,952.
- r2-pad (ids padded by hand with `+=` and copied by index into a dict per example; `+=` in a helper; the two pads
  written after the code): 3,342 of 3,342 (1.00); twins silent 6,684 of 6,684. Main at d5d6ea8 on every 5th
  combination of the two new pads: 38 of 74 (the copy by index missed whole).
"""

from __future__ import annotations

import itertools
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from conftest import lint_text  # noqa: E402

STRIDE = 13
FLOOR = 1.0  # the fire share on the sample must stay at or above this (145 of 145 at s23-bl201)

HEADER = """\
import torch
import torch.nn.functional as F
from tensorflow.keras.preprocessing.sequence import pad_sequences
import torchtext.transforms as T
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset, TensorDataset
from sklearn.datasets import fetch_20newsgroups
from sklearn.model_selection import train_test_split
from transformers import {model_class}, AutoTokenizer, BertModel, DataCollatorForLanguageModeling, DataCollatorWithPadding, default_data_collator

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
tokenizer = AutoTokenizer.from_pretrained("{checkpoint}")
texts = ["a short text", "a noticeably longer second text", "third"]
labels = torch.tensor([0, 1, 0])
"""

# ways ids get padded: statements that bind `input_ids`, a 2-D tensor of the texts' ids
PADS = {
    "tokenizer_batch": """\
        enc = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
        input_ids = enc["input_ids"]
    """,
    "newsgroups_split": """\
        news = fetch_20newsgroups(subset="train", categories=["sci.med", "sci.space"])
        train_texts, val_texts, train_y, val_y = train_test_split(news.data, news.target, test_size=0.2)
        input_ids = tokenizer(train_texts, padding=True, truncation=True, return_tensors="pt")["input_ids"]
        labels = torch.tensor(train_y)
    """,
    "newsgroups_x_y": """\
        docs, targets = fetch_20newsgroups(subset="test", return_X_y=True)
        input_ids = tokenizer.batch_encode_plus(docs, padding="longest", truncation=True, return_tensors="pt")["input_ids"]
        labels = torch.tensor(targets)
    """,
    "newsgroups_key": """\
        bunch = fetch_20newsgroups(remove=("headers", "footers"))
        input_ids = tokenizer(bunch["data"], padding=True, truncation=True, return_tensors="pt")["input_ids"]
        labels = torch.tensor(bunch["target"])
    """,
    "torchtext_to_tensor": """\
        to_ids = T.ToTensor(padding_value=tokenizer.pad_token_id)
        input_ids = to_ids([tokenizer.encode(t) for t in texts])
    """,
    "torchtext_sequential": """\
        text_transform = T.Sequential(T.Truncate(16), T.ToTensor(0))
        input_ids = text_transform([tokenizer.encode(t) for t in texts])
    """,
    "per_text_cat": """\
        rows = []
        for text in texts:
            encoded = tokenizer.encode_plus(text, padding="max_length", max_length=16, truncation=True, return_tensors="pt")
            rows.append(encoded["input_ids"])
        input_ids = torch.cat(rows, dim=0)
    """,
    "per_text_stack": """\
        input_ids = torch.stack([tokenizer(t, padding="max_length", max_length=16, truncation=True, return_tensors="pt")["input_ids"][0] for t in texts])
    """,
    "batch_encode_plus": """\
        input_ids = tokenizer.batch_encode_plus(texts, padding=True, return_tensors="pt")["input_ids"]
    """,
    "pad_sequence": """\
        input_ids = pad_sequence([torch.tensor(tokenizer.encode(t)) for t in texts], batch_first=True, padding_value=0)
    """,
    "f_pad": """\
        pieces = [torch.tensor(tokenizer.encode(t)) for t in texts]
        input_ids = torch.stack([F.pad(p, (0, 16 - len(p)), value=0) for p in pieces])
    """,
    "keras_pad_sequences": """\
        input_ids = torch.tensor(pad_sequences([tokenizer.encode(t) for t in texts], maxlen=16, padding="post", value=0))
    """,
    "same_name_cat": """\
        input_ids = []
        for text in texts:
            encoded_dict = tokenizer.encode_plus(text, add_special_tokens=True, max_length=16, padding="max_length", truncation=True, return_attention_mask=True, return_tensors="pt")
            input_ids.append(encoded_dict["input_ids"])
        input_ids = torch.cat(input_ids, dim=0)
    """,
    "keras_rebound": """\
        input_ids = [tokenizer.encode(t, add_special_tokens=True) for t in texts]
        input_ids = pad_sequences(input_ids, maxlen=16, dtype="long", value=0, truncating="post", padding="post")
        input_ids = torch.tensor(input_ids)
    """,
    "by_hand": """\
        ids_lists = [tokenizer.encode(t) for t in texts]
        input_ids = torch.tensor([ids + [0] * (16 - len(ids)) for ids in ids_lists])
    """,
    "last_replaced": """\
        rows = []
        for text in texts:
            rows.append(tokenizer.encode(text))
            rows[-1] = rows[-1] + [0] * (16 - len(rows[-1]))
        input_ids = torch.tensor(rows)
    """,
    "augmented_copied_by_index": """\
        rows = []
        for text in texts:
            ids = tokenizer.encode(text)
            ids += [tokenizer.pad_token_id] * (16 - len(ids))
            rows.append({"input_ids": [ids[i] for i in range(len(ids))]})
        input_ids = torch.tensor([row["input_ids"] for row in rows])
    """,
    "augmented_in_function": """\
        def pad_one(text):
            ids = tokenizer.encode(text)
            ids += [0] * (16 - len(ids))
            return ids
        input_ids = torch.tensor([pad_one(t) for t in texts])
    """,
}
UNPADDED = """\
    input_ids = tokenizer(texts[0], return_tensors="pt")["input_ids"]
    labels = labels[:1]
"""

# ways the ids reach a batch: (statements, the structure of a batch: "tuple" | "dict" | "plain")
DATA = {
    "plain": ("""\
        b_input_ids = input_ids.to(device)
        b_labels = labels.to(device)
    """, "plain"),
    "tensordataset": ("""\
        dataset = TensorDataset(input_ids, labels)
        loader = DataLoader(dataset, batch_size=2, shuffle=True)
    """, "tuple"),
    "dataset_tuple": ("""\
        class TextDataset(Dataset):
            def __init__(self, ids, labels):
                self.ids = ids
                self.labels = labels

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, idx):
                return self.ids[idx], self.labels[idx]


        loader = DataLoader(TextDataset(input_ids, labels), batch_size=2, shuffle=True)
    """, "tuple"),
    "dataset_tuple_store": ("""\
        class TextDataset(Dataset):
            def __init__(self, ids, labels):
                self.ids, self.labels = ids, labels

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, idx):
                return self.ids[idx], self.labels[idx]


        loader = DataLoader(TextDataset(input_ids, labels), batch_size=2, shuffle=True)
    """, "tuple"),
    "split_tensordataset": ("""\
        train_inputs, validation_inputs, train_labels, validation_labels = train_test_split(input_ids, labels, random_state=2018, test_size=0.1)
        loader = DataLoader(TensorDataset(train_inputs, train_labels), batch_size=2, shuffle=True)
    """, "tuple"),
    "dataset_dict": ("""\
        class TextDataset(Dataset):
            def __init__(self, ids, labels):
                self.ids = ids
                self.labels = labels

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, idx):
                return {"input_ids": self.ids[idx], "labels": self.labels[idx]}


        loader = DataLoader(TextDataset(input_ids, labels), batch_size=2, shuffle=True)
    """, "dict"),
}
# a collator that pads lists of unpadded encodings: (the data path, with its own padding)
COLLATED = {
    "collator_with_padding": """\
        features = [{"input_ids": tokenizer(t, truncation=True)["input_ids"], "labels": int(l)} for t, l in zip(texts, labels)]
        loader = DataLoader(features, batch_size=2, shuffle=True, collate_fn=DataCollatorWithPadding(tokenizer))
    """,
    "collator_mlm": """\
        features = [tokenizer(t, truncation=True) for t in texts]
        collator = DataCollatorForLanguageModeling(tokenizer=tokenizer, mlm=True)
        loader = DataLoader(features, batch_size=2, shuffle=True, collate_fn=collator)
    """,
}
COLLATED_UNPADDED = """\
    features = [{"input_ids": tokenizer(texts[0], truncation=True)["input_ids"], "labels": 0}]
    loader = DataLoader(features, batch_size=2, collate_fn=default_data_collator)
"""
# a Dataset whose `__getitem__` pads each text (then the ids reach the loader padded, whatever `PADS` says)
GETITEM_PADS = """\
    class TextDataset(Dataset):
        def __init__(self, texts, labels, tokenizer, max_len=16):
            self.texts = texts
            self.labels = labels
            self.tokenizer = tokenizer
            self.max_len = max_len

        def __len__(self):
            return len(self.texts)

        def __getitem__(self, idx):
            encoding = self.tokenizer(self.texts[idx], padding="{padding}", max_length=self.max_len, truncation=True, return_tensors="pt")
            return {{"input_ids": encoding["input_ids"].flatten(), "labels": self.labels[idx]}}


    loader = DataLoader(TextDataset(texts, labels, tokenizer), batch_size=2, shuffle=True)
"""

# ways a batch is unpacked into `b_input_ids` and `b_labels`, by the batch's structure; `{call}` is the model call
UNPACK = {
    "tuple": {
        "for_target": """\
            for b_input_ids, b_labels in loader:
                {call}
        """,
        "assign": """\
            for batch in loader:
                b_input_ids, b_labels = batch
                {call}
        """,
        "tuple_genexp": """\
            for batch in loader:
                batch = tuple(t.to(device) for t in batch)
                b_input_ids, b_labels = batch
                {call}
        """,
        "list_comp_index": """\
            for batch in loader:
                batch = [x.to(device) for x in batch]
                b_input_ids = batch[0]
                b_labels = batch[1]
                {call}
        """,
        "enumerate_index": """\
            for step, batch in enumerate(loader):
                b_input_ids = batch[0].to(device)
                b_labels = batch[1].to(device)
                {call}
        """,
    },
    "dict": {
        "key": """\
            for batch in loader:
                b_input_ids = batch["input_ids"].to(device)
                b_labels = batch["labels"].to(device)
                {call}
        """,
        "dict_comp": """\
            for batch in loader:
                batch = {{k: v.to(device) for k, v in batch.items()}}
                b_input_ids = batch["input_ids"]
                b_labels = batch["labels"]
                {call}
        """,
    },
    "plain": {"direct": "{call}\n"},
}

# ways the model is called: (model class, checkpoint, statements before the data, the call; `{mask}` is where the
# clean twin's `attention_mask=` goes)
CALLS = {
    "positional": ("BertForSequenceClassification", "bert-base-uncased", """\
        model = BertForSequenceClassification.from_pretrained("bert-base-uncased").to(device)
    """, "outputs = model(b_input_ids, labels=b_labels{mask})"),
    "keyword": ("BertForSequenceClassification", "bert-base-uncased", """\
        model = BertForSequenceClassification.from_pretrained("bert-base-uncased").to(device)
    """, "outputs = model(input_ids=b_input_ids, labels=b_labels{mask})"),
    "generate": ("AutoModelForSeq2SeqLM", "t5-small", """\
        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small").to(device)
    """, "generated = model.generate(b_input_ids, max_new_tokens=8{mask})"),
    "self_model": ("BertForSequenceClassification", "bert-base-uncased", """\
        class Classifier:
            def __init__(self, checkpoint):
                self.model = BertForSequenceClassification.from_pretrained(checkpoint).to(device)

            def step(self, ids, targets, mask=None):
                return self.model(ids, labels=targets{self_mask})


        classifier = Classifier("bert-base-uncased")
    """, "outputs = classifier.step(b_input_ids, b_labels{mask})"),
    "submodule": ("BertForSequenceClassification", "bert-base-uncased", """\
        model = BertForSequenceClassification.from_pretrained("bert-base-uncased").to(device)
    """, "hidden = model.bert(b_input_ids{mask}).last_hidden_state"),
    "seq2seq_encoder": ("AutoModelForSeq2SeqLM", "t5-small", """\
        model = AutoModelForSeq2SeqLM.from_pretrained("t5-small").to(device)
    """, "hidden = model.encoder(input_ids=b_input_ids{mask}).last_hidden_state"),
    "own_module": ("BertForSequenceClassification", "bert-base-uncased", """\
        class Classifier(torch.nn.Module):
            def __init__(self, checkpoint):
                super().__init__()
                self.bert = BertModel.from_pretrained(checkpoint)
                self.head = torch.nn.Linear(768, 2)

            def forward(self, input_ids, attention_mask=None):
                out = self.bert(input_ids{self_mask})
                return self.head(out.pooler_output)


        model = Classifier("bert-base-uncased").to(device)
    """, "logits = model(b_input_ids{mask})"),
    "train_function": ("BertForSequenceClassification", "bert-base-uncased", """\
        model = BertForSequenceClassification.from_pretrained("bert-base-uncased").to(device)
    """, "outputs = model(b_input_ids, labels=b_labels{mask})"),
}
MASK = ", attention_mask=(b_input_ids != 0).long()"


def _program(pad: str, data: str, unpack: str, call: str, variant: str) -> str:
    """One script: `variant` "bad" (padded, no mask), "masked" (the mask passed), "unpadded" (one text's ids)."""
    model_class, checkpoint, setup, line = CALLS[call]
    if call in ("self_model", "own_module"):
        inner = {"self_model": "mask", "own_module": "attention_mask"}[call]
        setup = setup.replace("{self_mask}", f", attention_mask={inner}" if variant == "masked" else "")
    mask = MASK.replace("attention_mask=", "mask=") if call == "self_model" else MASK
    line = line.replace("{mask}", mask if variant == "masked" else "")
    if pad in COLLATED:
        padding, (loading, structure) = "", (COLLATED_UNPADDED if variant == "unpadded" else COLLATED[pad], "dict")
    elif data == "dataset_getitem_pads":
        padding, loading, structure = "", GETITEM_PADS.format(padding="do_not_pad" if variant == "unpadded" else "max_length"), "dict"
    else:
        padding = UNPADDED if variant == "unpadded" else PADS[pad]
        loading, structure = DATA[data]
    body = textwrap.dedent(UNPACK[structure][unpack]).replace("{{", "{").replace("}}", "}").replace("{call}", line)
    if call == "train_function":  # the loop in a function the script calls with its model and loader
        body = "def train_epoch(model, loader, device):\n" + textwrap.indent(body, "    ") + "\n\ntrain_epoch(model, loader, device)\n"
    head = HEADER.format(model_class=model_class, checkpoint=checkpoint)
    return "\n".join([head, textwrap.dedent(setup), textwrap.dedent(padding), textwrap.dedent(loading), body])


def combinations() -> list[tuple[str, str, str, str]]:
    """Every (pad, data, unpack, call) that makes a program."""
    found = []
    for call in CALLS:
        for pad in PADS:
            for data, (_, structure) in DATA.items():
                if not (data == "plain" and call == "train_function"):
                    found += [(pad, data, unpack, call) for unpack in UNPACK[structure]]
        for pad in COLLATED:
            found += [(pad, "collator", unpack, call) for unpack in UNPACK["dict"]]
        found += [("getitem", "dataset_getitem_pads", unpack, call) for unpack in UNPACK["dict"]]
    return found


def fires(source: str) -> bool:
    return any(f.code == "BL201" for f in lint_text(source))


SAMPLE = combinations()[::STRIDE]


def test_twins_silent_and_floor() -> None:
    """On the sample: BL201 fires on at least `FLOOR` of the bad programs and on none of their twins."""
    fired = 0
    loud = []
    for combo in SAMPLE:
        fired += fires(_program(*combo, "bad"))
        loud += [(combo, v) for v in ("masked", "unpadded") if fires(_program(*combo, v))]
    assert not loud, loud
    assert fired / len(SAMPLE) >= FLOOR, f"{fired} of {len(SAMPLE)}"


@pytest.mark.parametrize("combo", [c for c in combinations() if c[0] == "tokenizer_batch" and c[2] in ("for_target", "key")])
def test_program_is_python(combo) -> None:
    for variant in ("bad", "masked", "unpadded"):
        compile(_program(*combo, variant), "<generated>", "exec")


def main() -> None:
    combos = combinations()
    hit: Counter = Counter()
    total: Counter = Counter()
    loud = []
    for combo in combos:
        ok = fires(_program(*combo, "bad"))
        for dim, value in zip(("pad", "data", "unpack", "call"), combo):
            total[dim, value] += 1
            hit[dim, value] += ok
        total["all"] += 1
        hit["all"] += ok
        loud += [(combo, v) for v in ("masked", "unpadded") if fires(_program(*combo, v))]
    for key in sorted(total, key=str):
        print(f"{str(key):45} {hit[key]:4} / {total[key]:4}  {hit[key] / total[key]:.2f}")
    print(f"twins that fire: {len(loud)} of {2 * len(combos)}")
    for combo, variant in loud:
        print("  loud:", combo, variant)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(_program(*sys.argv[1:6]))
    else:
        main()
