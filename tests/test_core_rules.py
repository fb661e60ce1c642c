"""The core rules BL101, BL201, BL202, BL301, BL401, BL501, BL502: what fires, where, with which words,
and every must-not case of the catalogue."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from bertlint import engine
from bertlint.config import load_settings
from bertlint.fixer import apply_edits, parses
from bertlint.rules import all_codes
from bertlint.target import target_version
from conftest import T5_SUMMARIES, codes, lint_text


def only(code: str, source: str, path: Path | None = None, **opts) -> list:
    findings = lint_text(source, path, **opts)
    assert "BL901" not in codes(findings), "the snippet must parse, or silence proves nothing"
    return [f for f in findings if f.code == code]


def column_of(finding, text: str) -> int:
    return finding.source_line.index(text) + 1


TOKENIZER = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
"""

# --- BL101 --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        'tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)',
        'tok.encode_plus("a", max_length=8, truncation=True, pad_to_max_length=True)',
        'tok.batch_encode_plus(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)',
    ],
)
def test_bl101_fires_in_every_encoding_call(call):
    [finding] = only("BL101", TOKENIZER + f"enc = {call}\n")
    assert (finding.line, finding.column) == (3, column_of(finding, "pad_to_max_length"))


def test_bl101_fires_inside_a_dataset_map_function_and_through_aliases():
    source = """\
    import transformers as tf_
    from datasets import load_dataset
    tokenizer = tf_.AutoTokenizer.from_pretrained("bert-base-uncased")
    def preprocess(batch):
        return tokenizer(batch["text"], max_length=128, truncation=True, pad_to_max_length=True)
    data = load_dataset("imdb").map(preprocess, batched=True)
    """
    assert [f.line for f in only("BL101", source)] == [5]


def test_bl101_fires_on_a_tokenizer_held_by_a_dataset_class():
    source = """\
    from torch.utils.data import Dataset
    from transformers import BertTokenizer as Tok
    class Reviews(Dataset):
        def __init__(self, texts):
            self.tokenizer = Tok.from_pretrained("bert-base-cased")
            self.texts = texts
        def __getitem__(self, i):
            return self.tokenizer(self.texts[i], max_length=64, pad_to_max_length=True, truncation=True)
    """
    assert [f.line for f in only("BL101", source)] == [8]


def test_bl101_ignores_a_function_of_our_own_with_that_keyword():
    source = TOKENIZER + textwrap.dedent(
        """\
        def encode(texts, pad_to_max_length=True):
            return tok(texts, padding="max_length" if pad_to_max_length else False, max_length=16, truncation=True)
        enc = encode(["a", "b"], pad_to_max_length=True)
        settings = dict(pad_to_max_length=True)
        """
    )
    assert only("BL101", source) == []


@pytest.mark.parametrize("version", ["3.1", "4.40", "4.51"])
def test_bl101_is_silent_where_the_keyword_still_pads(version):
    """Before 4.52 `pad_to_max_length=True` pads (with the library's own FutureWarning): no problem happens there."""
    source = TOKENIZER + 'enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)\n'
    assert only("BL101", source, transformers_version=version) == []


@pytest.mark.parametrize(
    ("version", "tokenizer", "words"),
    [
        ("4.55", "AutoTokenizer", ["removed in 4.52", "fast tokenizer raises `TypeError"]),
        ("4.55", "BertTokenizerFast", ["fast tokenizer raises `TypeError"]),
        ("4.55", "BertTokenizer", ["slow tokenizer", "does not pad"]),
        ("5.2", "AutoTokenizer", ["removed", "5.2.0 silently ignores it", "nothing is padded"]),
    ],
)
def test_bl101_message_says_what_the_target_version_does(version, tokenizer, words):
    source = f"""\
    from transformers import {tokenizer}
    tok = {tokenizer}.from_pretrained("bert-base-uncased")
    enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)
    """
    [finding] = only("BL101", source, transformers_version=version)
    for word in words:
        assert word in finding.message


@pytest.mark.parametrize(("version", "words"), [("5.2", ["has no `encode_plus`", "BL608", "nothing is padded"]), ("4.55", ["removed in 4.52", "TypeError"])])
def test_bl101_message_on_encode_plus_says_the_method_is_gone_on_5(version, words):
    """On 5.x `encode_plus` raises before the keyword matters: the message says so, and what the tokenizer call
    that replaces it (BL608's fix) does with the keyword; on 4.x the method exists and the usual message stands."""
    source = TOKENIZER + 'enc = tok.encode_plus("a", max_length=8, truncation=True, pad_to_max_length=True)\n'
    [finding] = only("BL101", source, transformers_version=version)
    for word in words:
        assert word in finding.message


def test_bl101_message_for_a_slow_auto_tokenizer_and_an_unknown_one():
    slow = TOKENIZER.replace('"bert-base-uncased")', '"bert-base-uncased", use_fast=False)')
    [finding] = only("BL101", slow + 'enc = tok("a", pad_to_max_length=True)\n', transformers_version="4.55")
    assert "slow tokenizer" in finding.message
    unknown = 'from transformers import Trainer\ndef f(tokenizer):\n    return tokenizer("a", pad_to_max_length=True)\n'
    [finding] = only("BL101", unknown, transformers_version="4.55")
    assert "fast tokenizers raise TypeError, slow ones silently do not pad" in finding.message


@pytest.mark.parametrize(("value", "replacement"), [("True", 'padding="max_length"'), ("False", "padding=False")])
def test_bl101_safe_fix_rewrites_the_keyword(value, replacement):
    source = TOKENIZER + f'enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length={value})\n'
    [finding] = only("BL101", source)
    assert finding.fix.applicability == "safe"
    text, applied = apply_edits(source, [finding], {"safe"})
    assert applied and parses(text)
    assert replacement in text and "pad_to_max_length" not in text


@pytest.mark.parametrize(("version", "tokenizer", "padding", "fires"), [
    ("5.2", "AutoTokenizer", "True", False),  # dropped silently; padding= pads
    ("5.2", "AutoTokenizer", '"max_length"', False),
    ("5.2", "AutoTokenizer", "False", True),  # 4.x padded because of the keyword; 5.x pads nothing
    ("4.55", "BertTokenizerFast", "True", True),  # the fast tokenizer raises TypeError all the same
    ("4.55", "BertTokenizer", "True", False),  # the slow one logs and pads as padding= asks
    ("4.40", "AutoTokenizer", "False", False),  # the keyword still pads there: nothing happens that BL101 is about
])
def test_bl101_beside_padding(version, tokenizer, padding, fires):
    source = f"""\
    from transformers import {tokenizer}
    tok = {tokenizer}.from_pretrained("bert-base-uncased")
    enc = tok(["a", "b"], max_length=8, truncation=True, padding={padding}, pad_to_max_length=True)
    """
    assert len(only("BL101", source, transformers_version=version)) == fires


def test_bl101_offers_no_fix_when_padding_is_also_given_or_the_value_is_unknown():
    for call in ('tok("a", padding=True, pad_to_max_length=True)', 'tok("a", pad_to_max_length=FLAG)'):
        [finding] = only("BL101", TOKENIZER + f"import os\nFLAG = bool(os.environ.get('P'))\nenc = {call}\n", transformers_version="4.55")
        assert finding.fix is None


# --- BL201 --------------------------------------------------------------------------------

ENCODER = """\
import torch
from transformers import AutoModel, AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
"""


