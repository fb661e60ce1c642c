"""BL605: a class that subclasses an `Auto*` factory (`AutoModelForSequenceClassification`, `AutoTokenizer`, ...)."""

from __future__ import annotations

import re

from bertlint.rules import Context, Rule

# The factories: `from_pretrained`/`from_config` look the concrete class up in a table and return an instance of it.
# (`AutoformerModel` and `AutoRoundConfig` are ordinary classes, hence the exact list.)
_FACTORY = re.compile(r"(TF|Flax)?Auto(Model(For\w+|WithLMHead)?|Tokenizer|Config|Processor|FeatureExtractor|ImageProcessor|VideoProcessor|Backbone)")


class SubclassedAutoClass(Rule):
    code = "BL605"
    name = "subclassed-auto-class"
    exact = "`Auto*` classes are factories in every version: `from_pretrained` never returns the subclass"
    severity = "error"
    fails_at_its_line = True
    summary = "a class that subclasses an `Auto*` factory: `from_pretrained` returns the concrete class, so the subclass's code never runs"
    help = "subclass the checkpoint's concrete class instead (`BertForSequenceClassification`, `BertTokenizerFast`, ...)"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for cls in facts.classes.values():
            for base in cls.node.bases:
                qualname = facts.qualname(base.value, cls.scope.parent)
                factory = qualname.rsplit(".", 1)[-1] if qualname and qualname.startswith("transformers.") else ""
                if _FACTORY.fullmatch(factory):
                    ctx.report(
                        base,
                        f"`{cls.name}` subclasses the factory `{factory}`: `{cls.name}.from_pretrained(...)` returns the "
                        f"checkpoint's concrete class, not an instance of `{cls.name}`, so the code in `{cls.name}` never runs",
                    )
