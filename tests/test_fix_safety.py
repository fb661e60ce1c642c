"""Each fix's preconditions, checked offline: the fix is safe where the value layer shows them, wraps the value or
is withheld (or unsafe) where it does not, and the help says what else the call must change. The real library
proves the same cases in tests/test_fix_differential.py."""

from __future__ import annotations

import pytest

from bertlint import fixer
from conftest import lint_text

HEAD = 'import numpy as np\nimport pandas as pd\nfrom transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\n'


def fixed(source: str, version: str = "5.24") -> str:
    """The source after every safe fix, as `--fix` applies them."""
    for _ in range(fixer.MAX_PASSES):
        text, applied = fixer.apply_edits(source, lint_text(source, transformers_version=version), {"safe"})
        if not applied:
            return source
        source = text
    return source


def finding(source: str, code: str, version: str = "5.24"):
    found = [f for f in lint_text(source, transformers_version=version) if f.code == code]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(("setup", "call"), [
    ('x = ["a", "b"]', "tok(x, padding=True)"),
    ('x = ("a", "b")', "tok(x, padding=True)"),
    ("x = [t for t in df.text]", "tok(x, padding=True)"),
    ('x = df["text"].tolist()', "tok(x, padding=True)"),
    ('x = df["text"].values', "tok(x.tolist(), padding=True)"),
    ("x = np.array(texts)", "tok(x.tolist(), padding=True)"),
    ('x = df["text"]', "tok(list(x), padding=True)"),
    ("x = zip(a, b)", "tok(list(x), padding=True)"),
    ("x = (t for t in texts)", "tok(list(x), padding=True)"),
])
def test_batch_encode_plus_passes_a_list_or_wraps_the_texts(setup, call):
    source = HEAD + f"from corpus import texts, a, b\ndf = pd.read_csv('d.csv')\n{setup}\nenc = tok.batch_encode_plus(x, padding=True)\n"
    assert fixed(source).endswith(f"enc = {call}\n")


def test_a_parameter_takes_the_shape_of_its_call_sites():
    source = HEAD + "def enc(x):\n    return tok.batch_encode_plus(x, padding=True)\n{}\n"
    assert "return tok(x, padding=True)" in fixed(source.format('enc(["a", "b"])'))
    assert "return tok(x.tolist(), padding=True)" in fixed(source.format('enc(np.array(["a", "b"]))'))
    assert "return tok(list(x), padding=True)" in fixed(source.format("pass"))  # never called: unknown


def test_batch_encode_plus_keyword_becomes_text_and_is_wrapped():
    source = HEAD + "enc = tok.batch_encode_plus(batch_text_or_text_pairs=zip(a, b), padding=True)\n"
    assert fixed(source).endswith("enc = tok(text=list(zip(a, b)), padding=True)\n")


def test_a_second_positional_argument_withholds_the_fix():
    f = finding(HEAD + "enc = tok.batch_encode_plus(texts, True)\n", "BL608")
    assert f.fix is None and "`text_pair`, not `add_special_tokens`" in f.help


def test_split_into_words_makes_the_batch_fix_unsafe():
    f = finding(HEAD + 'enc = tok.batch_encode_plus([["a", "b"]], is_split_into_words=True)\n', "BL608")
    assert f.fix.applicability == "unsafe" and "one sequence of words" in f.help


@pytest.mark.parametrize(("call", "safe"), [
    ('tok.encode_plus("hello world", max_length=8)', True),
    ('tok.encode_plus(f"{a} {b}", "pair")', True),
    ('tok.encode_plus(" ".join(words))', True),
    ('tok.encode_plus(["hello", "world"], is_split_into_words=True)', True),
    ("tok.encode_plus(text, max_length=8)", False),
    ('tok.encode_plus(["hello", "world"])', False),
])
def test_encode_plus_is_safe_only_for_one_string(call, safe):
    f = finding(HEAD + f"enc = {call}\n", "BL608")
    assert f.fix.applicability == ("safe" if safe else "unsafe")
    assert safe or "check that `text` is one string" in f.help