@pytest.mark.parametrize(
    ("lines", "why", "argument"),
    [
        ('enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])', "pads a batch of several texts", 'enc["input_ids"]'),
        ('enc = tok("a", padding="max_length", max_length=16, return_tensors="pt")\nout = model(input_ids=enc.input_ids)', 'padding="max_length"', "input_ids="),
        ('enc = tok(["a", "b c"], padding=True, return_tensors="pt")\nout = model.generate(enc["input_ids"], max_new_tokens=5)', "pads a batch", 'enc["input_ids"]'),
        ('enc = tok(["a", "b c"], padding=True, return_tensors="pt")\nids = enc["input_ids"].to("cuda")\nout = model.forward(ids)', "pads a batch", "ids)"),
    ],
)
def test_bl201_fires_on_padded_ids_without_a_mask(lines, why, argument):
    [finding] = only("BL201", ENCODER + lines + "\n")
    assert why in finding.message
    assert finding.source_line.startswith("out =") and finding.column == column_of(finding, argument)


def test_bl201_takes_attention_mask_none_as_no_mask_and_fills_that_keyword():
    """`attention_mask=None` is the forward's default: no mask reaches the model. The fix gives that keyword the
    encoding's mask (another `attention_mask=` beside it would be a SyntaxError)."""
    source = ENCODER + 'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"], attention_mask=None)\n'
    [finding] = only("BL201", source)
    text, _ = apply_edits(source, [finding], {"unsafe"})
    assert 'model(enc["input_ids"], attention_mask=enc["attention_mask"])' in text
    compile(text, "fixed.py", "exec")
    assert "BL201" not in codes(lint_text(text))


def test_bl201_sits_on_the_ids_argument_and_offers_the_mask():
    source = ENCODER + 'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])\n'
    [finding] = only("BL201", source)
    assert (finding.line, finding.column) == (6, column_of(finding, 'enc["input_ids"]'))
    assert finding.fix.applicability == "unsafe"
    text, _ = apply_edits(source, [finding], {"unsafe"})
    assert 'model(enc["input_ids"], attention_mask=enc["attention_mask"])' in text
    assert "BL201" not in codes(lint_text(text))


def test_bl201_manual_padding_pad_sequence_and_collated_batches():
    manual = ENCODER + textwrap.dedent(
        """\
        tokens = tok.tokenize("hello world")
        tokens = tokens + ["[PAD]"] * (16 - len(tokens))
        ids = tok.convert_tokens_to_ids(tokens)
        out = model(torch.tensor([ids]))
        """
    )
    [finding] = only("BL201", manual)
    assert "padded by hand" in finding.message and finding.fix is None
    sequences = ENCODER + textwrap.dedent(
        """\
        from torch.nn.utils.rnn import pad_sequence
        seqs = [torch.tensor(tok.encode(t)) for t in ["a", "b c"]]
        batch = pad_sequence(seqs, batch_first=True, padding_value=tok.pad_token_id)
        out = model(batch)
        """
    )
    assert "pad_sequence" in only("BL201", sequences)[0].message
    loader = ENCODER + textwrap.dedent(
        """\
        from torch.utils.data import DataLoader
        from datasets import load_dataset
        from transformers import DataCollatorWithPadding
        data = load_dataset("imdb")["train"]
        loader = DataLoader(data, batch_size=8, collate_fn=DataCollatorWithPadding(tok))
        for step, batch in enumerate(loader):
            out = model(input_ids=batch["input_ids"], labels=batch["labels"])
        """
    )
    assert "DataCollatorWithPadding" in only("BL201", loader)[0].message


def test_bl201_return_attention_mask_false():
    source = ENCODER + textwrap.dedent(
        """\
        enc = tok(["a", "b c d"], padding=True, return_attention_mask=False, return_tensors="pt")
        out = model(**enc)
        out = model(enc["input_ids"])
        one = tok("a", return_attention_mask=False, return_tensors="pt")
        out = model(**one)
        """
    )
    findings = only("BL201", source)
    assert [f.line for f in findings] == [6, 7]
    assert all("return_attention_mask=False" in f.message and f.fix is None for f in findings)
    assert findings[0].column == column_of(findings[0], "**enc")


@pytest.mark.parametrize(
    "lines",
    [
        'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(**enc)',
        'enc = tok("just one text", return_tensors="pt")\nout = model(enc["input_ids"])',
        'enc = tok(["only one"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])',
        'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"], enc["attention_mask"])',
        'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])',
        'enc = tok(unknown_texts, padding=True, return_tensors="pt")\nout = model(enc["input_ids"])',
        'from torch.utils.data import DataLoader\nfrom transformers import default_data_collator\nfor batch in DataLoader(d, collate_fn=default_data_collator):\n    out = model(batch["input_ids"])',
    ],
)
def test_bl201_silent(lines):
    assert only("BL201", ENCODER + lines + "\n") == []


def test_bl201_pad_to_max_length_pads_only_before_4_52():
    source = ENCODER + 'enc = tok("a", max_length=8, truncation=True, pad_to_max_length=True, return_tensors="pt")\nout = model(enc["input_ids"])\n'
    [finding] = only("BL201", source, transformers_version="4.40")
    assert "pad_to_max_length=True" in finding.message
    assert only("BL201", source, transformers_version="4.55") == []


def test_bl201_severity_follows_what_is_known_of_the_architecture():
    batch = 'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])\n'
    known = ENCODER + batch
    [finding] = only("BL201", known)
    assert finding.severity == "error"
    unknown = known.replace('AutoModel.from_pretrained("bert-base-uncased")', "AutoModel.from_pretrained(sys.argv[1])").replace("import torch", "import sys\nimport torch")
    [finding] = only("BL201", unknown)
    assert finding.severity == "warning" and "unless the model is causal" in finding.message


CAUSAL_LM = """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("gpt2")
tok.pad_token = tok.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
enc = tok(["a", "b c d"], padding=True, return_tensors="pt")
"""


@pytest.mark.parametrize(
    ("lines", "fires"),
    [
        ('out = model(enc["input_ids"])', False),  # right padding: pads come after every real token
        ('tok.padding_side = "left"\nenc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])', True),
        ('out = model.generate(enc["input_ids"], max_new_tokens=5)', True),  # generation needs the mask on either side
        ('from torch.nn.utils.rnn import pad_sequence\nids = pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], batch_first=True)\nout = model(ids)', False),
        ('from torch.nn.utils.rnn import pad_sequence\nids = pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], batch_first=True, padding_side="left")\nout = model(ids)', True),
    ],
)
def test_bl201_causal_models_need_the_mask_only_for_left_padding_and_generation(lines, fires):
    found = only("BL201", CAUSAL_LM + lines + "\n")
    assert [f.severity for f in found] == (["error"] if fires else [])


@pytest.mark.parametrize(
    ("lines", "fires"),
    [
        ('other = AutoTokenizer.from_pretrained("gpt2", padding_side="left")', False),  # another tokenizer's side
        ('other = AutoTokenizer.from_pretrained("gpt2")\nother.padding_side = "left"', False),
        ('same = tok\nsame.padding_side = "left"', True),  # the same tokenizer under another name
        ('tok.padding_side = sys.argv[1]', False),  # unresolved: unknown stays silent for a causal model
        ('kwargs = {}\nkwargs["padding_side"] = "left"', True),  # an item store may feed any load: still left
    ],
)
def test_bl201_padding_side_is_the_encoding_tokenizer_s(lines, fires):
    source = CAUSAL_LM.replace("import torch", "import sys\nimport torch").replace("enc = ", lines + "\nenc = ") + 'out = model(enc["input_ids"])\n'
    found = only("BL201", source)
    assert [f.severity for f in found] == (["error"] if fires else [])
    assert all("with left padding" in f.message for f in found)


