"""BL607: `vocab_file=`/`merges_file=` are silently ignored by transformers 5 tokenizer constructors."""

from __future__ import annotations

from bertlint.facts import Call, Facts, Failure, is_tokenizer_class
from bertlint.rules import Context, Replacement, Rule

# 4.x keyword -> 5.x keyword, in the constructors' positional order.
RENAMED = {"vocab_file": "vocab", "merges_file": "merges"}
# Classes whose 5.x `vocab=`/`merges=` take a file path (WordPiece and BPE; checked on 5.23.0). SentencePiece
# classes (T5, ALBERT, XLM-R, ...) ignore `vocab_file=` too, but their `vocab=` wants the pieces, not a path.
PATH_VOCAB_CLASSES = frozenset(
    "Bert DistilBert Electra MPNet LayoutLM SqueezeBert MobileBert Funnel Lxmert ConvBert DPRQuestionEncoder DPRContextEncoder "
    "DPRReader GPT2 Roberta Bart Longformer LED Blenderbot CodeGen Deberta CLIP Qwen2 GPTNeoX".split()
)


class TokenizerVocabFileIgnored(Rule):
    code = "BL607"
    name = "tokenizer-vocab-file-ignored"
    exact = "the keyword is checked against the tokenizer constructors of the target transformers version"
    severity = "error"
    fails_at_its_line = True
    summary = "`BertTokenizer(vocab_file=...)` on transformers 5: the file is ignored and every word becomes `[UNK]`"
    help = "pass the path positionally or as `vocab=` (and `merges=`), or load the folder with `from_pretrained`"
    fix = "safe"
    fix_title = "pass the vocabulary as the 5.x constructor expects"

    def check(self, ctx: Context) -> None:
        if ctx.version < (5, 0):
            return
        facts = ctx.facts
        for call in facts.calls:
            old = [k for k in RENAMED if k in call.kwargs]
            if not old or not _constructs_library_tokenizer(facts, call):
                continue
            cls = call.qualname.rsplit(".", 1)[-1]
            named = " and ".join(f"`{k}=`" for k in old)
            ctx.report(
                call.kwargs[old[0]],
                f"{named} {'is not a parameter' if len(old) == 1 else 'are not parameters'} of `{cls}` in transformers 5 (target {ctx.version_text()}): "
                "the file is silently ignored, the tokenizer gets an almost empty vocabulary and every word becomes the unknown token",
                fix=_fix(call, old) if cls.removesuffix("Fast").removesuffix("Tokenizer") in PATH_VOCAB_CLASSES else None,
                failure=Failure(None, (*old, *(RENAMED[k] for k in old))),
            )


def _constructs_library_tokenizer(facts: Facts, call: Call) -> bool:
    """A transformers tokenizer class called directly (a local subclass that defines `__init__` may take `vocab_file`)."""
    if not call.qualname or call.qualname.endswith(".from_pretrained"):
        return False
    if call.qualname.startswith("<local>."):
        cls = facts.classes.get(call.qualname.split(".", 1)[1])
        if cls is None or "__init__" in cls.methods:
            return False
    return any(is_tokenizer_class(base) for base in facts.class_bases(call.qualname))


def _fix(call: Call, old: list[str]) -> list[Replacement]:
    """Positional when the file arguments lead the call in signature order (that works on 4.x and 5.x alike), else renamed."""
    order = list(RENAMED)[: len(old)]
    if old == order and [a.keyword.value if a.keyword else None for a in call.node.args[: len(old)]] == order:
        return [Replacement(call.kwargs[k], call.kwargs[k].value) for k in old]
    return [Replacement(call.kwargs[k].keyword, RENAMED[k]) for k in old]
