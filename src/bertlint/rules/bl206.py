"""BL206: tokens added to the tokenizer, but the model's embedding matrix keeps its old size."""

from __future__ import annotations

import libcst as cst

from bertlint.facts import UNKNOWN, Call, Facts, dotted
from bertlint.rules import Context, Replacement, Rule

# Special tokens each vocabulary already holds (keys as in data/checkpoints.json): adding one of these adds nothing.
KNOWN_SPECIAL_TOKENS = {
    "bert-uncased": {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"},
    "bert-cased": {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"},
    "roberta-bpe": {"<s>", "<pad>", "</s>", "<unk>", "<mask>"},
    "xlmr-sp": {"<s>", "<pad>", "</s>", "<unk>", "<mask>"},
    "albert-sp": {"<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"},
    "deberta-v3-sp": {"[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"},
    "t5-sp": {"<pad>", "</s>", "<unk>", *(f"<extra_id_{i}>" for i in range(100))},
    "gpt2-bpe": {"<|endoftext|>"},
    "llama2-sp": {"<unk>", "<s>", "</s>"},
    "mistral-sp": {"<unk>", "<s>", "</s>"},
}


# len(tokenizer) of a vocabulary whose checkpoints' embedding matrices are larger: T5's SentencePiece model
# has 32000 pieces and the tokenizer adds 100 <extra_id_*> tokens (T5Tokenizer extra_ids=100).
TOKENIZER_LENGTHS = {"t5-sp": 32100}
SPARE_ROWS = {"t5-sp": 32128 - 32100}  # the t5-*/flan-t5-* configs' vocab_size: 32128


class AddedTokensWithoutResize(Rule):
    code = "BL206"
    name = "added-tokens-without-resize"
    severity = "error"
    summary = "Tokens are added to the tokenizer but the model never calls `resize_token_embeddings`"
    help = "call `model.resize_token_embeddings(len(tokenizer))` after adding the tokens"
    fix = "unsafe"
    fix_title = "add `model.resize_token_embeddings(len(tokenizer))`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        if not facts.model_loads or _sized_for_tokenizer(facts):
            return
        counts = {id(call): added_count(facts, call) for call in facts.calls if call.method in ("add_tokens", "add_special_tokens")}
        adds = [call for call in facts.calls if counts.get(id(call), 0) != 0]
        if not adds:
            return
        spare = _spare_rows(facts)
        if spare and (None in counts.values() or sum(counts.values()) <= spare):
            return  # the new ids fit in the rows the matrix already has past the vocabulary (unknown: cannot tell)
        last = adds[-1]
        fix = _fix(facts, last)
        ctx.report(
            last.node,
            "tokens are added to the tokenizer but the model's embeddings are never resized: the new ids are past the embedding matrix, "
            "so the forward pass fails with `IndexError: index out of range in self` on CPU and `RuntimeError: CUDA error: device-side assert triggered` on GPU",
            help=f"call `{fix[1]}` after adding the tokens" if fix else None,
            fix=fix[0] if fix else None,
        )


def _sized_for_tokenizer(facts: Facts) -> bool:
    """The model is resized, or built with an explicit vocabulary size (`BertConfig(vocab_size=len(tok))`)."""
    return any(call.method == "resize_token_embeddings" or "vocab_size" in call.kwargs for call in facts.calls) or any(
        store.key == "vocab_size" for store in facts.stores
    )


def adds_tokens(facts: Facts, call: Call) -> bool:
    return added_count(facts, call) != 0


def added_count(facts: Facts, call: Call) -> int | None:
    """How many tokens an `add_tokens`/`add_special_tokens` call adds at most: 0 when it adds none the
    vocabulary lacks, None when it adds some but how many is not known."""
    tokenizer = facts.kind(call.receiver, call.scope, call.order)
    if tokenizer is None or tokenizer.kind != "tokenizer" or _saved_locally(facts, tokenizer.call):
        return 0
    arg = call.arg(0, "new_tokens" if call.method == "add_tokens" else "special_tokens_dict")
    if arg is None:
        return 0
    value = facts.value(arg.value, call.scope, order=call.order)
    if call.method == "add_tokens":
        if value is UNKNOWN:
            return None
        return len(set(value)) if isinstance(value, (list, tuple, set)) else (1 if value else 0)
    if not isinstance(value, dict):
        return 0
    known = KNOWN_SPECIAL_TOKENS.get(_vocabulary(facts, tokenizer.call))
    count: int | None = 0
    for key, token in value.items():
        if key == "additional_special_tokens" and isinstance(token, (list, tuple)):
            if token and known is None:
                count = None
            elif count is not None:
                count += len(set(token) - known)
        elif isinstance(token, str) and known is not None and token not in known and count is not None:
            count += 1  # `{"pad_token": "[PAD]"}` on a vocabulary without it; `tok.eos_token` stays unknown: it exists
    return count


def _saved_locally(facts: Facts, load: Call | None) -> bool:
    """The tokenizer is loaded from a folder (`./model`, `/ckpt/run3`, `~/out`, `a/b/c`: no hub id has two slashes), not
    the hub: a fine-tuned checkpoint saves its added tokens (added_tokens.json) with it, and adding them again adds
    nothing (`add_tokens` skips tokens the vocabulary holds), so its model needs no new rows."""
    if load is None or load.method != "from_pretrained":
        return False
    name = facts.arg_value(load, 0, "pretrained_model_name_or_path")
    return isinstance(name, str) and (name.startswith((".", "/", "~")) or "\\" in name or name.count("/") > 1)


def _spare_rows(facts: Facts) -> int:
    """Rows of the model's embedding matrix past its tokenizer's vocabulary (the T5 checkpoints: 32128 rows for
    32100 tokens, padded to a multiple of 128), which added tokens fill without a resize; 0 when not known."""
    if len(facts.model_loads) != 1:
        return 0
    load = facts.model_loads[0]
    info = facts.checkpoint_info(load)
    if info is None:  # a T5 class of an unknown checkpoint: T5/Flan-T5 have 28 spare rows (mT5 12, ByT5 none): cannot tell
        return SPARE_ROWS["t5-sp"] if load.class_name.rsplit(".", 1)[-1].startswith("T5") else 0
    length = TOKENIZER_LENGTHS.get(info.tokenizer)
    return max(info.vocab_size - length, 0) if length is not None and info.vocab_size else 0


def _vocabulary(facts: Facts, load: Call | None) -> str | None:
    if load is None or load.method != "from_pretrained":
        return None
    info = facts.checkpoint(facts.arg_value(load, 0, "pretrained_model_name_or_path"))
    return info.tokenizer if info is not None else None


def _fix(facts: Facts, add: Call) -> tuple[list[Replacement], str] | None:
    """Insert the resize after the later of the adding statement and the model load, when both sit in one scope."""
    if len(facts.model_loads) != 1:
        return None
    load = facts.model_loads[0].call
    tokenizer = dotted(add.receiver)
    model = _bound_name(facts, load)
    if tokenizer is None or model is None or load.scope is not add.scope:
        return None
    stmt = add.stmt if add.order > load.order else load.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or id(stmt) not in facts.statement_paths:
        return None
    line = f"{model}.resize_token_embeddings(len({tokenizer}))"
    indent = "".join(facts.statement_paths[id(stmt)][1])
    end = stmt.trailing_whitespace.comment or stmt  # after a trailing comment, so that it stays on its line
    return [Replacement(end, f"\n{indent}{line}", after=True)], line


def _bound_name(facts: Facts, load: Call) -> str | None:
    """`model` in `model = AutoModel.from_pretrained(...)` (or `....to(device)`): the name that holds the model."""
    stmt = load.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return None
    assign = stmt.body[0]
    held = facts.kind(assign.value, load.scope, load.order)
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or held is None or held.kind != "model":
        return None
    return assign.targets[0].target.value