def test_bl201_message_says_only_the_side_it_knows():
    """Beside a left-padding tokenizer, a right-padded encoder batch is said to attend to the pads, not to be
    left-padded; with an unknown architecture and a side that does not resolve, the warning names both conditions."""
    encoder = ENCODER + 'gen = AutoTokenizer.from_pretrained("gpt2", padding_side="left")\nenc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])\n'
    [finding] = only("BL201", encoder)
    assert finding.severity == "error" and finding.message.endswith(": it attends to the [PAD] tokens and silently computes different outputs")
    unknown = "import sys\n" + ENCODER.replace('AutoModel.from_pretrained("bert-base-uncased")', "AutoModel.from_pretrained(sys.argv[1])")
    batch = 'enc = tok(["a", "b c d"], padding=True, return_tensors="pt")\nout = model(enc["input_ids"])\n'
    [finding] = only("BL201", unknown + "tok.padding_side = sys.argv[2]\n" + batch)
    assert finding.severity == "warning" and "unless the model is causal (decoder-only) and pads on the right, it attends" in finding.message
    [finding] = only("BL201", unknown + batch)
    assert finding.severity == "warning" and "unless the model is causal (decoder-only), it attends" in finding.message


def test_bl201_text_encoder_conditioning_a_diffusion_model_is_left_alone():
    source = textwrap.dedent(
        """\
        import torch
        from diffusers import UNet2DConditionModel
        from transformers import AutoModel, AutoTokenizer
        tok = AutoTokenizer.from_pretrained("t5-small")
        encoder = AutoModel.from_pretrained("t5-small")
        unet = UNet2DConditionModel.from_pretrained("some/unet")
        enc = tok(["a cat", "a dog on a red sofa"], padding="max_length", max_length=32, truncation=True, return_tensors="pt")
        hidden = encoder(enc["input_ids"])[0]
        pred = unet(torch.randn(2, 4, 8, 8), 10, encoder_hidden_states=hidden)
        """
    )
    assert only("BL201", source) == []
    # the same encoder with its output used for something else (and no diffusers) is still a finding
    assert len(only("BL201", source.replace("from diffusers import", "from unet_lib import").replace("encoder_hidden_states=hidden", "hidden"))) == 1


# --- BL202 --------------------------------------------------------------------------------

CAUSAL = """\
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("gpt2")
model = AutoModelForCausalLM.from_pretrained("gpt2")
"""


def test_bl202_fires_on_a_different_max_length_at_that_keyword():
    source = CAUSAL + textwrap.dedent(
        """\
        def prep(b):
            enc = tok(b["prompt"], padding="max_length", max_length=256, truncation=True)
            enc["labels"] = tok(b["answer"], padding="max_length", max_length=64, truncation=True)["input_ids"]
            return enc
        """
    )
    [finding] = only("BL202", source)
    assert (finding.line, finding.column) == (6, column_of(finding, "max_length=64"))
    assert "a fixed 64 tokens" in finding.message and "a fixed 256 tokens" in finding.message and "causal-lm" in finding.message


def test_bl202_fires_on_a_different_padding_mode_at_that_keyword():
    source = CAUSAL + textwrap.dedent(
        """\
        def prep(b):
            enc = tok(b["prompt"], padding="max_length", max_length=64, truncation=True)
            labels = tok(text_target=b["answer"], padding=True, max_length=64, truncation=True)
            enc["labels"] = labels["input_ids"]
            return enc
        """
    )
    [finding] = only("BL202", source)
    assert finding.column == column_of(finding, "padding=True")
    assert "the longest text in the batch (cut at 64)" in finding.message


def test_bl202_fires_on_labels_passed_to_the_forward():
    source = CAUSAL + textwrap.dedent(
        """\
        def step(prompts, answers):
            enc = tok(prompts, padding="max_length", max_length=48, truncation=True, return_tensors="pt")
            return model(**enc, labels=tok(answers, padding="max_length", max_length=16, return_tensors="pt")["input_ids"].to("cuda"))
        """
    )
    assert len(only("BL202", source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        CAUSAL.replace("AutoModelForCausalLM", "AutoModelForSeq2SeqLM").replace('"gpt2"', '"t5-small"')
        + 'def prep(b):\n    enc = tok(b["x"], padding="max_length", max_length=512, truncation=True)\n'
        '    enc["labels"] = tok(text_target=b["y"], padding="max_length", max_length=128, truncation=True)["input_ids"]\n    return enc\n',
        CAUSAL + 'def prep(b):\n    enc = tok(b["x"], padding="max_length", max_length=256, truncation=True)\n    enc["labels"] = enc["input_ids"].copy()\n    return enc\n',
        CAUSAL + 'def prep(b):\n    enc = tok(b["x"], padding="max_length", max_length=128, truncation=True)\n'
        '    enc["labels"] = tok(b["y"], padding="max_length", max_length=128, truncation=True)["input_ids"]\n    return enc\n',
        CAUSAL.replace("AutoModelForCausalLM", "AutoModelForSequenceClassification")
        + 'def prep(b):\n    enc = tok(b["x"], padding="max_length", max_length=256, truncation=True)\n'
        '    enc["labels"] = tok(b["y"], padding="max_length", max_length=64, truncation=True)["input_ids"]\n    return enc\n',
    ],
    ids=["seq2seq", "labels-copied", "same-length", "classifier"],
)
def test_bl202_silent(source):
    assert only("BL202", source) == []


# --- BL301 --------------------------------------------------------------------------------


def rate(checkpoint: str, lr: str, *, cls: str = "AutoModelForSequenceClassification", load: str = "from_pretrained", extra: str = "") -> list:
    arg = f'"{checkpoint}"' if load == "from_pretrained" else "config"
    source = "\n".join([
        "import torch",
        f"from transformers import {cls}, AutoConfig",
        f'config = AutoConfig.from_pretrained("{checkpoint}")',
        f"model = {cls}.{load}({arg})",
        extra,
        f"optimizer = torch.optim.AdamW(model.parameters(), lr={lr})\n",
    ])  # fmt: skip
    return only("BL301", source)


@pytest.mark.parametrize(
    ("checkpoint", "lr", "cls", "severity", "words"),
    [
        ("bert-base-uncased", "3e-4", "AutoModelForSequenceClassification", "warning", ["3× above", "5e-06–0.0001", "BERT/DistilBERT-base"]),
        ("bert-base-uncased", "1e-3", "AutoModelForSequenceClassification", "error", ["10× above"]),
        ("bert-base-uncased", "1e-6", "AutoModelForSequenceClassification", "warning", ["5× below", "stalls"]),
        ("roberta-large", "2e-4", "AutoModelForSequenceClassification", "warning", ["4× above", "2e-06–5e-05", "large encoder"]),
        ("roberta-large", "1e-3", "AutoModelForSequenceClassification", "error", ["20× above", "diverges"]),
        ("meta-llama/Llama-2-7b-hf", "2e-4", "AutoModelForCausalLM", "warning", ["1e-06–5e-05", "LLM full fine-tuning"]),
        ("my-org/private-checkpoint", "5e-4", "BertForSequenceClassification", "warning", ["BERT/DistilBERT-base"]),  # the class gives the family
    ],
)
def test_bl301_ranges_per_family(checkpoint, lr, cls, severity, words):
    [finding] = rate(checkpoint, lr, cls=cls)
    assert finding.severity == severity
    for word in words:
        assert word in finding.message
    assert finding.column == column_of(finding, "lr=")