@pytest.mark.parametrize(("opts", "fixable", "help"), [
    ('{"padding": "longest"}', False, "`**opts` already passes `padding='longest'`"),
    ('{"padding": "longest"} if flag else {}', False, "`**opts` may already pass `padding`"),
    ('{"truncation": True}', True, 'use `padding="max_length"`'),
])
def test_pad_to_max_length_fix_needs_no_padding_in_the_unpacked_mapping(opts, fixable, help):
    source = HEAD + f"from corpus import texts, flag\nopts = {opts}\nenc = tok(texts, pad_to_max_length=True, max_length=16, **opts)\n"
    f = finding(source, "BL101")
    assert (f.fix is not None) == fixable and help in f.help


ADAMW = 'import torch\nfrom transformers import AdamW\nopt = AdamW(model.parameters(), lr=2e-5{})\n'


def test_adamw_help_names_what_torch_lacks():
    f = finding(ADAMW.format(", correct_bias=False"), "BL604")
    assert f.fix is None
    assert "drop `correct_bias=`" in f.help and "nothing in torch turns it off" in f.help
    assert "eps=1e-6, weight_decay=0.0" in f.help and "keep `transformers.AdamW`" not in f.help
    older = finding(ADAMW.format(", correct_bias=False"), "BL604", version="4.40")
    assert "keep `transformers.AdamW` while the target still has it (before transformers 4.50)" in older.help
    plain = finding(ADAMW.format(""), "BL604")
    assert plain.fix is not None and "drop" not in plain.help


def test_an_unused_tensorflow_import_is_to_be_deleted():
    unused = finding("from transformers import TFBertModel, BertModel\nmodel = BertModel.from_pretrained('b')\n", "BL606")
    assert unused.help == "drop `TFBertModel` from the import: the script never uses it"  # `BertModel` stays
    alone = finding("from transformers import TFBertModel\n", "BL606")
    assert alone.help == "delete the import: the script never uses `TFBertModel`"
    used = finding("from transformers import TFBertModel\nmodel = TFBertModel.from_pretrained('b')\n", "BL606")
    assert used.help.startswith("pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch")


SEQ2SEQ = """\
from datasets import load_dataset
from transformers import AutoTokenizer, AutoModelForSeq2SeqLM, Seq2SeqTrainer
tok = AutoTokenizer.from_pretrained("t5-small")
model = AutoModelForSeq2SeqLM.from_pretrained("t5-small")
ds = load_dataset("x")
def prep(b):
    enc = tok(b["document"], padding="max_length", max_length=512, truncation=True)
    enc["labels"] = tok(text_target=b["summary"], padding="max_length", max_length=64, truncation=True)["input_ids"]
    return enc
ds = ds.map(prep, batched=True)
Seq2SeqTrainer(model=model, train_dataset=ds["train"]).train()
"""


def test_seq2seq_dynamic_padding_help_names_the_columns_and_the_decoding():
    f = [f for f in lint_text(SEQ2SEQ, preview=True) if f.code == "BL106"]
    assert f and all("DataCollatorForSeq2Seq" in x.help and "remove_columns=" in x.help and "replace -100 by `tokenizer.pad_token_id` before `batch_decode`" in x.help for x in f)


def test_an_inserted_argument_goes_after_a_parenthesized_last_argument():
    source = ADAMW.replace("model.parameters(), lr=2e-5{}", "params, 1e-3, (0.8, 0.9)")
    assert "AdamW(params, 1e-3, (0.8, 0.9), eps=1e-6, weight_decay=0.0)" in fixed(source)
    padded = HEAD + 'enc = tok(texts, padding="max_length", max_length=(16))\n'
    assert 'max_length=(16), truncation=True)' in fixed(padded)
