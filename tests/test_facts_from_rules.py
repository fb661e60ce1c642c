"""Facts moved out of rules (issue 21: a rule is a short query): each answers one question about a file's source."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from bertlint.facts import (
    Facts, calls_reached, eos_as_pad, eos_in_data, epoch_loop, iterated_loader, model_input_ids, only_evaluated, optimised_models, same_tokenizer,
    tokens_from_tokenize, trained_trainers,
)


def facts_of(source: str) -> Facts:
    source = textwrap.dedent(source)
    return Facts(cst.parse_module(source), source)


def call_named(facts: Facts, callee: str, index: int = 0):
    return [c for c in facts.calls if facts.text(c.node.func) == callee][index]


# -- the epoch loop and the calls a site runs (BL307, and the gradient reset of a training loop) -----------------------

def test_epoch_loop_is_the_outermost_loop_of_the_same_function():
    facts = facts_of("""
    for run in range(2):
        def train():
            for epoch in range(3):
                for batch in loader:
                    loss.backward()
    """)
    backward = call_named(facts, "loss.backward")
    epoch = epoch_loop(facts, backward.loops[-1])
    assert isinstance(epoch, cst.For) and facts.text(epoch.target) == "epoch"


def test_epoch_loop_of_a_statement_in_no_loop_is_itself():
    facts = facts_of("x = 1\n")
    stmt = facts.module.body[0]
    assert epoch_loop(facts, stmt) is stmt


def test_calls_reached_follows_the_files_functions_and_methods_by_name_a_few_calls_deep():
    facts = facts_of("""
    def evaluate():
        model.eval()
        helper()

    def helper():
        log()

    class T:
        def validate(self):
            net.eval()

    evaluate()
    trainer.validate()
    torch.save(model)
    """)
    assert sorted(facts.text(c.node.func) for c in calls_reached(facts, call_named(facts, "evaluate"))) == ["helper", "log", "model.eval"]
    assert [facts.text(c.node.func) for c in calls_reached(facts, call_named(facts, "trainer.validate"))] == ["net.eval"]
    assert calls_reached(facts, call_named(facts, "torch.save")) == []
    assert [facts.text(c.node.func) for c in calls_reached(facts, call_named(facts, "evaluate"), depth=1)] == ["model.eval", "helper"]


# -- models an optimizer trains (BL307) ---------------------------------------------------------------------------------

def test_optimised_models_direct_and_through_a_grouped_parameters_name():
    facts = facts_of("""
    import torch
    from transformers import AutoModel
    student = AutoModel.from_pretrained("bert-base-uncased")
    teacher = AutoModel.from_pretrained("bert-large-uncased")
    groups = [{"params": [p for n, p in student.named_parameters() if "bias" not in n]}]
    opt = torch.optim.AdamW(groups, lr=1e-5)
    teacher.eval()
    """)
    loads = {facts.text(c.node.args[0].value): id(c) for c in facts.calls if c.method == "from_pretrained"}
    assert optimised_models(facts) == frozenset({loads['"bert-base-uncased"']})


def test_optimised_models_none_where_the_parameters_feed_no_optimizer():
    facts = facts_of("""
    import torch
    from transformers import AutoModel
    model = AutoModel.from_pretrained("bert-base-uncased")
    n = sum(p.numel() for p in model.parameters())
    opt = torch.optim.SGD([w], lr=0.1)
    """)
    assert optimised_models(facts) == frozenset()


# -- the pad token set to EOS, and EOS in the examples (BL211) -------------------------------------------------------

def test_same_tokenizer_by_load_or_by_name():
    facts = facts_of("""
    from transformers import AutoTokenizer, DataCollatorForLanguageModeling
    tok = AutoTokenizer.from_pretrained("gpt2")
    other = AutoTokenizer.from_pretrained("gpt2")
    tok.pad_token = tok.eos_token
    c1 = DataCollatorForLanguageModeling(tok, mlm=False)
    c2 = DataCollatorForLanguageModeling(other, mlm=False)
    """)
    [store] = eos_as_pad(facts)
    first, second = facts.calls_to("transformers.DataCollatorForLanguageModeling")
    assert same_tokenizer(facts, store, first.arg(0).value, first.scope, first.order)
    assert not same_tokenizer(facts, store, second.arg(0).value, second.scope, second.order)
    unknown = facts_of("""
    self.tok.pad_token = self.tok.eos_token
    collator = DataCollatorForLanguageModeling(self.tok, mlm=False)
    """)
    [store] = eos_as_pad(unknown)
    call = call_named(unknown, "DataCollatorForLanguageModeling")
    assert same_tokenizer(unknown, store, call.arg(0).value, call.scope, call.order)


def test_eos_in_data_when_a_text_or_ids_take_the_eos_not_when_it_is_only_set_compared_printed_or_a_keyword():
    setting_only = """
    tok.pad_token = tok.eos_token
    print(tok.eos_token)
    if x == tok.eos_token_id:
        pass
    model.config.eos_token_id = tok.eos_token_id
    out = model.generate(ids, pad_token_id=tok.eos_token_id)
    """
    assert not eos_in_data(facts_of(setting_only))
    assert eos_in_data(facts_of(setting_only + 'text = example + tok.eos_token\n'))
    assert eos_in_data(facts_of(setting_only + 'ids = ids + [tok.eos_token_id]\n'))
    assert eos_in_data(facts_of("texts = [tok.apply_chat_template(m, tokenize=False) for m in chats]\n"))
    assert not eos_in_data(facts_of("prompt = tok.apply_chat_template(m, add_generation_prompt=True)\n"))


def test_only_evaluated_collator_and_trained_trainers():
    source = """
    from transformers import Trainer, DataCollatorForLanguageModeling
    collator = DataCollatorForLanguageModeling(tok, mlm=False)
    evaluator = Trainer(model=model, data_collator=collator)
    evaluator.evaluate()
    """
    facts = facts_of(source)
    [collator] = facts.calls_to("transformers.DataCollatorForLanguageModeling")
    assert trained_trainers(facts) == frozenset()
    assert only_evaluated(facts, collator)
    trained = facts_of(source + "evaluator.train()\n")
    [collator] = trained.calls_to("transformers.DataCollatorForLanguageModeling")
    assert trained_trainers(trained) == frozenset({id(trained.trainers[0])})
    assert not only_evaluated(trained, collator)
    unused = facts_of("collator = DataCollatorForLanguageModeling(tok, mlm=False)\n")
    assert not only_evaluated(unused, unused.calls[0])  # handed to no Trainer: not known to be evaluation-only


# -- the DataLoader a training loop iterates (BL310) -------------------------------------------------------------------

def test_iterated_loader_through_enumerate_and_tqdm():
    facts = facts_of("""
    from torch.utils.data import DataLoader
    from tqdm import tqdm
    loader = DataLoader(dataset, batch_size=8)
    for step, batch in enumerate(tqdm(loader)):
        pass
    for batch in tqdm(enumerate(loader)):
        pass
    for row in rows:
        pass
    while True:
        pass
    """)
    [made] = [c for c in facts.calls if c.qualname == "torch.utils.data.DataLoader"]
    fors = [s for s in facts.module.body if isinstance(s, (cst.For, cst.While))]
    assert [iterated_loader(facts, s) for s in fors] == [made, made, None, None]


# -- ids built by hand from `tokenize()` (BL103) ------------------------------------------------------------------------

def test_tokens_from_tokenize_unless_a_special_token_is_added_by_hand():
    def converts(source: str) -> list[bool]:
        facts = facts_of(source)
        return [tokens_from_tokenize(facts, c) for c in facts.calls if c.method == "convert_tokens_to_ids"]

    head = """
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained("bert-base-uncased")
    """
    assert converts(head + """
    tokens = tok.tokenize(text)
    a = tok.convert_tokens_to_ids(tokens)
    b = tok.convert_tokens_to_ids(["[CLS]"] + tok.tokenize(text) + ["[SEP]"])
    c = tok.convert_tokens_to_ids([tok.cls_token] + tokens)
    d = tok.convert_tokens_to_ids(words)
    e = tok.convert_tokens_to_ids()
    """) == [True, False, False, False, False]


def test_model_input_ids_are_forward_arguments_and_input_ids_entries_of_the_given_functions():
    facts = facts_of("""
    from transformers import AutoModel
    model = AutoModel.from_pretrained("bert-base-uncased")

    def item(i):
        return {"input_ids": ids_of(i), "labels": y}

    def other(i):
        return {"input_ids": elsewhere(i)}

    out = model(batch_ids, attention_mask=mask)
    """)
    item = next(fn for fn, _ in facts.functions["item"])
    assert sorted(facts.text(node) for node, _, _ in model_input_ids(facts, [item])) == ["batch_ids", "ids_of(i)"]
    assert [facts.text(node) for node, _, _ in model_input_ids(facts, [])] == ["batch_ids"]


# -- the checkpoints a run may train (BL501) -------------------------------------------------------------------------

def test_trained_models_lists_each_checkpoint_a_branch_may_load_and_trained_model_none():
    from bertlint.facts import trained_model, trained_models
    facts = facts_of("""
    import torch
    from transformers import BertModel, RobertaModel
    class Classifier(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder
    def main(kind):
        if kind == "bert":
            encoder = BertModel.from_pretrained("bert-large-uncased")
        else:
            encoder = RobertaModel.from_pretrained("roberta-large")
        model = Classifier(encoder)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-5)
        for batch in loader:
            model(batch).sum().backward()
            optimizer.step()
    main("bert")
    """)
    assert [info.id for _, info in trained_models(facts)] == ["bert-large-uncased", "roberta-large"]
    assert trained_model(facts) is None  # two checkpoints: not one


def test_held_models_of_a_module_handed_a_name_bound_on_branches_are_each_branch_s_model():
    from bertlint.facts.trainable import held_models
    facts = facts_of("""
    import torch
    from transformers import BertModel, RobertaModel
    if flag:
        encoder = BertModel.from_pretrained("bert-large-uncased")
    else:
        encoder = RobertaModel.from_pretrained("roberta-large")
    model = Classifier(encoder)
    """)
    module = call_named(facts, "Classifier")
    assert set(held_models(facts, module)) == {id(load.call) for load in facts.model_loads}


def test_trained_models_is_empty_when_every_optimizer_updates_the_file_s_own_tensors():
    from bertlint.facts import trained_models
    facts = facts_of("""
    import torch
    from transformers import BertModel
    model = BertModel.from_pretrained("bert-large-uncased")
    dummy = torch.randn(1, 8, requires_grad=True)
    optimizer = torch.optim.Adam([dummy], lr=0.1)
    model(inputs_embeds=dummy).last_hidden_state.sum().backward()
    optimizer.step()
    """)
    assert trained_models(facts) == []


# -- a training set the file bounds to a handful of examples (BL501) ------------------------------------------------

HANDFUL = """
import pandas as pd
from datasets import Dataset, DatasetDict
from transformers import AutoModelForSequenceClassification, Trainer
model = AutoModelForSequenceClassification.from_pretrained("roberta-large")
records = [{"text": "a", "label": 1}, {"text": "b", "label": 0}]
frame = FRAME
splits = DatasetDict({"train": Dataset.from_pandas(frame), "test": Dataset.from_pandas(pd.read_csv("big.csv"))})
Trainer(model=model, train_dataset=splits.map(f, batched=True)[SPLIT]).train()
"""


def _handful(frame: str, split: str) -> str:
    return HANDFUL.replace("FRAME", frame).replace("SPLIT", repr(split))


def test_a_dataset_dict_split_of_a_frame_of_constant_records_is_a_handful():
    from bertlint.facts import trains_on_a_handful
    assert trains_on_a_handful(facts_of(_handful("pd.DataFrame(records)", "train")))
    assert trains_on_a_handful(facts_of(_handful('pd.DataFrame({"text": ["a", "b", "c"], "label": [1, 0, 1]})', "train")))


def test_the_other_split_or_a_frame_that_gains_rows_is_no_handful():
    from bertlint.facts import trains_on_a_handful
    assert not trains_on_a_handful(facts_of(_handful("pd.DataFrame(records)", "test")))  # the CSV's split
    assert not trains_on_a_handful(facts_of(_handful("pd.concat([pd.DataFrame(records)] * 1000)", "train")))
    assert not trains_on_a_handful(facts_of(_handful("pd.DataFrame([{'text': str(i)} for i in range(10000)])", "train")))


def test_trained_checkpoints_are_those_an_optimizer_gets_where_the_file_shows_any():
    from bertlint.facts import trained_checkpoints
    facts = facts_of("""
    import torch
    from transformers import AutoModelForSequenceClassification, T5ForConditionalGeneration
    scorer = T5ForConditionalGeneration.from_pretrained("t5-small")
    score = scorer(input_ids=ids, labels=ids).loss.item()
    model = AutoModelForSequenceClassification.from_pretrained("roberta-large")
    again = AutoModelForSequenceClassification.from_pretrained("roberta-large")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model(**batch).loss.backward()
    optimizer.step()
    """)
    assert [info.id for _, info in trained_checkpoints(facts)] == ["roberta-large"]  # once, by its first load; the scorer is not it
    lone = facts_of("""
    import torch
    from transformers import AutoModel
    model = AutoModel.from_pretrained("t5-small")
    model(**batch).last_hidden_state.sum().backward()
    """)
    assert [info.id for _, info in trained_checkpoints(lone)] == ["t5-small"]  # one checkpoint: no optimizer need be seen


@pytest.mark.parametrize("frame", [
    'pd.read_csv("big.csv").iloc[:1]',
    'pd.read_csv("big.csv")[:100]',
    'pd.read_csv("big.csv").iloc[1000:1200]',
    'pd.read_csv("big.csv").head(50)',
    'pd.read_csv("big.csv").head()',  # pandas' default: 5 rows
    'pd.read_csv("big.csv").sample(n=200, random_state=0).reset_index(drop=True)',
    'pd.read_csv("big.csv").dropna().tail(10)[["text", "label"]]',
])
def test_a_frame_bounded_by_its_rows_is_a_handful(frame: str):
    from bertlint.facts import trains_on_a_handful
    assert trains_on_a_handful(facts_of(_handful(frame, "train")))


@pytest.mark.parametrize("frame", [
    'pd.read_csv("big.csv")',
    'pd.read_csv("big.csv").iloc[:5000]',  # more than a handful
    'pd.read_csv("big.csv").iloc[:-1]',  # every row but one
    'pd.read_csv("big.csv").iloc[100:]',
    'pd.read_csv("big.csv").loc[:, ["text", "label"]]',
    'pd.read_csv("big.csv").sample(frac=1.0)',
    'pd.concat([pd.read_csv("big.csv").head(5)] * 1000)',  # rows joined again
    'pd.read_csv("big.csv").head(n_rows)',  # not known
])
def test_a_frame_not_bounded_to_a_handful_is_no_handful(frame: str):
    from bertlint.facts import trains_on_a_handful
    assert not trains_on_a_handful(facts_of(_handful(frame, "train")))


def test_a_named_frame_bounded_before_the_dataset_is_a_handful():
    from bertlint.facts import trains_on_a_handful
    frame = 'pd.read_csv("big.csv")\nframe = frame.head(3)'
    assert trains_on_a_handful(facts_of(_handful(frame, "train")))


@pytest.mark.parametrize(("frame", "examples"), [
    ('pd.read_csv("big.csv").iloc[:1]', 1),
    ('pd.read_csv("big.csv").head(50).head(80)', 50),  # the least bound on the way
    ('pd.read_csv("big.csv").iloc[10:12]', 2),
    ('pd.read_csv("big.csv")', None),
])
def test_examples_trained_is_the_bound_of_the_training_set(frame, examples):
    from bertlint.facts import examples_trained
    assert examples_trained(facts_of(_handful(frame, "train"))) == examples
