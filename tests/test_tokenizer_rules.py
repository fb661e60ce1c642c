"""Tokenizer rules BL102-BL106, BL607-BL609: version behaviour, near misses, and fixes applied through the engine."""

from __future__ import annotations

import json
import textwrap

import pytest

from bertlint.fixer import apply_edits, parses
from conftest import ROOT, codes, lint_text

HEADER = """\
from transformers import AutoModelForSequenceClassification, AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
"""


def only(code: str, source: str, **opts) -> list:
    return [f for f in lint_text(source, **opts) if f.code == code]


def fixed(code: str, source: str, **opts) -> str:
    """Apply `code`'s fixes the way `--fix --unsafe-fixes` does; the result parses and no longer raises `code`."""
    source = textwrap.dedent(source)
    findings = only(code, source, **opts)
    assert findings and all(f.fix for f in findings)
    text, applied = apply_edits(source, findings, {"safe", "unsafe"})
    assert len(applied) == len(findings)
    assert parses(text)
    assert code not in codes(lint_text(text, **opts))
    return text


# --- BL102 --------------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["True", '"longest"'])
def test_bl102_fires_for_dynamic_padding_with_a_length(padding):
    [finding] = only("BL102", HEADER + f'enc = tok(["a", "b c"], padding={padding}, max_length=64)\n')
    assert "max_length=64" in finding.message
    assert (finding.line, finding.column) == (3, finding.source_line.index("max_length") + 1)


@pytest.mark.parametrize(
    "call",
    [
        'tok(["a", "b"], padding=True, truncation=True, max_length=64)',
        'tok(["a", "b"], padding=True, truncation=False, max_length=64)',
        'tok(["a", "b"], padding="max_length", truncation=True, max_length=64)',
        'tok(["a", "b"], padding=True)',
        'tok(["a", "b"], padding=True, max_length=64, **extra)',  # a mapping of unknown keys: may hold `truncation`
    ],
)
def test_bl102_silent(call):
    assert only("BL102", HEADER + "import json\nextra = json.load(open('x.json'))\n" + f"enc = {call}\n") == []


def test_bl102_fix_adds_truncation():
    text = fixed("BL102", HEADER + 'enc = tok(\n    ["a", "b c"],\n    padding=True,\n    max_length=64,\n)\n')
    assert "max_length=64, truncation=True," in text


# --- BL105 --------------------------------------------------------------------------------


def test_bl105_fix_adds_truncation():
    text = fixed("BL105", HEADER + 'enc = tok(texts, padding="max_length", max_length=64)\n')
    assert 'padding="max_length", max_length=64, truncation=True)' in text


@pytest.mark.parametrize("version", ["4.40", "4.51", "4.52", "5.0"])
def test_bl105_pad_to_max_length_alone_is_bl101s_business(version):
    # the implicit truncation of `max_length` is decided while `padding` is still False: it truncates in every version
    source = HEADER + 'enc = tok(texts, pad_to_max_length=True, max_length=64)\n'
    assert only("BL105", source, transformers_version=version) == []


@pytest.mark.parametrize("truncation", ["True", '"only_second"', '"longest_first"'])
def test_bl105_silent_with_a_truncation_strategy(truncation):
    assert only("BL105", HEADER + f'enc = tok("q", "c", padding="max_length", truncation={truncation}, max_length=64)\n') == []


@pytest.mark.parametrize(
    ("texts", "fires"),
    [
        ('[""] * batch_size', False),  # empty prompts: never longer than the special tokens
        ('"A short sentence."', False),
        ('["one", "two words"]', False),
        ('"a question", "its context"', False),  # a pair of short texts
        ('["" for _ in range(n)]', False),
        ('"A literal sentence far longer than the eight tokens it is padded to."', True),
        ('"short", context', True),  # the pair's second text is unknown
        ('[""] * n + texts', True),
    ],
)
def test_bl105_silent_when_the_texts_cannot_exceed_max_length(texts, fires):
    source = HEADER + f'enc = tok({texts}, padding="max_length", max_length={64 if not fires or "eight" not in texts else 8})\n'
    assert bool(only("BL105", source)) is fires


