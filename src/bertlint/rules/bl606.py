"""BL606: TensorFlow/Flax names from transformers (`TF*`, `Flax*`, `create_optimizer`, ...) with a target that no longer ships them."""

from __future__ import annotations

from bertlint.facts import Facts
from bertlint.rules import Replacement
from bertlint.rules.bl604 import TransformersAdamW
from bertlint.rules.symbols import SymbolUse


class TensorflowRemoved(TransformersAdamW):
    code = "BL606"
    name = "tensorflow-removed"
    severity = "error"
    summary = "TensorFlow/Flax classes and helpers of transformers (`TFBertModel`, `create_optimizer`, `TFTrainer`) with a target that removed them"
    help = "port the script to PyTorch (`BertModel`, `torch.optim.AdamW` + `get_scheduler`), or pin transformers<5"
    fix = None
    fix_title = ""
    symbols = "tensorflow"

    def fix_for(self, facts: Facts, use: SymbolUse) -> list[Replacement] | None:
        return None
