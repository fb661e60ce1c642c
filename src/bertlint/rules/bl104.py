"""BL104: a `max_length` longer than the loaded model's position table."""

from __future__ import annotations

from bertlint import knowledge
from bertlint.facts import Facts, is_transformers_name
from bertlint.rules import Context, Rule


class MaxLengthExceedsModelLimit(Rule):
    code = "BL104"
    name = "max-length-exceeds-model-limit"
    severity = "error"
    summary = "`max_length` (tokenizer call or data collator) longer than the model's position limit"
    help = "clamp `max_length` to the model's limit"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        sites = list(_length_sites(facts))
        info = _position_limit(facts) if sites else None
        if info is None:
            return
        limit = info.usable_max_tokens
        for arg, value in sites:
            if value <= limit:
                continue
            model = info.id if info.source == "built-in" else f"the model ({info.source})"
            ctx.report(
                arg,
                f"`max_length={value}` is longer than the {limit} positions of {model}: a sequence of more than {limit} tokens "
                "crashes the forward pass (`IndexError`/size mismatch on CPU, `CUDA error: device-side assert triggered` on GPU)",
                help=f"clamp it to the model's limit: `max_length={limit}`",
            )


def _position_limit(facts: Facts) -> knowledge.ModelInfo | None:
    """The checkpoint whose hard position limit binds every model the script loads (its tokenizers' when it loads none)."""
    loads = [load for load in facts.model_loads if not load.class_name.startswith("peft.")]
    if loads:
        infos = [facts.checkpoint_info(load) for load in loads]
    else:
        names = [facts.arg_value(c, 0, "pretrained_model_name_or_path") for c in facts.tokenizer_loads if c.method == "from_pretrained"]
        infos = [facts.checkpoint(n) for n in names]
    if not infos or None in infos or len({(i.usable_max_tokens, i.hard_length_limit) for i in infos}) != 1:
        return None
    info = infos[0]
    return info if info.hard_length_limit and info.usable_max_tokens else None


def _length_sites(facts: Facts):
    """(the `max_length=` argument, its value) where a length takes effect: tokenizer calls, and
    data collators that pad to it (`padding="max_length"`; with dynamic padding they ignore it)."""
    calls = list(facts.tokenizer_calls) + [
        c for c in facts.calls
        if is_transformers_name(c.qualname) and c.qualname.rsplit(".", 1)[-1].startswith("DataCollator") and facts.kw_value(c, "padding") == "max_length"
    ]  # fmt: skip
    for call in calls:
        value = facts.kw_value(call, "max_length")
        if isinstance(value, int) and not isinstance(value, bool):
            yield facts.keyword_at(call, "max_length"), value