def test_bl105_silent_without_padding():
    assert only("BL105", HEADER + 'enc = tok("a b", max_length=64)\n') == []


# --- BL104 --------------------------------------------------------------------------------

MODEL = 'model = AutoModelForSequenceClassification.from_pretrained("{}")\n'


@pytest.mark.parametrize(("checkpoint", "length", "fires"), [
    ("bert-base-uncased", 513, True),
    ("bert-base-uncased", 512, False),
    ("roberta-base", 513, True),  # 514 rows, 512 usable
    ("roberta-base", 512, False),
    ("facebook/bart-base", 1025, True),
    ("t5-small", 4096, False),  # relative positions
    ("microsoft/deberta-v3-base", 2048, False),  # relative, no hard limit
    ("meta-llama/Llama-2-7b-hf", 16384, False),  # rotary: degrades, never crashes
    ("some-org/unknown-model", 100000, False),
])  # fmt: skip
def test_bl104_limit_by_checkpoint(checkpoint, length, fires):
    source = HEADER + MODEL.format(checkpoint) + f'enc = tok(["a"], truncation=True, max_length={length})\n'
    assert bool(only("BL104", source)) is fires


def test_bl104_uses_the_tokenizer_checkpoint_when_no_model_is_loaded():
    [finding] = only("BL104", HEADER + 'enc = tok(["a"], truncation=True, max_length=1024)\n')
    assert "512 positions of bert-base-uncased" in finding.message


def test_bl104_silent_when_the_loaded_models_disagree():
    source = HEADER + MODEL.format("bert-base-uncased") + MODEL.format("gpt2") + 'enc = tok(["a"], truncation=True, max_length=1000)\n'
    assert only("BL104", source) == []


def test_bl104_silent_when_a_model_has_an_unknown_limit():
    source = HEADER + MODEL.format("bert-base-uncased") + 'other = AutoModelForSequenceClassification.from_config(cfg)\n'
    assert only("BL104", source + 'enc = tok(["a"], truncation=True, max_length=1000)\n') == []


def test_bl104_collator_only_when_it_pads_to_max_length():
    base = HEADER + MODEL.format("bert-base-uncased") + "from transformers import DataCollatorWithPadding\n"
    assert only("BL104", base + 'c = DataCollatorWithPadding(tok, padding="max_length", max_length=1024)\n')
    assert only("BL104", base + "c = DataCollatorWithPadding(tok, max_length=1024)\n") == []


def test_bl104_local_config_wins_over_the_table(tmp_path):
    folder = tmp_path / "bert-base-uncased"  # a local folder shadowing a hub id bertlint knows
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 100, "max_position_embeddings": 2048}))
    source = HEADER + MODEL.format("bert-base-uncased") + 'enc = tok(["a"], truncation=True, max_length=1024)\n'
    assert only("BL104", source, path=tmp_path / "train.py") == []
    assert only("BL104", source, path=tmp_path / "elsewhere" / "train.py")


def test_bl104_fixture_near_miss_depends_on_its_local_config():
    path = ROOT / "fixtures" / "tokenization" / "bl104_ok_local_config_wins.py"
    assert only("BL104", path.read_text(), path=path) == []
    assert only("BL104", path.read_text(), path=ROOT / "tests" / "_snippet.py")


# --- BL106 --------------------------------------------------------------------------------

MAP_SCRIPT = """\
from datasets import load_dataset
from transformers import AutoTokenizer, Trainer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
ds = load_dataset("imdb")
{extra}
def prep(batch):
    return tok(batch["text"], padding="max_length", truncation=True, max_length=128)
ds = ds.map(prep, batched=True)
trainer = Trainer(model=None, train_dataset=ds["train"])
"""


def test_bl106_map_function_feeding_a_trainer():
    [finding] = only("BL106", MAP_SCRIPT.format(extra=""))
    assert finding.line == 7


