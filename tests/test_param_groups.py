"""An optimizer's parameters with no per-group rates (facts/trainable.py: `params_without_rates`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from bertlint.facts import Facts, params_without_rates


def without_rates(lines: str) -> bool:
    source = "import torch\nfrom transformers import AutoModel\nmodel = AutoModel.from_pretrained('bert-base-uncased')\n" + textwrap.dedent(lines)
    facts = Facts(cst.parse_module(source), source)
    optimizer = [c for c in facts.calls if c.qualname == "torch.optim.AdamW"][-1]
    return params_without_rates(facts, optimizer)


def test_parameters_a_filter_of_them_and_groups_without_lr():
    assert without_rates("opt = torch.optim.AdamW(model.parameters())\n")
    assert without_rates("opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, model.parameters()))\n")
    assert without_rates("params = model.parameters()\nopt = torch.optim.AdamW(params)\n")
    assert without_rates('groups = [{"params": model.bert.parameters()}, {"params": model.classifier.parameters(), "weight_decay": 0.0}]\nopt = torch.optim.AdamW(groups)\n')


def test_a_group_with_its_own_rate_or_a_helpers_result_may_carry_rates():
    assert not without_rates('groups = [{"params": model.bert.parameters(), "lr": 1e-5}]\nopt = torch.optim.AdamW(groups)\n')
    assert not without_rates("opt = torch.optim.AdamW(build_groups(model))\n")
    assert not without_rates("opt = torch.optim.AdamW([p for p in model.parameters()])\n")
