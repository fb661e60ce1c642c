"""BL101: `pad_to_max_length=` stopped padding when transformers removed it."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import ENCODE_METHODS, Call, Facts, fed_alone, is_transformers_name, padding_for_pad_to_max_length, structured_tokenizer
from bertlint.rules import Context, Replacement, Rule


class PadToMaxLengthDeprecated(Rule):
    code = "BL101"
    name = "pad-to-max-length-deprecated"
    severity = "error"
    fails_at_its_line = True
    summary = "`pad_to_max_length=` in a tokenizer call: removed in 4.52, silently ignored in 5.x"
    help = 'use `padding="max_length"` (with `max_length=N, truncation=True`)'
    fix = "safe"
    fix_title = "replace `pad_to_max_length` with `padding=`"

    def check(self, ctx: Context) -> None:
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            arg = call.kwargs.get("pad_to_max_length")
            if arg is None:
                continue
            if ctx.version < (4, 52):
                continue  # the keyword still pads there (the library's own FutureWarning says it is deprecated)
            speed = _tokenizer_speed(facts, call)
            if _padded_anyway(ctx, call, speed) or fed_alone(facts, call) and not _raises(ctx, speed):
                continue  # padded by `padding=` anyway; or one example the model reads alone, where padding changes nothing
            replacement = padding_for_pad_to_max_length(facts, call)
            fix = None
            padding = replacement or '"max_length"'
            help = f"use `padding={padding}` instead (with `max_length=N, truncation=True`)"
            unpacked = _unpacked_padding(facts, call)
            if unpacked is not None:
                help = f"drop `pad_to_max_length=`: {unpacked}, so adding `padding=` would pass it twice (TypeError)"
            elif replacement is not None and "padding" not in call.kwargs:
                fix = [Replacement(arg.keyword, "padding"), Replacement(arg.value, replacement)]
            gone = _gone(ctx, call)
            ctx.report(arg, _gone_message(ctx, gone) if gone else _message(ctx, speed), fix=fix, help=help)


def _unpacked_padding(facts: Facts, call: Call) -> str | None:
    """Why a `**mapping` of the call may already pass `padding=` (the fix's precondition is that none does), or None:
    a mapping the value layer knows to hold it, or one it cannot see into."""
    for arg in call.node.args:
        if arg.star != "**":
            continue
        value = facts.value(arg.value, call.scope, order=call.order)
        text = facts.text(arg.value)
        if not isinstance(value, dict):
            return f"`**{text}` may already pass `padding`"
        if "padding" in value:
            return f"`**{text}` already passes `padding={value['padding']!r}`"
    return None


def _padded_anyway(ctx: Context, call: Call, speed: str | None) -> bool:
    """The call also passes `padding=` (not False) and the target drops `pad_to_max_length` without an error
    (5.x; a slow tokenizer from 4.52): the keyword is dead, but the call still pads as `padding=` asks."""
    padding = call.kwargs.get("padding")
    if padding is None or ctx.facts.value(padding.value, call.scope, order=call.order) is False:
        return False
    return ctx.version >= (5, 0) or (ctx.version >= (4, 52) and speed == "slow")


def _gone(ctx: Context, call: Call) -> str | None:
    """The method the call uses when the target no longer has it (`encode_plus` on 5.x: BL608), else None."""
    if call.method in versions.removed_at("encode_methods", ctx.version) and not structured_tokenizer(ctx.facts, call):
        return call.method
    return None


def _raises(ctx: Context, speed: str | None) -> bool:
    """4.52-4.57 with a fast (or unknown) tokenizer: the keyword raises `TypeError`, whatever is padded."""
    return (4, 52) <= ctx.version < (5, 0) and speed != "slow"


def _gone_message(ctx: Context, gone: str) -> str:
    """On 5.x a call to a method that no longer exists raises before the keyword matters: say so, and what the
    tokenizer call that replaces it (BL608's fix) does with the keyword."""
    return (f"`pad_to_max_length` was removed: transformers {ctx.version_text()} has no `{gone}` (this call raises AttributeError, BL608), "
            "and the tokenizer call that replaces it silently ignores the keyword, so nothing is padded")


def _message(ctx: Context, speed: str | None) -> str:
    """What the target version (4.52 or later: below, the keyword still pads) does with the keyword (research:
    api-facts.md section 1)."""
    shown = ctx.version_text()
    if ctx.version >= (5, 0):
        return f"`pad_to_max_length` was removed: transformers {shown} silently ignores it, so nothing is padded and no warning is printed"
    fast = "this fast tokenizer raises `TypeError: ... got an unexpected keyword argument 'pad_to_max_length'`"
    slow = "this slow tokenizer only logs that the keyword is not recognized and does not pad"
    effect = {"fast": fast, "slow": slow}.get(speed, "fast tokenizers raise TypeError, slow ones silently do not pad")
    return f"`pad_to_max_length` was removed in 4.52 (target {shown}): {effect}"


def _tokenizer_speed(facts: Facts, call: Call) -> str | None:
    """"fast" or "slow" when the tokenizer's class says so (4.x only has both kinds), else None."""
    fn = call.receiver if call.method in ENCODE_METHODS else call.node.func
    tok = facts.kind(fn, call.scope, call.order)
    if tok is None or tok.kind != "tokenizer" or tok.call is None or tok.call.qualname is None:
        return None
    names = sorted(q for q in facts.class_bases(tok.call.qualname.removesuffix(".from_pretrained")) if is_transformers_name(q))
    if not names:
        return None
    cls = names[0].rsplit(".", 1)[-1]
    if cls.startswith("AutoTokenizer"):
        use_fast = facts.kw_value(tok.call, "use_fast", default=True)
        return {True: "fast", False: "slow"}.get(use_fast)
    return "fast" if cls.endswith("Fast") else "slow"