def test_bl106_through_functools_partial():
    source = MAP_SCRIPT.replace("ds.map(prep,", "ds.map(partial(prep),").format(extra="from functools import partial")
    assert only("BL106", source)


def test_bl106_through_a_lambda_that_calls_the_function():
    source = MAP_SCRIPT.replace("def prep(batch):", "def prep(batch, tok):").replace("ds.map(prep,", "ds.map(lambda rows: prep(rows, tok),")
    [finding] = only("BL106", source.format(extra=""))
    assert finding.line == 7
    unrelated = source.replace("lambda rows: prep(rows, tok)", "lambda rows: rows").format(extra="")
    assert only("BL106", unrelated) == []  # prep is never mapped


TARGETS_SCRIPT = """\
from datasets import load_dataset
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, Trainer
tok = AutoTokenizer.from_pretrained("facebook/bart-base")
model = AutoModelForSeq2SeqLM.from_pretrained("facebook/bart-base")
ds = load_dataset("xsum")
def prep(batch):
    inputs = tok(batch["document"], {inputs})
    labels = tok(batch["summary"], max_length=16, padding="max_length", truncation=True)
    ids = labels["input_ids"]
    inputs["labels"] = [[t if t != tok.pad_token_id else -100 for t in row] for row in ids]
    return inputs
ds = ds.map(prep, batched=True)
trainer = Trainer(model=model, train_dataset=ds["train"])
"""


def test_bl106_silent_for_fixed_length_seq2seq_target_labels():
    # only a seq2seq model's target ids (labels, which `DataCollatorWithPadding` would not pad) are padded to a fixed length
    assert only("BL106", TARGETS_SCRIPT.format(inputs="truncation=True")) == []
    # the same padding on the inputs still fires, on the inputs' line only
    [finding] = only("BL106", TARGETS_SCRIPT.format(inputs='padding="max_length", max_length=64, truncation=True'))
    assert finding.line == 7
    # with a collator that pads the labels per batch, the fixed target length is waste again
    collated = TARGETS_SCRIPT.replace('train_dataset=ds["train"]', 'train_dataset=ds["train"], data_collator=DataCollatorForSeq2Seq(tok))')
    collated = collated.replace("import AutoModelForSeq2SeqLM,", "import AutoModelForSeq2SeqLM, DataCollatorForSeq2Seq,").replace("))\n", ")\n")
    assert [f.line for f in only("BL106", collated.format(inputs="truncation=True"))] == [8]


def test_bl106_needs_a_trainer_or_dataloader():
    assert only("BL106", MAP_SCRIPT.format(extra="").replace('trainer = Trainer(model=None, train_dataset=ds["train"])\n', "")) == []


@pytest.mark.parametrize("extra", [
    "import torch_xla.core.xla_model as xm",
    "import jax",
    "import tensorflow as tf\nstrategy = tf.distribute.TPUStrategy(resolver)",
    "from transformers import TrainingArguments\nargs = TrainingArguments('out', tpu_num_cores=8)",
    "import tensorflow as tf\nmodel = tf.keras.Model()\nmodel.compile(jit_compile=True)",
])  # fmt: skip
def test_bl106_silent_for_tpu_and_xla(extra):
    assert only("BL106", MAP_SCRIPT.format(extra=extra)) == []


def test_bl106_without_max_length_anywhere():
    assert only("BL106", HEADER + 'enc = tok(["a"], padding="max_length", truncation=True)\nout = model(**enc)\n')


@pytest.mark.parametrize(
    ("tail", "fires"),
    [
        ("", True),  # never read at all: a demonstration of the call, still a finding
        ("enc = tok(['b'])\nout = model(**enc)\n", True),
        ("print(enc['input_ids'])\nprint(tok.batch_decode(enc.input_ids), enc.input_ids.shape)\n", False),  # inspected only
        ("same = np.array_equal(enc.input_ids, other)\n", False),
        ("out = model(**enc)\n", True),
        ("batches.append(enc)\n", True),
        ("loss = model(**tok(['b'], padding='max_length')).loss\n", True),  # fed where it is made
    ],
)
def test_bl106_silent_for_ids_never_fed_to_a_model(tail, fires):
    source = HEADER + "import numpy as np\nbatches = []\n" + 'enc = tok(["a"], padding="max_length", truncation=True)\n' + tail
    assert bool(only("BL106", source)) is fires