@pytest.mark.parametrize(
    ("checkpoint", "lr", "cls"),
    [
        ("bert-base-uncased", "2e-5", "AutoModelForSequenceClassification"),
        ("roberta-large", "1e-5", "AutoModelForSequenceClassification"),
        ("meta-llama/Llama-2-7b-hf", "2e-5", "AutoModelForCausalLM"),
        ("t5-base", "3e-4", "AutoModelForSeq2SeqLM"),
    ],
)
def test_bl301_silent_inside_the_range(checkpoint, lr, cls):
    assert rate(checkpoint, lr, cls=cls) == []


@pytest.mark.parametrize(
    ("checkpoint", "lr", "cls", "fires"),
    [
        ("bert-base-uncased", "2e-4", "AutoModelForSequenceClassification", False),  # twice the 1e-4 ceiling: a recipe's choice
        ("bert-base-uncased", "2.1e-4", "AutoModelForSequenceClassification", True),  # beyond twice
        ("bert-base-uncased", "2.5e-6", "AutoModelForSequenceClassification", False),  # half the 5e-6 floor
        ("bert-base-uncased", "2.4e-6", "AutoModelForSequenceClassification", True),
        ("roberta-large", "1e-6", "AutoModelForSequenceClassification", False),  # half the large encoders' 2e-6 floor
        ("t5-base", "9.98796e-6", "AutoModelForSeq2SeqLM", False),  # a tuned rate a hair under T5's 1e-5 floor
        ("gpt2", "1e-3", "AutoModelForCausalLM", False),  # twice GPT-2's 5e-4 ceiling
        ("gpt2", "1.5e-3", "AutoModelForCausalLM", True),
    ],
)
def test_bl301_speaks_only_beyond_twice_outside_the_range(checkpoint, lr, cls, fires):
    assert bool(rate(checkpoint, lr, cls=cls)) is fires


def test_bl301_lora_and_from_scratch_ranges():
    lora = "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))"
    assert rate("meta-llama/Llama-2-7b-hf", "2e-4", cls="AutoModelForCausalLM", extra=lora) == []
    assert rate("meta-llama/Llama-2-7b-hf", "5e-3", cls="AutoModelForCausalLM", extra=lora) == []  # peft's own small-model recipes
    [finding] = rate("meta-llama/Llama-2-7b-hf", "5e-2", cls="AutoModelForCausalLM", extra=lora)
    assert "LoRA/QLoRA adapters" in finding.message
    assert rate("bert-base-uncased", "1e-3", cls="BertForMaskedLM", load="from_config") == []
    [finding] = rate("bert-base-uncased", "1e-2", cls="BertForMaskedLM", load="from_config")
    assert "training from scratch" in finding.message
    assert rate("bert-base-uncased", "1e-2", cls="AutoModelForMaskedLM", load="from_config") == []  # family not shown: silent
    scratch = 'from transformers import BertConfig, BertForMaskedLM, TrainingArguments\nmodel = BertForMaskedLM(BertConfig())\nargs = TrainingArguments("o", learning_rate=6e-4)\n'
    assert only("BL301", scratch) == []


@pytest.mark.parametrize(
    ("checkpoint", "cls"),
    [
        ("my-org/private-checkpoint", "AutoModelForSequenceClassification"),  # unknown family: no BERT range borrowed
        ("facebook/wav2vec2-base", "Wav2Vec2ForCTC"),
        ("openai/whisper-small", "WhisperForConditionalGeneration"),
        ("google/vit-base-patch16-224", "ViTForImageClassification"),
    ],
)
def test_bl301_unknown_family_is_silent(checkpoint, cls):
    assert rate(checkpoint, "3e-3", cls=cls) == []


def test_bl301_silent_when_the_run_loads_models_of_several_families():
    extra = 'from transformers import ViTModel\nvision = ViTModel.from_pretrained("google/vit-base-patch16-224")'
    assert rate("bert-base-uncased", "1e-3", extra=extra) == []
    assert rate("bert-base-uncased", "1e-3", extra=extra.replace("ViTModel", "BertModel").replace("google/vit-base-patch16-224", "bert-base-cased"))


def test_bl301_from_scratch_and_configured_default_are_warnings_at_most(tmp_path):
    [finding] = rate("bert-base-uncased", "1e-1", cls="BertForMaskedLM", load="from_config")
    assert finding.severity == "warning" and "training from scratch" in finding.message
    (tmp_path / "bertlint.toml").write_text('transformers-version = "5.23"\n[learning-rate]\ndefault = [1e-5, 1e-4]\n')
    source = 'import sys, torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained(sys.argv[1])\nopt = torch.optim.AdamW(model.parameters(), lr=1e-1)\n'
    settings = load_settings(tmp_path, all_codes(), config_file=tmp_path / "bertlint.toml")
    path = tmp_path / "train.py"
    [finding] = [f for f in engine.lint_source(source, path, settings, target=target_version(settings, path, source)) if f.code == "BL301"]
    assert finding.severity == "warning"


@pytest.mark.parametrize("config", ["IA3Config(task_type=\"SEQ_CLS\")", "LoHaConfig(r=8)", "RoadConfig()", "VeraConfig(r=256)"])
def test_bl301_silent_for_peft_methods_other_than_lora(config):
    extra = f"from peft import IA3Config, LoHaConfig, RoadConfig, VeraConfig, get_peft_model\nmodel = get_peft_model(model, {config})"
    assert rate("roberta-base", "3e-3", extra=extra) == []
    adapter = "from peft import PeftModel\nmodel = PeftModel.from_pretrained(model, 'adapter-dir', is_trainable=True)"
    assert rate("roberta-base", "3e-3", extra=adapter) == []  # the saved adapter's method is not in the file


def test_bl301_silent_for_soft_prompt_peft_methods():
    # prompt/prefix tuning trains a few virtual-token embeddings at rates like 3e-2: no published range covers it
    for config in ("PromptTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=8)", "PrefixTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=20)"):
        extra = f"from peft import PrefixTuningConfig, PromptTuningConfig, TaskType, get_peft_model\nmodel = get_peft_model(model, {config})"
        assert rate("bigscience/bloomz-560m", "3e-2", cls="AutoModelForCausalLM", extra=extra) == []
    # LoRA at the same rate still fires
    lora = "from peft import LoraConfig, get_peft_model\nmodel = get_peft_model(model, LoraConfig(r=8))"
    assert rate("bigscience/bloomz-560m", "3e-2", cls="AutoModelForCausalLM", extra=lora)


def test_bl301_silent_for_preference_optimization():
    # DPO recipes run at 5e-7 to 1e-6 against a reference model: no fine-tuning range covers them
    source = """\
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import DPOConfig, DPOTrainer
    model = AutoModelForCausalLM.from_pretrained("gpt2")
    tok = AutoTokenizer.from_pretrained("gpt2")
    args = DPOConfig(output_dir="o", learning_rate=5e-7, beta=0.1)
    DPOTrainer(model=model, args=args, train_dataset=ds, processing_class=tok).train()
    """
    assert only("BL301", source) == []
    # the same rate in a supervised run still fires
    assert only("BL301", source.replace("DPOConfig", "SFTConfig").replace("DPOTrainer", "SFTTrainer").replace(", beta=0.1", ""))


