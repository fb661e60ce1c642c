"""Library facts and Python rules added for the unknown sites of the reach sample (benchmarks/reach_judgments_s22.csv):
f-strings folded as Python formats them, `apply_chat_template(..., tokenize=False)` as one text, sklearn
`train_test_split` keeping several texts, the tokenizer classes of transformers 5 not named "Tokenizer", and
functions named for what they do to a tokenizer (`set_tokenizer(tok)`) that are no tokenizer call."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from conftest import probe

from bertlint.facts import UNKNOWN, Facts

HEADER = """\
import pandas as pd
from sklearn.model_selection import train_test_split
from transformers import AutoTokenizer, MistralCommonBackend, PilBackend
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
a, b, n, w = "x", "y", 3, 1.5
"""


def facts_of(body: str) -> Facts:
    source = HEADER + textwrap.dedent(body)
    return Facts(cst.parse_module(source), source)


@pytest.mark.parametrize("expr", [
    'f"{a}/{b}"', 'f"{a!r}-{n:03d}-{w:.2f}"', 'f"{{{a}}}"', 'rf"\\d{a}"', 'f"{None}{True}"', 'f"""{a}\n"""', 'f"{n:>5}"',
])
def test_an_f_string_of_constants_is_the_string_python_makes(expr):
    facts = facts_of(f"probe(v={expr})\n")
    assert facts.value(*probe(facts, "v")[:2]) == eval(expr, {}, {"a": "x", "b": "y", "n": 3, "w": 1.5})


@pytest.mark.parametrize("expr", [
    'f"{c}"',  # unknown name
    'f"{a=}"',  # self-documenting: the source text
    'f"{n:{n}}"',  # a field in the spec
    'f"\\n{a}"',  # an escape
    'f"{[a]}"',  # a list's formatting
    'f"{n:q}"',  # an invalid spec raises
])
def test_an_f_string_is_unknown_where_a_part_is(expr):
    facts = facts_of(f"probe(v={expr})\n")
    assert facts.value(*probe(facts, "v")[:2]) is UNKNOWN


def test_an_f_string_checkpoint_is_the_load_s_checkpoint():
    facts = facts_of('model_id = f"{a}/{b}-merged"\nt2 = AutoTokenizer.from_pretrained(model_id)\n')
    load = [c for c in facts.tokenizer_loads if c.method == "from_pretrained"][-1]
    assert facts.value(load.arg(0).value, load.scope, order=load.order) == "x/y-merged"


CHAT = 'messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": question}]\n'


@pytest.mark.parametrize("call, expected", [
    ("tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)", False),  # one conversation: one string
    ("tok.apply_chat_template([messages, messages], tokenize=False)", UNKNOWN),  # several conversations: not followed
    ("tok.apply_chat_template(messages)", UNKNOWN),  # tokenized: ids or an encoding by version
    ("tok.apply_chat_template(unknown, tokenize=False)", UNKNOWN),  # what it holds is not known
])
def test_a_chat_template_rendered_to_text_is_one_text(call, expected):
    facts = facts_of(CHAT + f"text = {call}\nprobe(t=text)\n")
    assert facts.is_batch(*probe(facts, "t")) is expected


def test_train_test_split_keeps_several_texts():
    facts = facts_of("""
        texts, labels = [], []
        for line in open("data.txt"):
            texts.append(line)
            labels.append(0)
        df = pd.read_csv("x.csv")
        tr, te, ltr, lte = train_test_split(texts, labels, test_size=0.2)
        dtr, dte = train_test_split(df["text"])
        ctr, cte = train_test_split(["one", "two"])  # a part of two rows may be one
        probe(tr=tr, te=te, dtr=dtr, dte=dte, ctr=ctr, cte=cte)
    """)
    assert [facts.is_batch(*probe(facts, name)) for name in ("tr", "te", "dtr", "dte", "ctr", "cte")] == [True, True, True, True, UNKNOWN, UNKNOWN]


def test_transformers_5_tokenizer_backends_are_tokenizers():
    facts = facts_of('t = MistralCommonBackend.from_pretrained("mistralai/Ministral-3")\np = PilBackend()\nprobe(t=t, p=p)\n')
    assert facts.kind(*probe(facts, "t")).kind == "tokenizer"
    assert facts.kind(*probe(facts, "p")) is None


def test_a_function_named_for_what_it_does_to_a_tokenizer_is_no_tokenizer_call():
    facts = facts_of("""
        def run(handler, tokenizer, load_tokenizer):
            handler.set_tokenizer(tokenizer)
            other = load_tokenizer("bert-base-uncased")
            return tokenizer("one text")
    """)
    assert [facts.text(c.node.func) for c in facts.tokenizer_calls] == ["tokenizer"]
