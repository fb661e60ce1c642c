"""BL606: TensorFlow/Flax names from transformers (`TF*`, `Flax*`, `create_optimizer`, ...) with a target that no longer ships them."""

from __future__ import annotations

import re

from bertlint import versions
from bertlint.facts import Facts
from bertlint.rules import Replacement
from bertlint.rules.bl604 import TransformersAdamW
from bertlint.rules.symbols import SymbolUse, exported_at

FRAMEWORK_PREFIX = re.compile(r"^(?:TF_|FLAX_|Flax|TF(?=[A-Z]))")  # `TFBertModel`, `TF_MODEL_MAPPING`, `FlaxBertModel`, `FLAX_MODEL_MAPPING`


class TensorflowRemoved(TransformersAdamW):
    code = "BL606"
    name = "tensorflow-removed"
    severity = "error"
    fails_at_its_line = True
    summary = "TensorFlow/Flax classes and helpers of transformers (`TFBertModel`, `create_optimizer`, `TFTrainer`) with a target that removed them"
    help = "pin transformers to a release that still has it, or port the script to PyTorch"
    fix = None
    fix_title = ""
    symbols = "tensorflow"

    def fix_for(self, facts: Facts, use: SymbolUse) -> list[Replacement] | None:
        return None

    def help_for(self, facts: Facts, use: SymbolUse, status: str, version: versions.Version) -> str | None:
        """An import whose binding the script never reads: drop it, porting nothing (`SymbolUse.unread`). Else first
        the pin under the release that removed it (the code runs unchanged there), then the port to PyTorch: the class
        without the framework's prefix where the target exports one (`BertModel` for `TFBertModel`), else the row's
        own `port`."""
        if (unread := use.unread(facts)) is not None:
            return unread
        pin = f"pin transformers<{versions.show(use.entry.removed)} (the code runs unchanged there)"
        pytorch = FRAMEWORK_PREFIX.sub("", use.name)
        if pytorch != use.name and exported_at("transformers", pytorch, version):
            spelled = pytorch if use.module == "transformers" else f"transformers.{pytorch}"
            return f"{pin}, or port the script to PyTorch, with `{spelled}` in place of `{use.name}`"
        port = use.entry.extra.get("port")
        return f"{pin}, or port the script to PyTorch" + (f" ({port})" if port else "")