def test_bl301_t5_with_adafactor():
    source = """\
    from transformers import T5ForConditionalGeneration
    from transformers.optimization import Adafactor
    model = T5ForConditionalGeneration.from_pretrained("t5-base")
    good = Adafactor(model.parameters(), lr=1e-3, scale_parameter=False, relative_step=False)
    bad = Adafactor(model.parameters(), lr=1e-2, scale_parameter=False, relative_step=False)
    relative = Adafactor(model.parameters(), lr=1e-2)
    """
    [finding] = only("BL301", source)
    assert finding.line == 5 and "T5/Flan-T5 with Adafactor" in finding.message and "0.0001–0.003" in finding.message


@pytest.mark.parametrize(
    "setup",
    [
        'import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", type=float, default=1e-3)\nargs = p.parse_args()\nLR = args.lr',
        'CFG = {"optim": {"lr": 1e-3}, "epochs": 3}\nLR = CFG["optim"]["lr"]',
        "BASE = 1e-4\nLR = BASE * 10",
    ],
    ids=["argparse-default", "config-dict", "constant-arithmetic"],
)
def test_bl301_follows_values_to_where_the_rate_takes_effect(setup):
    source = f"""\
    from transformers import AutoModelForSequenceClassification, TrainingArguments
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    {textwrap.indent(setup, "    ").strip()}
    args = TrainingArguments("out", learning_rate=LR)
    """
    [finding] = only("BL301", source)
    assert finding.source_line.strip().startswith("args = TrainingArguments") and finding.column == column_of(finding, "learning_rate=LR")


def test_bl301_keras_optimizers_schedules_and_create_optimizer():
    source = """\
    # bertlint-test: transformers-version=4.40
    import tensorflow as tf
    from transformers import TFAutoModelForSequenceClassification, create_optimizer, AdamWeightDecay
    model = TFAutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    a = tf.keras.optimizers.Adam(1e-2)
    s = tf.keras.optimizers.schedules.PolynomialDecay(initial_learning_rate=5e-3, decay_steps=10, end_learning_rate=1e-9)
    b = tf.keras.optimizers.Adam(learning_rate=s)
    c, _ = create_optimizer(init_lr=1e-6, num_train_steps=100, num_warmup_steps=10)
    d = AdamWeightDecay(learning_rate=3e-4)
    e = tf.keras.optimizers.schedules.ExponentialDecay(3e-5, decay_steps=100, decay_rate=0.9)
    f = tf.keras.optimizers.Adam()
    """
    findings = only("BL301", source)
    assert [(f.line, f.source_line[f.column - 1 :].split("=")[0].split(",")[0].split(")")[0]) for f in findings] == [
        (5, "1e-2"), (6, "initial_learning_rate"), (8, "init_lr"), (9, "learning_rate"),
    ]


@pytest.mark.parametrize(
    "source",
    [
        'import os, torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nopt = torch.optim.AdamW(model.parameters(), lr=float(os.environ["LR"]))\n',
        'import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nopt = torch.optim.AdamW(model.parameters())\n'
        'for group in opt.param_groups:\n    group["lr"] = 2e-5\n',  # the default rate, replaced before training
        "import torch\nfrom torch import nn\nfrom transformers import AutoTokenizer\nmodel = nn.Sequential(nn.Linear(4, 2))\nopt = torch.optim.Adam(model.parameters(), lr=1e-1)\n",
        "import tensorflow as tf\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(2)])\nmodel.compile(optimizer=tf.keras.optimizers.Adam(learning_rate=1e-1))\n",
        'import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nopt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)\n',
        'import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nhead = torch.nn.Linear(768, 2)\nopt = torch.optim.AdamW(head.parameters(), lr=1e-2)\n',
        'import torch\nfrom transformers import AutoModel, Trainer, TrainingArguments\nmodel = AutoModel.from_pretrained("bert-base-uncased")\n'
        'opt = torch.optim.AdamW(model.parameters(), lr=2e-5)\nargs = TrainingArguments("o", learning_rate=1e-2)\nTrainer(model=model, args=args, optimizers=(opt, None))\n',
        'from transformers import AutoModel, TrainingArguments\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nargs = TrainingArguments("o", learning_rate=1e-2, optim="sgd")\n',
    ],
    ids=["unresolved", "default-rate-set-later", "nn-sequential", "small-keras", "sgd", "other-module", "trainer-optimizers", "optim-sgd"],
)
def test_bl301_silent(source):
    assert only("BL301", source) == []


def test_bl301_ranges_come_from_the_configuration(tmp_path):
    (tmp_path / "bertlint.toml").write_text('transformers-version = "5.23"\n[learning-rate]\nbert-base = [1e-5, 1e-3]\n')
    source = 'import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained("bert-base-uncased")\nopt = torch.optim.AdamW(model.parameters(), lr=5e-4)\n'
    path = tmp_path / "train.py"
    settings = load_settings(tmp_path, all_codes(), config_file=tmp_path / "bertlint.toml")
    target = target_version(settings, path, source)
    assert [f.code for f in engine.lint_source(source, path, settings, target=target)] == []
    [finding] = engine.lint_source(source.replace("5e-4", "5e-3"), path, settings, target=target)
    assert "from [tool.bertlint] learning-rate" in finding.message


# --- BL401 --------------------------------------------------------------------------------

TRAINER_RUN = """\
from datasets import Dataset
from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
"""


def test_bl401_constant_arithmetic_on_the_trainer_with_counts_and_ratio():
    source = TRAINER_RUN + textwrap.dedent(
        """\
        n = 1000
        labels = [1] * int(n * 0.8) + [0] * (n - int(n * 0.8))
        data = Dataset.from_dict({"text": ["x"] * n, "label": labels})
        trainer = Trainer(model=model, args=TrainingArguments("out"), train_dataset=data)
        trainer.train()
        """
    )
    [finding] = only("BL401", source)
    assert finding.line == 7 and finding.column == column_of(finding, "Trainer(")
    assert "1: 800" in finding.message and "0: 200" in finding.message and "4.0:1" in finding.message and "1000 examples" in finding.message


def test_bl401_literal_list_in_a_dict_column_and_make_classification():
    literal = TRAINER_RUN + 'data = Dataset.from_dict({"text": ["x"] * 60, "label": [0] * 50 + [1] * 10})\nTrainer(model=model, train_dataset=data).train()\n'
    assert "5.0:1" in only("BL401", literal)[0].message
    keras = """\
    import tensorflow as tf
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=1000, weights=[0.9], random_state=0)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.fit(X, y, epochs=3)
    """
    [finding] = only("BL401", keras)
    assert finding.line == 5 and "0: 900" in finding.message and "1: 100" in finding.message


def test_bl401_many_classes_list_the_extremes_and_say_what_is_seldom_predicted(tmp_path):
    # 20 intents, 40 examples each but two with 5: the majority holds 5% of the data, so nothing "learns to predict" it
    rows = "text,label\n" + "".join(f"t,i{k}\n" * (5 if k >= 18 else 40) for k in range(20))
    (tmp_path / "intents.csv").write_text(rows)
    script = TRAINER_RUN + 'import pandas as pd\ndf = pd.read_csv("intents.csv")\nTrainer(model=model, train_dataset=Dataset.from_pandas(df)).train()\n'
    [finding] = only("BL401", script, tmp_path / "train.py")
    assert "8.0:1" in finding.message and "20 classes" in finding.message and "'i19': 5" in finding.message
    assert "seldom predicted" in finding.message and "learns to predict" not in finding.message and "'i5'" not in finding.message


