"""How long the texts a tokenizer call encodes can be (facts/texts.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import SPECIAL_TOKENS_ADDED, Facts, longest_text, token_bound


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def tokenizer_call(facts: Facts):
    return facts.tokenizer_calls[-1]


HEAD = "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"


def test_known_texts_bound_the_tokens_by_their_utf8_bytes_plus_specials():
    facts = facts_of(HEAD + 'texts = ["héllo", "hi"]\ntok(texts, padding="max_length", max_length=8)\n')
    assert token_bound(facts, tokenizer_call(facts)) == len("héllo".encode()) + 1 + SPECIAL_TOKENS_ADDED


def test_a_pair_adds_both_sides_and_repeats_and_comprehensions_count_their_element():
    facts = facts_of(HEAD + 'n = int(input())\ntok([""] * n, ["ab" for _ in range(n)], padding="max_length", max_length=8)\n')
    assert token_bound(facts, tokenizer_call(facts)) == (0 + 1) + (2 + 1) + SPECIAL_TOKENS_ADDED


def test_an_unknown_text_gives_no_bound():
    facts = facts_of(HEAD + 'texts = open("a.txt").read().split()\ntok(texts, padding="max_length", max_length=8)\n')
    call = tokenizer_call(facts)
    assert token_bound(facts, call) is None
    assert longest_text(facts, call.arg(0, "text").value, call.scope, call.order) is None


def test_a_pair_without_a_first_text_gives_no_bound():
    facts = facts_of(HEAD + 'tok(text_pair="ab", padding="max_length", max_length=8)\n')
    assert token_bound(facts, tokenizer_call(facts)) is None