@pytest.mark.parametrize("extra", [
    "from accelerate import Accelerator, DistributedType\nacc = Accelerator()\nSTATIC = acc.distributed_type == DistributedType.XLA",
    "from transformers.utils import is_torch_xla_available\nON_TPU = is_torch_xla_available()",
    "import tensorrt as trt",
    "from optimum.onnxruntime import ORTModelForSequenceClassification",
    "import torch\nmodel, x = torch.nn.Linear(2, 2), torch.zeros(1, 2)\ntorch.onnx.export(model, (x,), 'model.onnx', input_names=['input_ids'])",
    "from diffusers import UNet2DConditionModel",
    "from accelerate import Accelerator, DistributedType",
])  # fmt: skip
def test_bl106_silent_for_fixed_shape_back_ends(extra):
    assert only("BL106", MAP_SCRIPT.format(extra=extra)) == []
    if "onnx.export" in extra:  # dynamic axes: any shape goes
        assert only("BL106", MAP_SCRIPT.format(extra=extra.replace("])", "], dynamic_axes={'input_ids': {0: 'b', 1: 's'}})")))


def test_bl106_labels_padded_to_the_longest_of_a_fixed_set():
    source = MAP_SCRIPT.format(extra='CLASSES = ["negative", "neutral", "positive"]\nlongest = max(len(tok(c)["input_ids"]) for c in CLASSES)').replace(
        '    return tok(batch["text"], padding="max_length", truncation=True, max_length=128)',
        '    enc = tok(batch["text"], truncation=True, max_length=128)\n    enc["labels"] = tok(batch["label"], padding="max_length", max_length=longest)["input_ids"]\n    return enc',
    )
    assert only("BL106", source) == []
    assert only("BL106", source.replace("max_length=longest", "max_length=32"))


def test_bl106_negligible_padding_and_the_collator_to_recommend():
    assert only("BL106", MAP_SCRIPT.replace("max_length=128", "max_length=4").format(extra="")) == []
    labels = MAP_SCRIPT.replace(
        '    return tok(batch["text"], padding="max_length", truncation=True, max_length=128)',
        '    enc = tok(batch["text"], padding="max_length", truncation=True, max_length=128)\n    enc["labels"] = tok(batch["tag"], max_length=4, padding="max_length")["input_ids"]\n    return enc',
    )
    [finding] = only("BL106", labels.format(extra=""))
    assert "DataCollatorForSeq2Seq" in finding.help and "DataCollatorWithPadding` cannot pad labels" in finding.help
    [plain] = only("BL106", MAP_SCRIPT.format(extra=""))
    assert "DataCollatorWithPadding(tokenizer)" in plain.help
    tagging = labels.replace("from transformers import AutoTokenizer, Trainer", "from transformers import AutoModelForTokenClassification, AutoTokenizer, Trainer")
    tagging = tagging.replace("trainer = Trainer(model=None", 'model = AutoModelForTokenClassification.from_pretrained("bert-base-uncased")\ntrainer = Trainer(model=model')
    [finding] = only("BL106", tagging.format(extra=""))
    assert "DataCollatorForTokenClassification" in finding.help


def test_bl106_silent_for_a_tokenizer_built_from_a_vocab_file():
    source = 'from transformers import BertTokenizer\ntok = BertTokenizer("vocab.txt")\nenc = tok(["a"], padding="max_length")\n'
    assert only("BL106", source) == []  # no model_max_length: it does not pad at all


# --- BL103 --------------------------------------------------------------------------------