def test_bl401_a_weight_of_none_weights_nothing():
    base = TRAINER_RUN + 'from torch import nn\nlabels = [0] * 90 + [1] * 10\nW = None\nloss_fn = nn.CrossEntropyLoss(weight=WEIGHT)\nTrainer(model=model, train_dataset=Dataset.from_dict({"label": labels})).train()\n'
    assert len(only("BL401", base.replace("WEIGHT", "None"))) == 1
    assert len(only("BL401", base.replace("WEIGHT", "W"))) == 1
    assert only("BL401", base.replace("WEIGHT", "torch_weights")) == []  # a value that cannot be told counts as weighting
    fit = "import tensorflow as tf\nlabels = [0] * 90 + [1] * 10\nm = tf.keras.Sequential([])\nm.fit([[0.0]] * 100, labels, class_weight=CW)\n"
    assert len(only("BL401", fit.replace("CW", "None"))) == 1 and only("BL401", fit.replace("CW", "{0: 1.0, 1: 9.0}")) == []


def test_bl401_reads_local_csv_and_jsonl_files(tmp_path):
    rows = "text,queue\n" + "".join(f"t{i},billing\n" for i in range(90)) + "".join(f"t{i},outage\n" for i in range(10))
    (tmp_path / "tickets.csv").write_text(rows)
    (tmp_path / "reviews.jsonl").write_text("".join(json.dumps({"review": "r", "stars": s}) + "\n" for s in [1] * 80 + [0] * 20))
    csv_script = TRAINER_RUN + textwrap.dedent(
        """\
        import pandas as pd
        df = pd.read_csv("tickets.csv")
        df["label"] = df["queue"].astype("category").cat.codes
        Trainer(model=model, train_dataset=Dataset.from_pandas(df)).train()
        """
    )
    [finding] = only("BL401", csv_script, tmp_path / "train.py")
    assert "`tickets.csv` column `queue`" in finding.message and "'billing': 90" in finding.message and "9.0:1" in finding.message
    jsonl_script = TRAINER_RUN + textwrap.dedent(
        """\
        from datasets import load_dataset
        ds = load_dataset("json", data_files="reviews.jsonl", split="train").rename_column("stars", "labels")
        Trainer(model=model, train_dataset=ds).train()
        """
    )
    assert "`reviews.jsonl` column `stars`" in only("BL401", jsonl_script, tmp_path / "train.py")[0].message
    (tmp_path / "tickets.csv").write_text("text,queue\n" + "".join(f"t{i},{'ab'[i % 2]}\n" for i in range(100)))
    assert only("BL401", csv_script, tmp_path / "train.py") == []


@pytest.mark.parametrize(
    "mitigation",
    [
        "import torch\nloss_fn = torch.nn.CrossEntropyLoss(weight=torch.tensor([4.0, 1.0]))",
        "import torch\nloss_fn = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(4.0))",
        "from sklearn.utils.class_weight import compute_class_weight\nw = compute_class_weight('balanced', classes=[0, 1], y=labels)",
        "from torch.utils.data import WeightedRandomSampler\ns = WeightedRandomSampler([1.0] * 100, 100)",
        "from imblearn.over_sampling import RandomOverSampler\nbalanced = RandomOverSampler().fit_resample([[0]] * 100, labels)",
        "def focal_loss(logits, target):\n    return logits.mean()\nx = focal_loss(1, 2)",
        "class WeightedTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n"
        "        return model(**inputs).loss * class_weights[inputs['labels']].mean()",
    ],
    ids=["ce-weight", "pos-weight", "compute-class-weight", "sampler", "imblearn", "focal", "compute-loss"],
)
def test_bl401_any_mitigation_silences_it(mitigation):
    source = TRAINER_RUN + "labels = [1] * 80 + [0] * 20\n" + mitigation + '\nTrainer(model=model, train_dataset=Dataset.from_dict({"label": labels})).train()\n'
    assert only("BL401", source) == []
    assert len(only("BL401", source.replace(mitigation, "pass"))) == 1


def test_bl401_an_imblearn_import_alone_balances_nothing():
    # the resampler imported but its call commented out: nothing rebalances the labels
    source = TRAINER_RUN + "from imblearn.over_sampling import SMOTE\nlabels = [1] * 80 + [0] * 20\n# labels = SMOTE().fit_resample(x, labels)\n"
    assert len(only("BL401", source + 'Trainer(model=model, train_dataset=Dataset.from_dict({"label": labels})).train()\n')) == 1


def test_bl401_keras_class_weight_silences_it():
    source = "import tensorflow as tf\ny = [0] * 90 + [1] * 10\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(1)])\nmodel.fit(X, y, class_weight={0: 1.0, 1: 9.0})\n"
    assert only("BL401", source) == []
    assert len(only("BL401", source.replace(", class_weight={0: 1.0, 1: 9.0}", ""))) == 1


@pytest.mark.parametrize(
    ("labels", "model_args"),
    [
        ("[1] * 30 + [0] * 10", "num_labels=2"),
        ("[1] * 55 + [0] * 45", "num_labels=2"),
        ("[1.5] * 90 + [4.0] * 10", "num_labels=1"),
        ("[1] * 90 + [0] * 10", 'num_labels=3, problem_type="regression"'),
        ("[1] * 90 + [0] * 10", "num_labels=2) if False else AutoModelForCausalLM.from_pretrained('gpt2'"),
        ("load_labels()", "num_labels=2"),
    ],
    ids=["under-50", "balanced", "regression", "problem-type", "language-model", "unknown"],
)
def test_bl401_silent(labels, model_args):
    source = f"""\
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, Trainer
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", {model_args})
    labels = {labels}
    Trainer(model=model, train_dataset=Dataset.from_dict({{"label": labels}})).train()
    """
    assert only("BL401", source) == []


def test_bl401_threshold_is_configurable():
    source = TRAINER_RUN + "labels = [1] * 70 + [0] * 30\nTrainer(model=model, train_dataset=Dataset.from_dict({'label': labels})).train()\n"
    assert only("BL401", source) == []
    assert "2.3:1" in only("BL401", source, imbalance_ratio=2.0)[0].message


# --- BL501 --------------------------------------------------------------------------------


def large(args: str = "", load: str = "", model: str = "roberta-large", header: str = "") -> list:
    source = "\n".join([
        header,
        "import torch",
        "from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments",
        f'model = AutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2{load})',
        f'args = TrainingArguments("out", per_device_train_batch_size=4{args})',
        "Trainer(model=model, args=args).train()\n",
    ])  # fmt: skip
    return only("BL501", source)


def test_bl501_fires_once_on_the_training_arguments():
    [finding] = large()
    assert finding.line == 5 and finding.column == column_of(finding, "TrainingArguments(")
    assert "`roberta-large` has 355M parameters" in finding.message and "fp32" in finding.message


