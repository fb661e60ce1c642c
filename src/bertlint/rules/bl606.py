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
    fails_at_its_line = True
    summary = "TensorFlow/Flax classes and helpers of transformers (`TFBertModel`, `create_optimizer`, `TFTrainer`) with a target that removed them"
    help = "port the script to PyTorch (`BertModel`, `torch.optim.AdamW` + `get_scheduler`), or pin transformers<5"
    fix = None
    fix_title = ""
    symbols = "tensorflow"

    def fix_for(self, facts: Facts, use: SymbolUse) -> list[Replacement] | None:
        return None

    def help_for(self, facts: Facts, use: SymbolUse, status: str) -> str | None:
        """An import the script never uses: delete it (porting nothing); else the rule's own help."""
        if use.statement is not None and not use.attributes:
            local = (use.node.asname.name if use.node.asname else use.node.name).value
            if not facts.name_counts.get(local):
                return f"delete the import: the script never uses `{local}`"
        return None
