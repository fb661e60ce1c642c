"""Facts moved out of rules (issue 21: a rule is a short query): each answers one question about a file's source."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import Facts, calls_reached, epoch_loop, optimised_models


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
