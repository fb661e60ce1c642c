"""BL207: the tokenizer and the model come from checkpoints with different vocabularies."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import Call, Facts
from bertlint.rules import Context, Rule


class TokenizerModelMismatch(Rule):
    code = "BL207"
    name = "tokenizer-model-mismatch"
    severity = "error"
    summary = "Tokenizer and model loaded from checkpoints with different vocabularies"
    help = "load the tokenizer from the model's checkpoint"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.model_loads:
            return
        tokenizers = [_info(facts, call) for call in facts.tokenizer_loads]
        if not tokenizers or any(info is None or info.tokenizer is None for info in tokenizers):
            return  # a tokenizer we cannot place may be the one that matches
        vocabularies = {info.tokenizer for info in tokenizers}
        for load in facts.model_loads:
            model = facts.checkpoint_info(load)
            if model is None or model.tokenizer is None or model.tokenizer in vocabularies:
                continue
            tokenizer = tokenizers[0]
            ctx.report(load.call.node, _message(tokenizer, model))


def _info(facts: Facts, call: Call) -> knowledge.ModelInfo | None:
    if call.method != "from_pretrained":
        return None
    return facts.checkpoint(facts.arg_value(call, 0, "pretrained_model_name_or_path"))


def _message(tokenizer: knowledge.ModelInfo, model: knowledge.ModelInfo) -> str:
    sizes = f" ({tokenizer.vocab_size:,} vs {model.vocab_size:,} tokens)" if tokenizer.vocab_size and model.vocab_size else ""
    effect = "the ids point at other tokens' embeddings, so the model silently reads scrambled text"
    if tokenizer.vocab_size and model.vocab_size and tokenizer.vocab_size > model.vocab_size:
        effect += "; ids past the model's vocabulary fail with `IndexError: index out of range in self` (CUDA: `device-side assert triggered`)"
    return f"the tokenizer comes from `{tokenizer.id}` but the model from `{model.id}`, and their vocabularies differ{sizes}: {effect}"