MANUAL = """\
import torch
from transformers import AutoModel, AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
tokens = {tokens}
ids = tok.convert_tokens_to_ids(tokens)
with torch.no_grad():
    out = model({sink})
"""


@pytest.mark.parametrize("sink", ["torch.tensor([ids])", "input_ids=torch.tensor([ids]).to('cpu')", "torch.tensor([ids + [0] * 5])"])
def test_bl103_manual_ids_reach_the_model(sink):
    [finding] = only("BL103", MANUAL.format(tokens='tok.tokenize("hello world")', sink=sink))
    assert finding.line == 6


@pytest.mark.parametrize("tokens", [
    '["[CLS]"] + tok.tokenize("hello world") + ["[SEP]"]',
    '[tok.cls_token] + tok.tokenize("hello world") + [tok.sep_token]',
    '"hello world".split()',  # not from tokenize()
])  # fmt: skip
def test_bl103_silent(tokens):
    assert only("BL103", MANUAL.format(tokens=tokens, sink="torch.tensor([ids])")) == []


def test_bl103_silent_when_the_ids_are_only_printed():
    source = MANUAL.format(tokens='tok.tokenize("hi")', sink='**tok("hi", return_tensors="pt")') + "print(ids)\n"
    assert only("BL103", source) == []


# --- BL607 --------------------------------------------------------------------------------


def test_bl607_only_on_5x():
    source = 'from transformers import BertTokenizer\ntok = BertTokenizer(vocab_file="vocab.txt")\n'
    assert only("BL607", source, transformers_version="4.57") == []
    assert only("BL607", source, transformers_version="5.0")


def test_bl607_fix_positional_when_first():
    text = fixed("BL607", 'import transformers as tf_\ntok = tf_.BertTokenizer(vocab_file="v.txt", do_lower_case=True)\n')
    assert 'tf_.BertTokenizer("v.txt", do_lower_case=True)' in text


def test_bl607_fix_bpe_files_positional_in_order():
    text = fixed("BL607", 'from transformers import GPT2Tokenizer\ntok = GPT2Tokenizer(vocab_file="v.json", merges_file="m.txt")\n')
    assert 'GPT2Tokenizer("v.json", "m.txt")' in text


def test_bl607_fix_renames_when_not_first():
    text = fixed("BL607", 'from transformers import RobertaTokenizer\ntok = RobertaTokenizer(errors="replace", merges_file="m.txt", vocab_file="v.json")\n')
    assert 'RobertaTokenizer(errors="replace", merges="m.txt", vocab="v.json")' in text


def test_bl607_sentencepiece_has_no_fix():
    [finding] = only("BL607", 'from transformers import T5Tokenizer\ntok = T5Tokenizer(vocab_file="spiece.model")\n')
    assert finding.fix is None  # 5.x `vocab=` wants pieces, not a path


def test_bl607_local_subclass():
    base = "from transformers import BertTokenizer\nclass Mine(BertTokenizer):\n    {body}\ntok = Mine(vocab_file='v.txt')\n"
    assert only("BL607", base.format(body="pass"))
    assert only("BL607", base.format(body="def __init__(self, vocab_file):\n        super().__init__(vocab=vocab_file)")) == []


# --- BL608 --------------------------------------------------------------------------------


def test_bl608_only_on_5x():
    source = HEADER + 'enc = tok.encode_plus("a", truncation=True)\n'
    assert only("BL608", source, transformers_version="4.57") == []
    assert "AttributeError" in only("BL608", source, transformers_version="5.0")[0].message


def test_bl608_fix_calls_the_tokenizer():
    text = fixed("BL608", HEADER + 'enc = tok.encode_plus("a", "b", truncation=True)\nbatch = tok.batch_encode_plus(["a", "b"], padding=True)\n')
    assert 'enc = tok("a", "b", truncation=True)' in text and 'batch = tok(["a", "b"], padding=True)' in text