@pytest.mark.parametrize(
    ("args", "load", "model", "header"),
    [
        (", fp16=True", "", "roberta-large", ""),
        (", bf16=True", "", "roberta-large", ""),
        ("", ", torch_dtype=torch.bfloat16", "roberta-large", ""),
        ("", ", load_in_8bit=True", "roberta-large", ""),
        ("", "", "roberta-base", ""),
        (", fp16=a.fp16", "", "roberta-large", 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--fp16", action="store_true")\na = p.parse_args()'),
        ("", "", "microsoft/deberta-v3-large", ""),
    ],
    ids=["fp16", "bf16", "bf16-load", "8bit", "small", "fp16-flag", "stored-fp16-on-5x"],
)
def test_bl501_silent(args, load, model, header):
    assert large(args, load, model, header) == []


def test_bl501_stored_dtype_matters_only_on_5x():
    assert large(model="microsoft/deberta-v3-large", header="# bertlint-test: transformers-version=4.46")


@pytest.mark.parametrize(
    "source",
    [
        'from transformers import AutoModel\nimport torch\nmodel = AutoModel.from_pretrained("roberta-large").eval()\nwith torch.no_grad():\n    out = model(**batch)\n',
        'from peft import LoraConfig, get_peft_model\nfrom transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n'
        'model = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2-large"), LoraConfig())\nTrainer(model=model, args=TrainingArguments("o")).train()\n',
        'from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments\n'
        'targs, = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n'
        'model = AutoModelForCausalLM.from_pretrained("gpt2-large")\nTrainer(model=model, args=targs).train()\n',
        'import torch\nfrom accelerate import Accelerator\nfrom transformers import AutoModelForCausalLM\naccelerator = Accelerator()\n'
        'model = AutoModelForCausalLM.from_pretrained("gpt2-large")\nloss = model(**batch).loss\naccelerator.backward(loss)\n',
        'import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("gpt2-large")\n'
        'with torch.autocast("cuda", dtype=torch.bfloat16):\n    loss = model(**batch).loss\nloss.backward()\n',
    ],
    ids=["inference", "peft", "hf-argument-parser", "accelerate-launch", "autocast"],
)
def test_bl501_silent_when_precision_is_elsewhere_or_not_training(source):
    assert only("BL501", source) == []


def test_bl501_hand_written_loop_sits_on_the_model_load():
    source = 'import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained("gpt2-large").cuda()\nloss = model(**batch).loss\nloss.backward()\n'
    [finding] = only("BL501", source)
    assert finding.line == 3 and finding.column == column_of(finding, "AutoModelForCausalLM.from_pretrained")


def test_bl501_t5_family_help_offers_bf16_only():
    [t5] = large(model="t5-large")
    assert "than bf16 mixed precision" in t5.message and "not fp16" in t5.help, "fp16 overflows T5's activations (BL306)"
    [roberta] = large()
    assert "bf16/fp16" in roberta.message and "fp16=True" in roberta.help


def lightning(model: str = "roberta-large", trainer: str = "", hook: str = "training_step", path: Path | None = None) -> list:
    source = "\n".join([
        "import pytorch_lightning as pl",
        "from transformers import AutoModelForSeq2SeqLM",
        "class Module(pl.LightningModule):",
        "    def __init__(self):",
        "        super().__init__()",
        f'        self.model = AutoModelForSeq2SeqLM.from_pretrained("{model}")',
        "    def training_step(self, batch, batch_idx):",
        "        return self.model(**batch).loss",
        f"    def {hook}(self, outputs):",
        "        pass",
        f"pl.Trainer(max_epochs=1{trainer}).fit(Module(), loader)\n",
    ])  # fmt: skip
    return only("BL501", source, path)


@pytest.mark.parametrize("hook", ["training_epoch_end", "validation_epoch_end"])
def test_bl501_no_step_where_lightning_refuses_the_fit(hook, tmp_path):
    """Lightning 2.0 removed the epoch-end hooks: `fit` of a module that defines one raises in
    `_verify_loop_configurations`, before any step, so nothing trains in fp32; on 1.9 it trains."""
    assert lightning("roberta-large", hook=hook) == []
    (tmp_path / "requirements.txt").write_text("pytorch-lightning==1.9.5\n")
    [finding] = lightning("roberta-large", hook=hook, path=tmp_path / "train.py")
    assert finding.line == 11
    assert [f.line for f in lightning("roberta-large", hook="on_train_epoch_end")] == [11], "the 2.x hook: it trains"


def test_bl501_lightning_help_names_lightnings_precision():
    [finding] = lightning("t5-large")
    assert finding.line == 11 and "Trainer(precision=\"bf16-mixed\")" in finding.help and "fp16=True" not in finding.help and "not 16" in finding.help
    assert lightning("t5-large", ', precision="bf16-mixed"') == [] and lightning("t5-large", ", precision=64") == []
    assert lightning("t5-large", ", plugins=[plugin]") == [], "a precision plugin decides"
    [plain] = lightning("roberta-large")
    assert "bf16/fp16" in plain.message and "precision=\"16-mixed\"" in plain.help and "fp16=True" not in plain.help


def test_bl501_deberta_large_is_in_the_table():
    [finding] = large(model="microsoft/deberta-large", header="# bertlint-test: transformers-version=4.46")
    assert "405M" in finding.message
    assert large(model="microsoft/deberta-large") == [], "its stored dtype is not known: on 5.x the load's dtype is unknown"


def keras(model: str = "bert-large-uncased", header: str = "# bertlint-test: transformers-version=4.40", policy: str = "") -> list:
    source = "\n".join([
        header,
        "import tensorflow as tf",
        "from transformers import TFAutoModelForSequenceClassification",
        policy,
        f'model = TFAutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2)',
        'model.compile(optimizer=tf.keras.optimizers.Adam(2e-5), loss="sparse_categorical_crossentropy")',
        "model.fit(dataset, epochs=3)\n",
    ])  # fmt: skip
    return only("BL501", source)


def test_bl501_keras_help_names_the_keras_policy():
    [finding] = keras()
    assert finding.line == 7 and 'set_global_policy("mixed_float16")' in finding.help and "TrainingArguments" not in finding.help
    [t5] = keras("t5-large")
    assert 'set_global_policy("mixed_bfloat16")' in t5.help and "not mixed_float16" in t5.help
    assert keras(policy='tf.keras.mixed_precision.set_global_policy("mixed_float16")') == []


def test_bl501_silent_on_a_tf_class_the_target_removed():
    assert keras(header="") == [], "on transformers 5.x the TF class is gone: the import raises (BL606), nothing trains"
    assert keras(header="# bertlint-test: transformers-version=5.0") == []


def test_bl501_whole_word_masking_bert_large_is_in_the_table():
    for name in ("bert-large-uncased-whole-word-masking-finetuned-squad", "bert-large-cased-whole-word-masking"):
        [finding] = large(model=name)
        assert name in finding.message and ("335M" in finding.message or "334M" in finding.message)


def test_bl501_bl502_silent_on_the_encoder_half_of_an_encoder_decoder_checkpoint():
    source = """\
import torch
from data import loader
from transformers import T5EncoderModel
model = T5EncoderModel.from_pretrained("t5-3b").cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
for batch in loader:
    model(**batch).last_hidden_state.mean().backward()
    optimizer.step()
    optimizer.zero_grad()
"""
    assert only("BL501", source) == [] and only("BL502", source) == [], "the table's counts are the whole checkpoint's, not the encoder's"
    assert only("BL501", source.replace("T5EncoderModel", "T5ForConditionalGeneration")) != []


# --- BL502 --------------------------------------------------------------------------------


def memory(batch: int = 32, length: int = 512, args: str = "", load: str = "", model: str = "bert-large-uncased", **opts) -> list:
    source = f"""\
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments
    tok = AutoTokenizer.from_pretrained("{model}")
    model = AutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2{load})
    def encode(b):
        return tok(b["text"], padding="max_length", truncation=True, max_length={length})
    args = TrainingArguments("out", per_device_train_batch_size={batch}{args})
    Trainer(model=model, args=args).train()
    """
    return only("BL502", source, **opts)


def test_bl502_message_gives_estimate_budget_and_a_batch_that_fits():
    [finding] = memory(args=", bf16=True", gpu_memory="16")
    assert finding.line == 6 and finding.column == column_of(finding, "TrainingArguments(")
    message = finding.message
    assert "batch 32 × 512 tokens" in message and "needs at least 21.4 GiB" in message and "over the 16 GiB budget" in message
    for part in ("weights 1.9 GiB", "gradients 1.2 GiB", "AdamW states 2.5 GiB", "activations 15.8 GiB", "CUDA context 1.3 GiB"):
        assert part in message
    assert "per-device batch 16 with `gradient_accumulation_steps=2` keeps the effective batch of 32" in message


def test_bl502_fp32_is_costlier_and_the_budget_is_configurable():
    [finding] = memory()
    assert "29.8 GiB" in finding.message
    assert memory(gpu_memory="40") == []
    assert "over the 24 GiB budget" in memory(gpu_memory="24")[0].message


def test_bl502_bf16_shows_an_ampere_class_card_unless_the_budget_is_set():
    assert memory(args=", bf16=True") == []  # 21.4 GiB: under the 24 GiB of the smallest common Ampere training card
    assert "over the 24 GiB budget" in memory(args=", bf16=True", batch=48)[0].message
    assert "over the 16 GiB budget" in memory(args=", bf16=True", gpu_memory="16")[0].message


@pytest.mark.parametrize(
    ("batch", "length", "args", "load"),
    [
        (8, 512, ", bf16=True", ""),
        (32, 512, ", bf16=True, gradient_accumulation_steps=4", ""),
        (32, 512, ", bf16=True, gradient_checkpointing=True", ""),
        (32, 512, ", bf16=True", ", load_in_4bit=True"),
        ("int(os.environ['BS'])", 512, ", bf16=True", ""),
        (32, "int(os.environ['LEN'])", ", bf16=True", ""),
    ],
    ids=["fits", "accumulation", "checkpointing", "quantized", "unknown-batch", "unknown-length"],
)
def test_bl502_silent(batch, length, args, load):
    assert memory(batch, length, args, load) == []


def test_bl502_dynamic_padding_max_length_is_only_a_cap():
    """`truncation=True, max_length=512` with batches padded to their longest: 512 caps a batch, the data decide how long
    it gets, so the activations are not charged at 512; weights, gradients and states alone still count."""
    source = """\
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments
    tok = AutoTokenizer.from_pretrained("{model}")
    model = AutoModelForSequenceClassification.from_pretrained("{model}", num_labels=2)
    def encode(b):
        return tok(b["text"], truncation=True, max_length=512)
    args = TrainingArguments("out", per_device_train_batch_size=32)
    Trainer(model=model, args=args).train()
    """
    assert only("BL502", source.format(model="bert-large-uncased")) == []
    [llama] = only("BL502", source.format(model="meta-llama/Llama-2-7b-hf"), transformers_version="4.46")
    assert "batch 32 × any number of tokens" in llama.message, "the bound of weights, gradients and AdamW states alone"


def test_bl502_eager_attention_adds_the_quadratic_term():
    assert memory(batch=16, model="roberta-large", args=", bf16=True") == []
    [finding] = memory(batch=16, model="roberta-large", args=", bf16=True", load=', attn_implementation="eager"')
    assert "activations 18.4 GiB" in finding.message


def test_bl502_encoder_decoder_runs_its_decoder_at_the_label_length():
    source = T5_SUMMARIES.format(batch=24)
    # decoder layers and logits at 64 tokens, not 512: about 12.6 GiB, under the budget (all at 512 would be 21.5)
    assert only("BL502", source) == []
    [finding] = only("BL502", T5_SUMMARIES.format(batch=48))
    assert "batch 48 × 512 tokens (64 label tokens)" in finding.message
    with_target_tokenizer = source.replace(
        '    enc["labels"] = tok(text_target=b["summary"], max_length=64, padding="max_length", truncation=True)["input_ids"]\n',
        '    with tok.as_target_tokenizer():\n        labels = tok(b["summary"], max_length=64, padding="max_length", truncation=True)\n',
    )
    assert with_target_tokenizer != source and only("BL502", with_target_tokenizer) == []
    unknown_target = source.replace("max_length=64", "max_length=int(os.environ['TGT'])")
    assert only("BL502", unknown_target) == []


def test_bl502_hand_written_loop_and_manual_accumulation():
    loop = """\
    # bertlint-test: gpu-memory=80 transformers-version=4.46
    import torch
    from torch.utils.data import DataLoader
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok = AutoTokenizer.from_pretrained("meta-llama/Llama-2-7b-hf")
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
    enc = tok(texts, truncation=True, max_length=1024)
    loader = DataLoader(data, batch_size=4, shuffle=True)
    for step, batch in enumerate(loader):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
    """
    [finding] = only("BL502", loop)
    assert finding.line == 6 and "gradients 25.1 GiB + CUDA context" in finding.message  # no length known: the gradients outweigh the activations
    assert "even batch 1 does not fit (what would: PEFT/LoRA" in finding.message, "weights, gradients and AdamW states dominate"
    assert "gradient checkpointing" not in finding.message and "mixed precision" not in finding.message  # they shrink activations only
    accumulated = loop.replace("        optimizer.step()", "        if (step + 1) % 8 == 0:\n            optimizer.step()")
    assert only("BL502", accumulated) == []
    on_5x = loop.replace("transformers-version=4.46", "transformers-version=5.2")
    assert only("BL502", on_5x) == [], "5.x loads Llama-2 in its stored fp16: 8 bytes per parameter fit in 80 GiB"


def test_bl401_reads_the_separator_a_read_names_and_colab_working_directory_paths(tmp_path):
    # a one-character sep= (positional or keyword) or delimiter= splits the rows as pandas does; anything else is unknown
    rows = "".join(f"{k}\tham\n" for k in range(90)) + "".join(f"{k}\tspam\n" for k in range(10))
    (tmp_path / "sms.txt").write_text("id\tlabel\n" + rows)
    (tmp_path / "sms.psv").write_text("id|label\n" + rows.replace("\t", "|"))
    fit = "import pandas as pd\nimport tensorflow as tf\ndf = READ\ny = df['label']\nm = tf.keras.Sequential([])\nm.fit(df[['id']], y)\n"
    for read, fires in [('pd.read_csv("sms.txt", sep="\\t")', True), ('pd.read_csv("sms.txt", "\\t")', True), ('pd.read_table("sms.txt")', True),
                        ('pd.read_csv("sms.psv", delimiter="|")', True), ('pd.read_csv("sms.txt")', False),
                        ('pd.read_csv("sms.txt", sep=None, engine="python")', False), ('pd.read_csv("sms.txt", sep=r"\\s+")', False)]:
        assert len(only("BL401", fit.replace("READ", read), tmp_path / "train.py")) == fires, read
    # Colab's working directory is /content: `/content/sms.txt` is the file beside the notebook, a Drive mount is not
    (tmp_path / "drive").mkdir()
    (tmp_path / "drive" / "sms.txt").write_text("id\tlabel\n" + rows)
    for read, fires in [('pd.read_csv("/content/sms.txt", sep="\\t")', True), ('pd.read_csv("/content/drive/sms.txt", sep="\\t")', False),
                        ('pd.read_csv("/content/../sms.txt", sep="\\t")', False), ('pd.read_csv("/contents/sms.txt", sep="\\t")', False)]:
        assert len(only("BL401", fit.replace("READ", read), tmp_path / "train.py")) == fires, read
    # the label column named through a constant
    named = fit.replace("READ", 'pd.read_csv("sms.txt", sep="\\t")').replace("y = df['label']", "col = 'label'\ny = df[col]")
    (tmp_path / "sms.txt").write_text("id\tkind\n" + rows)
    assert "column `kind`" in only("BL401", named.replace("'label'", "'kind'"), tmp_path / "train.py")[0].message
