"""Run code bodies on the installed transformers (run by tests/releases.py in a release's folder, not collected).

stdin: a JSON list of bodies; argv[1]: `fast` (a `PreTrainedTokenizerFast` around a `tokenizers` WordPiece) or
`slow` (`BertTokenizer` on a vocab file; on 5.x the tokenizers-backed class). Each body runs with `tok`, `np`, `pd`,
`transformers`, `TrainingArguments` and the texts `L` and `R` in its namespace and leaves its result in `out`.
stdout, last line: per body `{"ok": true, "out": ...}` or `{"ok": false, "error": "TypeError: ..."}`.
"""

import contextlib
import io
import json
import os
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd
import transformers
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "a", "b", "c", "d", "hi", "the", "cat", "sat", "##s", "on", "mat"]
L = ["hello world", "the cats sat on the mat", "a b c d", "hi"]
R = ["hi", "c d", "the mat", "world hello a"]


def build(kind: str):
    if kind == "slow":
        path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
        with open(path, "w") as f:
            f.write("\n".join(VOCAB) + "\n")
        return transformers.BertTokenizer(path)
    inner = Tokenizer(models.WordPiece({w: i for i, w in enumerate(VOCAB)}, unk_token="[UNK]"))
    inner.normalizer = normalizers.BertNormalizer(lowercase=True)
    inner.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    inner.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=inner, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def plain(value):
    """Lists, numbers and strings only: arrays and tensors as lists, enums as their value."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "keys"):
        return {str(k): plain(value[k]) for k in value.keys()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool)):
        return plain(value.value)
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def main() -> None:
    tok = build(sys.argv[1])
    results = []
    for body in json.load(sys.stdin):
        space = {"tok": tok, "np": np, "pd": pd, "transformers": transformers, "TrainingArguments": transformers.TrainingArguments, "L": list(L), "R": list(R)}
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                exec(compile(body, "<case>", "exec"), space)
            results.append({"ok": True, "out": plain(space["out"])})
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - the error is the result (a tokenizers panic is a BaseException)
            results.append({"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
    print(json.dumps(results))


if __name__ == "__main__":
    main()