def test_bl608_fix_renames_the_batch_keyword():
    text = fixed("BL608", HEADER + "class D:\n    def get(self, rows):\n        return self.tokenizer.batch_encode_plus(batch_text_or_text_pairs=rows)\n")
    assert "self.tokenizer(text=list(rows))" in text  # `rows` may be any iterable: the tokenizer takes a list


@pytest.mark.parametrize("method, text", [("batch_encode_plus", '["a b", "a"]'), ("encode_plus", '"a b"')])
def test_bl608_fix_keeps_the_padding_pad_to_max_length_asked_for(method, text):
    """BL608 alone (BL101 is in preview): `tokenizer(...)` on 5.x ignores `pad_to_max_length=` without a word, so the
    fix writes `padding="max_length"`; the fixed call, run on the installed transformers, pads to `max_length`."""
    source = HEADER + f"enc = tok.{method}({text}, max_length=8, pad_to_max_length=True, truncation=True)\n"
    finding, = only("BL608", source)
    assert 'padding="max_length"' in finding.help
    text_fixed = fixed("BL608", source)
    assert f'enc = tok({text}, max_length=8, padding="max_length", truncation=True)' in text_fixed
    tok = _tiny_tokenizer()
    enc = eval(text_fixed.splitlines()[-1].split(" = ", 1)[1], {"tok": tok})
    ids = enc["input_ids"] if method == "batch_encode_plus" else [enc["input_ids"]]
    assert all(len(row) == 8 for row in ids)
    ignored = tok(["a b", "a"], max_length=8, pad_to_max_length=True, truncation=True)["input_ids"]
    assert [len(row) for row in ignored] == [4, 3]  # the fact the fix rests on: the keyword pads nothing on 5.x


def test_bl608_fix_renames_truncation_strategy_which_the_tokenizer_call_refuses():
    """`encode_plus(..., truncation_strategy=...)` -> `tok(..., truncation=...)`: the tokenizer call raises TypeError on the
    old keyword from 4.52 (BL617); the fixed call runs on the installed transformers and truncates the second text."""
    source = HEADER + 'enc = tok.encode_plus("a", "b b b b", max_length=3, truncation_strategy="only_second")\n'
    text_fixed = fixed("BL608", source)
    assert 'enc = tok("a", "b b b b", max_length=3, truncation="only_second")' in text_fixed
    tok = _tiny_tokenizer()
    with pytest.raises(TypeError, match="truncation_strategy"):
        tok("a", "b b b b", max_length=3, truncation_strategy="only_second")
    enc = eval(text_fixed.splitlines()[-1].split(" = ", 1)[1], {"tok": tok})
    assert enc["input_ids"] == [4, 5, 5]  # "a" whole, the second text cut to fit
    kept = fixed("BL608", HEADER + 'enc = tok.encode_plus("a", truncation=True, truncation_strategy="only_first")\n')
    assert "truncation_strategy" in kept  # `truncation=` given too: nothing to rename to (the help says to drop it)
    finding, = only("BL608", HEADER + 'enc = tok.encode_plus("a", truncation=True, truncation_strategy="only_first")\n')
    assert "drop `truncation_strategy=`" in finding.help


@pytest.mark.parametrize("given, renamed, help", [
    ("", 'truncation="only_first"', "use `truncation=` instead"),  # renamed: the same strategy names
    ("truncation=True, ", None, "drop it: the call already passes `truncation=`"),  # nothing to rename to
])
def test_bl617_truncation_strategy_is_renamed_or_dropped(given, renamed, help):
    source = HEADER + f'enc = tok("a", "b", {given}max_length=8, truncation_strategy="only_first")\n'
    finding, = only("BL617", source)
    assert finding.severity == "error" and "got multiple values for keyword argument 'truncation_strategy'" in finding.message
    assert finding.help == help
    if renamed is None:
        assert finding.fix is None
    else:
        assert renamed in fixed("BL617", source)


