"""BL608: `encode_plus`/`batch_encode_plus` no longer exist in transformers 5; the fix calls the tokenizer
itself where the text's shape is one `tokenizer(...)` takes (preconditions: rules/BL608.md, "Fix safety")."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import Call, Facts, Failure, padding_for_pad_to_max_length, structured_tokenizer, text_container
from bertlint.rules import Context, Replacement, Rule


DEFAULT_PADDING = '"max_length"'  # what `pad_to_max_length=True`, the keyword's usual value, did


class EncodePlusRemoved(Rule):
    code = "BL608"
    name = "encode-plus-removed"
    exact = "the method is checked against the tokenizer API of the target transformers version"
    severity = "error"
    fails_at_its_line = True
    summary = "`tokenizer.encode_plus(...)`/`batch_encode_plus(...)` on transformers 5: `AttributeError`"
    help = "call the tokenizer itself: `tokenizer(text, ...)` takes the same arguments"
    fix = "safe"
    fix_title = "call the tokenizer directly"

    def check(self, ctx: Context) -> None:
        removed = versions.removed_at("encode_methods", ctx.version)
        if not removed:
            return
        facts = ctx.facts
        for call in facts.tokenizer_calls:
            if call.method not in removed or structured_tokenizer(facts, call):
                continue
            fix, unsafe, help = _keep_truncation(facts, call, *_keep_padding(facts, call, *(_batch_fix if call.method == "batch_encode_plus" else _single_fix)(facts, call)))
            ctx.report(
                call.node.func,
                f"`{call.method}` was removed in transformers 5 (target {ctx.version_text()}): this call raises "
                f"`AttributeError: ... has no attribute {call.method}`",
                fix=fix, unsafe=unsafe, help=help, failure=Failure("AttributeError", (call.method,)),
            )


def _batch_fix(facts: Facts, call: Call) -> tuple[list[Replacement] | None, bool, str | None]:
    """`tok.batch_encode_plus(texts, ...)` -> `tok(texts, ...)`, the texts made a list where they may not be one."""
    texts = call.arg(0, "batch_text_or_text_pairs")
    if call.has_star_args or len(call.positional) > 1 or texts is None:
        return None, False, ("call the tokenizer itself with the texts first and every other argument by keyword: "
                             "its second positional parameter is `text_pair`, not `add_special_tokens`")
    fix = [Replacement(call.node.func, facts.text(call.receiver))]
    if texts.keyword is not None:
        fix.append(Replacement(texts.keyword, "text"))
    if facts.kw_value(call, "is_split_into_words", default=False) is not False:
        return fix, True, ("call the tokenizer itself; with `is_split_into_words=True` it reads a list of strings as one "
                           "sequence of words, where `batch_encode_plus` read a batch: the fix is unsafe unless every item "
                           "of the batch is itself a list of words")
    shape = text_container(facts, texts.value, call.scope, call.order)
    if shape == "sequence":
        return fix, False, None
    wrapped = f"{facts.text(texts.value)}.tolist()" if shape == "array" else f"list({facts.text(texts.value)})"
    fix.append(Replacement(texts.value, wrapped))
    return fix, False, (f"call the tokenizer itself on a list: `tokenizer({wrapped}, ...)`; it takes a `str`, a list "
                        "or a tuple, and raises `ValueError: text input must be of type str ...` on a numpy array, a "
                        "pandas Series, a zip or a generator, which `batch_encode_plus` iterated")


def _single_fix(facts: Facts, call: Call) -> tuple[list[Replacement] | None, bool, str | None]:
    """`tok.encode_plus(text, ...)` -> `tok(text, ...)`: safe for one string (or one word list split into words)."""
    if call.has_star_args or len(call.positional) > 2:
        return None, False, ("call the tokenizer itself with `text` and `text_pair` first and every other argument by "
                             "keyword: its third positional parameter is `text_target`, not `add_special_tokens`")
    fix = [Replacement(call.node.func, facts.text(call.receiver))]
    words = facts.kw_value(call, "is_split_into_words") is True
    single = "sequence" if words else "str"
    texts = [a for a in (call.arg(0, "text"), call.arg(1, "text_pair")) if a is not None]
    if texts and all(text_container(facts, a.value, call.scope, call.order) == single for a in texts):
        return fix, False, None
    return fix, True, ("call the tokenizer itself: `tokenizer(text, ...)` encodes one string as `encode_plus` did, but "
                       "a list is a batch for it where `encode_plus` read one pretokenized sequence or a pair; check "
                       "that `text` is one string (the fix is unsafe because the file does not show it)")


def _keep_padding(facts: Facts, call: Call, fix: list[Replacement] | None, unsafe: bool,
                  help: str | None) -> tuple[list[Replacement] | None, bool, str | None]:
    """The fix and help of a call that passes `pad_to_max_length=`: `tokenizer(...)` on transformers 5 ignores that
    keyword without a word, so the renamed call would stop padding (checked on 5.24: `pad_to_max_length=True,
    max_length=8` returns unpadded ids); the fix also writes the `padding=` that does what it did, where certain."""
    arg = call.kwargs.get("pad_to_max_length")
    if arg is None:
        return fix, unsafe, help
    padding = padding_for_pad_to_max_length(facts, call)
    advice = (f"and pass `padding={padding or DEFAULT_PADDING}` for `pad_to_max_length=`, which `tokenizer(...)` "
              "ignores without a word on transformers 5")
    if fix is None:
        return None, unsafe, f"{help or 'call the tokenizer itself'}; {advice}"
    if padding is None or "padding" in call.kwargs or call.has_star_args:
        return fix, True, (f"{help or EncodePlusRemoved.help}; {advice} (the fix is unsafe: it keeps "
                           "`pad_to_max_length=`, whose value or company the file does not make certain)")
    return [*fix, Replacement(arg.keyword, "padding"), Replacement(arg.value, padding)], unsafe, \
        f"{help or 'call the tokenizer itself'}, {advice}"


def _keep_truncation(facts: Facts, call: Call, fix: list[Replacement] | None, unsafe: bool,
                     help: str | None) -> tuple[list[Replacement] | None, bool, str | None]:
    """The fix and help of a call that passes `truncation_strategy=`: the tokenizer call raises TypeError on it from 4.52
    (BL617, data/versions.json), where `encode_plus` read it where `truncation=` was not given; the fix renames it to
    `truncation=`, which takes the same strategy names, where `truncation=` is certainly not passed."""
    given = facts.keywords(call).get("truncation_strategy")
    if given is None or fix is None:
        return fix, unsafe, help
    renaming = facts.renaming(call, given, "truncation")
    if renaming is None:
        return fix, True, (f"{help or EncodePlusRemoved.help}; and drop `truncation_strategy=` (the tokenizer call raises "
                           "TypeError on it; `truncation=` takes the same strategy names)")
    return [*fix, Replacement(*renaming)], unsafe, help

