"""BL609: a misspelt keyword in a tokenizer call (`truncate=`, `max_len=`, `return_tensor=`)."""

from __future__ import annotations

import difflib

from bertlint.rules import Context, Replacement, Rule

# The keywords of `__call__`/`encode`/`encode_plus`/`batch_encode_plus` in transformers 4.x and 5.x
# (`tokenization_utils_base.py` of 4.57.6 and 5.23.0, keyword arguments popped from **kwargs included).
VALID = frozenset(
    "text text_pair text_target text_pair_target batch_text_or_text_pairs add_special_tokens padding truncation max_length "
    "stride is_split_into_words pad_to_multiple_of padding_side return_tensors return_token_type_ids return_attention_mask "
    "return_overflowing_tokens return_special_tokens_mask return_offsets_mapping return_length verbose split_special_tokens "
    "tokenizer_kwargs".split()
)
# Accepted elsewhere: removed keywords with a rule of their own (BL101), and slow tokenizers' extra keywords.
KNOWN_ELSEWHERE = frozenset({"pad_to_max_length", "add_prefix_space", "src_lang", "tgt_lang"})
# Tokenizer attributes that are set on the tokenizer, not passed to the call.
ATTRIBUTES = frozenset({"truncation_side", "model_max_length"})
SIMILARITY = 0.75  # difflib ratio from which an unknown keyword counts as a misspelling


class UnknownTokenizerKeyword(Rule):
    code = "BL609"
    name = "unknown-tokenizer-keyword"
    severity = "error"
    fails_at_its_line = True
    summary = "A tokenizer call gets a keyword it does not accept (a misspelling such as `truncate=` or `max_len=`)"
    help = "use the tokenizer's keyword"
    fix = "unsafe"
    fix_title = "rename the keyword"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            given = facts.keywords(call)  # a `**mapping`'s known keys too, each where the file spells it
            for keyword, arg in given.items():
                if keyword in VALID or keyword in KNOWN_ELSEWHERE:
                    continue
                if keyword in ATTRIBUTES:
                    ctx.report(arg.at, f"`{keyword}` is a tokenizer attribute, not a call keyword: {_effect(ctx, keyword)}", help=f"set it once on the tokenizer: `tokenizer.{keyword} = ...`", runs=call.node)
                    continue
                nearest = difflib.get_close_matches(keyword, VALID, n=1, cutoff=SIMILARITY)
                if not nearest:
                    continue  # not a misspelling: a keyword of a specialised tokenizer (`boxes=`, `table=`)
                ctx.report(
                    arg.at,
                    f"`{keyword}=` is not a tokenizer keyword (did you mean `{nearest[0]}=`?): {_effect(ctx, keyword)}",
                    help=f"rename it to `{nearest[0]}=`",
                    fix=[Replacement(*renaming)] if (renaming := facts.renaming(call, arg, nearest[0])) else None,
                    runs=call.node,
                )


def _effect(ctx: Context, keyword: str) -> str:
    """What the target version does with an unknown keyword (api-facts §1)."""
    if ctx.version >= (5, 0):
        return f"transformers {ctx.version_text()} swallows it silently, so it has no effect"
    return (
        f"on transformers {ctx.version_text()} fast tokenizers raise `TypeError: ... got an unexpected keyword argument '{keyword}'` "
        f"and slow ones only log `Keyword arguments {{'{keyword}': ...}} not recognized.` and ignore it"
    )