@pytest.mark.parametrize("value", ["flag", "True, **opts"])
def test_bl608_fix_with_an_uncertain_pad_to_max_length_is_unsafe(value):
    source = HEADER + f'opts = {{}}\nflag = input() == "y"\nenc = tok.batch_encode_plus(["a", "b"], pad_to_max_length={value})\n'
    finding, = only("BL608", source)
    assert "padding=" in finding.help
    assert (finding.fix is None) if "**" in value else (finding.fix.applicability == "unsafe")  # `**opts`: no fix at all


def _tiny_tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"]
    inner = Tokenizer(models.WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    inner.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    inner.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=inner, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]")


def test_bl608_silent_for_tokenizers_that_keep_encode_plus():
    source = 'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("microsoft/layoutlmv3-base")\nenc = tok.encode_plus(words, boxes=boxes)\n'
    assert only("BL608", source) == []


def test_bl608_leaves_encode_alone():
    assert only("BL608", HEADER + 'ids = tok.encode("a b")\n') == []


# --- BL609 --------------------------------------------------------------------------------


@pytest.mark.parametrize(("typo", "meant"), [
    ("truncate", "truncation"), ("max_len", "max_length"), ("paddding", "padding"), ("return_tensor", "return_tensors"),
    ("max_seq_length", "max_length"), ("return_attention_masks", "return_attention_mask"),
])  # fmt: skip
def test_bl609_fix_renames_to_the_nearest_keyword(typo, meant):
    text = fixed("BL609", HEADER + f'enc = tok("a b", {typo}=True)\n')
    assert f'tok("a b", {meant}=True)' in text


def test_bl609_message_follows_the_target_version():
    source = HEADER + 'enc = tok("a b", truncate=True)\n'
    assert "swallows it silently" in only("BL609", source, transformers_version="5.0")[0].message
    message = only("BL609", source, transformers_version="4.46")[0].message
    assert "TypeError" in message and "not recognized" in message


def test_bl609_no_fix_when_the_keyword_is_already_there():
    [finding] = only("BL609", HEADER + 'enc = tok("a b", truncation=True, truncate=True)\n')
    assert finding.fix is None


def test_bl609_tokenizer_attribute_passed_to_the_call():
    [finding] = only("BL609", HEADER + 'enc = tok("a b", truncation=True, truncation_side="left")\n')
    assert "attribute" in finding.message and finding.fix is None


@pytest.mark.parametrize("keyword", ["add_prefix_space", "pad_to_max_length", "boxes", "src_lang", "stride", "split_special_tokens"])
def test_bl609_silent_for_keywords_that_are_not_misspellings(keyword):
    assert only("BL609", HEADER + f'enc = tok("a b", {keyword}=1)\n') == []


def test_bl609_resolves_the_receiver():
    source = "from transformers import AutoModel as T\nm = T.from_pretrained('bert-base-uncased')\nout = m(ids, truncate=True)\n"
    assert only("BL609", source) == []  # a model, not a tokenizer


@pytest.mark.parametrize(("code", "options", "expected"), [
    ("BL102", '{"padding": True, "max_length": 64}', [(3, 26, False)]),  # at the key, no fix (the call's text is elsewhere)
    ("BL102", '{"padding": True, "max_length": 64, "truncation": True}', []),
    ("BL105", '{"padding": "max_length", "max_length": 64}', [(3, 34, False)]),
    ("BL105", '{"padding": "max_length", "max_length": 64, "truncation": True}', []),
])
def test_truncation_rules_see_the_keys_of_a_spread_dict(code, options, expected):
    """`tok(texts, **OPTS)` passes OPTS's keys (Python's binding): the finding sits at the key where the file spells it;
    the rules' fix (`, truncation=True` after the argument) is written only beside an argument of the call."""
    source = f"from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\nOPTS = {options}\nenc = tok(open('t.txt').read().splitlines(), **OPTS)\n"
    assert [(f.line, f.column, f.fix is not None) for f in lint_text(source) if f.code == code] == expected
    unknown = source.replace(f"OPTS = {options}", "import json\nOPTS = json.load(open('o.json'))")
    assert [f for f in lint_text(unknown) if f.code == code] == []  # a `**` of unknown keys may hold `truncation`
