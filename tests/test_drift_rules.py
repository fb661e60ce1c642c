"""BL601-BL606: what each target version gets (silent / warning / error), the fixes, and the version data."""

from __future__ import annotations

import textwrap

import pytest

from bertlint import versions
from bertlint.fixer import apply_edits
from conftest import lint_text


def findings(source: str, version: str, code: str) -> list:
    return [f for f in lint_text(source, transformers_version=version) if f.code == code]


def status(source: str, version: str, code: str) -> list[tuple[str, bool]]:
    """(severity, has a fix) per finding of `code`."""
    return [(f.severity, f.fix is not None) for f in findings(source, version, code)]


def fixed(source: str, version: str, code: str) -> str:
    """Apply `code`'s safe fixes pass after pass, as `--fix` does, until none is left."""
    text = textwrap.dedent(source)
    passes = 0
    while True:
        text, applied = apply_edits(text, findings(text, version, code), {"safe"})
        if not applied:
            break
        passes += 1
    assert passes, "no fix applied"
    return text


TA = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', {kw})\n"


# --------------------------------------------------------------------------- BL601


@pytest.mark.parametrize(
    ("kw", "version", "expected"),
    [
        ("evaluation_strategy='epoch'", "4.40", []),  # eval_strategy does not exist yet: the old name is right
        ("evaluation_strategy='epoch'", "4.41", [("warning", True)]),
        ("evaluation_strategy='epoch'", "4.50.3", [("warning", True)]),  # announced for 4.46, really removed in 4.51
        ("evaluation_strategy='epoch'", "4.51", [("error", True)]),
        ("no_cuda=True", "4.31", []),
        ("no_cuda=True", "4.40", [("warning", True)]),
        ("no_cuda=True", "5.0", [("error", True)]),
        ("overwrite_output_dir=True", "4.57", []),  # never deprecated: silent until it is gone
        ("overwrite_output_dir=True", "5.0", [("error", False)]),
        ("fp16_backend='apex'", "4.12", []),
        ("fp16_backend='apex'", "4.57", [("warning", True)]),
        ("fp16_backend='apex'", "5.0", [("error", False)]),  # half_precision_backend went too
        ("warmup_ratio=0.1", "4.57", []),
        ("warmup_ratio=0.1", "5.0", [("warning", False)]),  # warmup_steps takes another value: no rename
        ("warmup_ratio=0.1", "5.15", [("error", False)]),
        ("group_by_length=True", "5.1", []),
        ("group_by_length=True", "5.2", [("error", False)]),
        ("eval_strategy='epoch'", "5.23", []),
        ("use_cpu=True", "5.23", []),
    ],
)
def test_bl601_by_version(kw, version, expected):
    assert status(TA.format(kw=kw), version, "BL601") == expected


def test_bl601_messages_name_the_version_and_the_error():
    [removed] = findings(TA.format(kw="evaluation_strategy='epoch'"), "5.0", "BL601")
    assert removed.message == (
        "`evaluation_strategy` was removed in 4.51 (target 5.0 from transformers-version in the settings): this line raises "
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'"
    )
    assert removed.help == "use `eval_strategy=` instead"
    [deprecated] = findings(TA.format(kw="no_cuda=True"), "4.46", "BL601")
    assert deprecated.message == "`no_cuda` is deprecated since 4.32 and removed in 5.0 (target 4.46 from transformers-version in the settings)"


def test_a_line_raises_on_its_first_missing_keyword_or_name():
    """Python stops a call at the first keyword it does not take and an import at the first name the module lacks: a
    later finding of the same line says which error the line raises as written; the first, and a line with one, their own."""
    call = "from transformers import TrainingArguments\nTrainingArguments(output_dir='o', logging_dir='l', evaluation_strategy='epoch')\n"
    first, second = findings(call, "5.24", "BL601")
    assert first.message.endswith("unexpected keyword argument 'logging_dir'")
    assert second.message.endswith("unexpected keyword argument 'logging_dir' (`logging_dir`, passed before `evaluation_strategy`, is removed too)")
    [alone] = findings(TA.format(kw="evaluation_strategy='epoch'"), "5.24", "BL601")
    assert alone.message.endswith("unexpected keyword argument 'evaluation_strategy'")
    imports = "from transformers import BertModel, TFBertTokenizer, TFBertModel, AdamW\n"
    tokenizer, model = findings(imports, "5.24", "BL606")
    [adamw] = findings(imports, "5.24", "BL604")
    assert tokenizer.message.endswith("cannot import name 'TFBertTokenizer' from 'transformers'")
    suffix = "cannot import name 'TFBertTokenizer' from 'transformers' (`TFBertTokenizer`, imported before `{}`, is missing too)"
    assert model.message.endswith(suffix.format("TFBertModel")) and adamw.message.endswith(suffix.format("AdamW"))
    [own] = findings("from transformers import AdamW, BertModel\n", "5.24", "BL604")  # BertModel is there: AdamW's own error
    assert own.message.endswith("cannot import name 'AdamW' from 'transformers'")


def test_bl601_fix_renames_only_the_keyword():
    src = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', no_cuda=True)  # smoke\n"
    assert fixed(src, "4.40", "BL601") == src.replace("no_cuda", "use_cpu")


def test_bl601_help_follows_the_replacement_chain():
    kw = "evaluate_during_training=True"
    [old] = findings(TA.format(kw=kw), "4.40", "BL601")
    [new] = findings(TA.format(kw=kw), "4.46", "BL601")
    assert old.help.startswith("use `evaluation_strategy=` instead") and new.help.startswith("use `eval_strategy=` instead")
    assert old.fix is None and new.fix is None  # True -> "steps" is not a rename


@pytest.mark.parametrize(
    "kw",
    [
        "per_gpu_train_batch_size=8, per_device_train_batch_size=4",  # the replacement is already there
        "no_cuda=True, **extra",  # it may be in there
    ],
)
def test_bl601_no_fix_that_could_repeat_a_keyword(kw):
    assert [fix for _, fix in status(TA.format(kw=kw), "4.40", "BL601")] == [False]


def test_bl601_resolves_aliases_and_subclasses_of_the_arguments():
    src = """
        import transformers as hf
        from transformers import Seq2SeqTrainingArguments as S2S
        from trl import SFTConfig
        a = hf.TrainingArguments(output_dir="o", no_cuda=True)
        b = S2S(output_dir="o", no_cuda=True)
        c = SFTConfig(output_dir="o", no_cuda=True)
    """
    found = findings(src, "5.0", "BL601")
    assert [f.line for f in found] == [5, 6, 7]
    assert "Seq2SeqTrainingArguments.__init__() got an unexpected keyword argument 'no_cuda'" in found[1].message
    assert "SFTConfig.__init__()" in found[2].message


def test_bl601_silent_on_a_local_class():
    src = """
        from transformers import TrainingArguments as HfArgs

        def TrainingArguments(**kw):
            return kw

        a = TrainingArguments(no_cuda=True, evaluation_strategy="epoch")
        b = HfArgs(**{"use_cpu": True})
    """
    assert findings(src, "5.0", "BL601") == []


def test_bl601_sees_the_keys_of_a_spread_dict_where_they_are_spelt():
    """A `**mapping` of known keys passes them (Python's binding): the finding sits at the dict's key, a rename fix
    only where the display reaches this call alone and the new name is certainly not passed."""
    src = """
        from transformers import TrainingArguments

        cfg = {"output_dir": "o",
               'evaluation_strategy': "epoch"}
        args = TrainingArguments(**cfg)
    """
    found = findings(src, "5.0", "BL601")
    assert [(f.line, f.column) for f in found] == [(5, 8)]
    assert "the `TrainingArguments(...)` it is passed to raises" in found[0].message
    assert "'eval_strategy': \"epoch\"" in fixed(src, "5.0", "BL601")
    shared = src + "    other = TrainingArguments(**cfg)\n"
    assert [(f.line, f.fix is None) for f in findings(shared, "5.0", "BL601")] == [(5, True)]  # one finding (same key), no fix
    built = src.replace("args = ", "cfg.update(seed=1)\n        args = ")  # changed since: reported at the `**` argument
    assert [(f.line, f.column, f.fix is None) for f in findings(built, "5.0", "BL601")] == [(7, 26, True)]
    unknown = src.replace("**cfg)", "**{**cfg, **extra})")  # a mapping whose keys are not all known: nothing said
    assert findings(unknown, "5.0", "BL601") == []
    beside = src.replace("**cfg)", "**cfg, **extra)")  # cfg's keys are passed whatever another `**` holds
    assert [f.line for f in findings(beside, "5.0", "BL601")] == [5]
    twice = src.replace("**cfg)", 'evaluation_strategy="no", **cfg)')  # given twice: a TypeError; only the explicit one
    assert [f.line for f in findings(twice, "5.0", "BL601")] == [6]


def test_bl601_covers_every_field_transformers_5_removed():
    """The AST diff of the 4.57.6 and 5.0.0 wheels (research outputs/ta_fields_diff.txt); `_n_gpu` is not an init argument."""
    removed_in_5 = """adafactor fp16_backend fp16_opt_level fsdp_min_num_params fsdp_transformer_layer_cls_to_wrap
        half_precision_backend include_inputs_for_metrics include_tokens_per_second jit_mode_eval mp_parameters no_cuda
        overwrite_output_dir past_index per_gpu_eval_batch_size per_gpu_train_batch_size push_to_hub_model_id
        push_to_hub_organization push_to_hub_token ray_scope save_safetensors torchdynamo tpu_metrics_debug tpu_num_cores
        use_legacy_prediction_loop use_mps_device""".split()
    table, _ = versions.keywords("TrainingArguments")
    assert {name: table[name].removed for name in removed_in_5} == {name: (5, 0, 0) for name in removed_in_5}


@pytest.mark.parametrize("group", ["TrainingArguments", "Trainer"])
def test_keyword_data_is_consistent(group):
    table, error = versions.keywords(group)
    assert "{name}" in error and "{cls}" in error
    for entry in table.values():
        assert entry.source, entry.name
        if entry.deprecated and entry.removed:
            assert entry.deprecated < entry.removed, entry.name
        if entry.rename:
            assert entry.replacement, entry.name
            replacement = table.get(entry.replacement)
            assert replacement is None or replacement.exists(entry.deprecated or entry.removed), entry.name


# --------------------------------------------------------------------------- BL602

TRAINER = "from transformers import Trainer\ntrainer = Trainer(model=m, {kw})\n"


@pytest.mark.parametrize(
    ("version", "expected"),
    [("4.45", []), ("4.46", [("warning", True)]), ("4.57", [("warning", True)]), ("5.0", [("error", True)])],
)
def test_bl602_by_version(version, expected):
    assert status(TRAINER.format(kw="tokenizer=tok"), version, "BL602") == expected


def test_bl602_fix_and_message():
    src = TRAINER.format(kw="tokenizer=tok")
    assert fixed(src, "5.0", "BL602") == src.replace("tokenizer=", "processing_class=")
    [finding] = findings(src, "5.0", "BL602")
    assert finding.message.endswith("TypeError: Trainer.__init__() got an unexpected keyword argument 'tokenizer'")


def test_bl602_no_fix_when_both_names_are_passed():
    assert status(TRAINER.format(kw="tokenizer=tok, processing_class=tok"), "4.46", "BL602") == [("warning", False)]


def test_bl602_subclasses_inherit_the_keyword_unless_they_define_init():
    src = """
        from transformers import Seq2SeqTrainer, Trainer
        from trl import SFTTrainer

        class Plain(Trainer):
            pass

        class Deeper(Plain):
            pass

        class OwnInit(Trainer):
            def __init__(self, *args, tokenizer=None, **kwargs):
                super().__init__(*args, processing_class=tokenizer, **kwargs)

        class Weighted(Trainer):  # the usual class-weights trainer: `tokenizer` goes on in **kwargs
            def __init__(self, *args, class_weights=None, **kwargs):
                super().__init__(*args, **kwargs)
                self.class_weights = class_weights

        class Popping(Trainer):  # takes `tokenizer` out of kwargs itself: no telling
            def __init__(self, *args, **kwargs):
                self.tok = kwargs.pop("tokenizer", None)
                super().__init__(*args, **kwargs)

        m, tok, w = None, None, None  # defined: an undefined name would stop the run before the calls
        a = Deeper(model=m, tokenizer=tok)
        b = OwnInit(model=m, tokenizer=tok)
        c = SFTTrainer(model=m, tokenizer=tok)
        d = Seq2SeqTrainer(model=m, tokenizer=tok)
        e = Weighted(model=m, tokenizer=tok, class_weights=w)
        f = Popping(model=m, tokenizer=tok)
    """
    found = findings(src, "5.0", "BL602")
    assert [f.line for f in found] == [26, 29, 30]  # a, d and e
    assert "Seq2SeqTrainer.__init__()" in found[1].message and "Trainer.__init__()" in found[2].message


# --------------------------------------------------------------------------- BL603

LOSS = """
from transformers import Trainer

class MyTrainer(Trainer):
    def compute_loss{signature}:
        return model(**inputs).loss
"""


@pytest.mark.parametrize(
    ("signature", "version", "expected"),
    [
        ("(self, model, inputs, return_outputs=False)", "4.45", []),
        ("(self, model, inputs, return_outputs=False)", "4.46", [("error", True)]),
        ("(self, model, inputs, return_outputs=False)", "5.23", [("error", True)]),
        ("(self, model, inputs, return_outputs=False, **kwargs)", "5.23", []),
        ("(self, model, inputs, return_outputs=False, num_items_in_batch=None)", "5.23", []),
        ("(self, model, inputs, *, return_outputs=False, num_items_in_batch=None)", "5.23", []),
        ("(self, model, inputs, /)", "5.23", [("error", False)]),  # after `/` alone there is nowhere safe to add it
    ],
)
def test_bl603_by_signature_and_version(signature, version, expected):
    assert status(LOSS.format(signature=signature), version, "BL603") == expected


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("(self, model, inputs, return_outputs=False)", "(self, model, inputs, return_outputs=False, num_items_in_batch=None)"),
        ("(self, model, inputs, return_outputs: bool = False)", "(self, model, inputs, return_outputs: bool = False, num_items_in_batch=None)"),
        ("(self, model, inputs)", "(self, model, inputs, num_items_in_batch=None)"),
        ("(self, model, inputs, *args)", "(self, model, inputs, *args, num_items_in_batch=None)"),
        (
            "(\n        self,\n        model,\n        inputs,  # a batch\n        return_outputs=False,\n    )",
            "(\n        self,\n        model,\n        inputs,  # a batch\n        return_outputs=False, num_items_in_batch=None,\n    )",
        ),
    ],
)
def test_bl603_fix_appends_the_parameter(before, after):
    src = LOSS.format(signature=before)
    assert fixed(src, "5.23", "BL603") == textwrap.dedent(src).replace(before, after)


def test_bl603_message_names_the_class_and_the_caller():
    [finding] = findings(LOSS.format(signature="(self, model, inputs, return_outputs=False)"), "4.46.3", "BL603")
    assert finding.message == (
        "`compute_loss` cannot take `num_items_in_batch`, which `Trainer.training_step` passes from 4.46 "
        "(target 4.46.3 from transformers-version in the settings): the run dies with "
        "TypeError: MyTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'"
    )
    assert (finding.line, finding.column) == (5, 9)


def test_bl603_own_training_step_defers_to_prediction_step():
    src = """
        from transformers import Trainer

        class Base(Trainer):
            def training_step(self, model, inputs, num_items_in_batch=None):
                return super().training_step(model, inputs, num_items_in_batch)

        class MyTrainer(Base):
            def compute_loss(self, model, inputs, return_outputs=False):
                return model(**inputs).loss
    """
    assert status(src, "4.56", "BL603") == []
    [finding] = findings(src, "4.57", "BL603")
    assert "`Trainer.prediction_step` passes from 4.57" in finding.message


def test_bl603_only_trainer_subclasses():
    src = """
        import transformers
        from trl import SFTTrainer

        class Helper:
            def compute_loss(self, model, inputs, return_outputs=False):
                return 0

        class Sft(SFTTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return 0

        class Aliased(transformers.Seq2SeqTrainer):
            def compute_loss(self, model, inputs, return_outputs=False):
                return 0
    """
    assert [f.line for f in findings(src, "5.0", "BL603")] == [10, 14]


# --------------------------------------------------------------------------- BL604

ADAMW_CALL = "\nmodel = torch.nn.Linear(2, 2)\nopt = AdamW(model.parameters(), lr=2e-5)\n"


@pytest.mark.parametrize(("version", "expected"), [("4.15", []), ("4.16", [("warning", True)]), ("4.49", [("warning", True)]), ("4.50", [("error", True)])])
def test_bl604_by_version(version, expected):
    assert status("import torch\nfrom transformers import AdamW" + ADAMW_CALL, version, "BL604") == expected


def test_bl604_fix_single_import_keeps_the_old_defaults():
    src = "import torch\nfrom transformers import AdamW  # optimizer" + ADAMW_CALL
    assert fixed(src, "5.0", "BL604") == (
        "import torch\nfrom torch.optim import AdamW  # optimizer"
        "\nmodel = torch.nn.Linear(2, 2)\nopt = AdamW(model.parameters(), lr=2e-5, eps=1e-6, weight_decay=0.0)\n"
    )


def test_bl604_fix_splits_an_import_of_several_names():
    src = """
        import torch
        from transformers import (
            AdamW,
            get_linear_schedule_with_warmup,
        )
        from transformers.optimization import get_scheduler, AdamW as OldAdamW

        model = torch.nn.Linear(2, 2)
        opt = OldAdamW(model.parameters(), 2e-5, (0.9, 0.98), 1e-8, 0.01)
        head = AdamW(model.head.parameters(), lr=1e-3)
    """
    out = fixed(src, "5.0", "BL604")
    assert "from transformers import (\n    get_linear_schedule_with_warmup,\n)\nfrom torch.optim import AdamW\n" in out
    assert "from transformers.optimization import get_scheduler\nfrom torch.optim import AdamW as OldAdamW\n" in out
    assert "opt = OldAdamW(model.parameters(), 2e-5, (0.9, 0.98), 1e-8, 0.01)\n" in out  # every default given: unchanged


def test_bl604_fix_for_module_attribute_uses_torch_as_imported():
    src = """
        import torch as T
        import transformers

        model = T.nn.Linear(2, 2)
        opt = transformers.AdamW(model.parameters(), lr=2e-5, eps=1e-8)
        other = transformers.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    """
    out = fixed(src, "5.0", "BL604")
    assert "opt = T.optim.AdamW(model.parameters(), lr=2e-5, eps=1e-8, weight_decay=0.0)" in out
    assert "other = T.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, eps=1e-6)" in out
    [finding] = findings(src, "5.0", "BL604")  # once per name, on its first use
    assert (finding.line, finding.column) == (6, 7)
    assert finding.message.endswith("this line raises AttributeError: module transformers has no attribute AdamW")


REBOUND = "from transformers import get_scheduler, AdamW\nfrom torch.optim import AdamW\nopt = AdamW(params, lr=1e-5)\n"


def test_bl604_an_import_rebound_before_any_read_is_dropped_not_ported():
    """`from torch.optim import AdamW` binds the name anew before every read: the script runs torch's AdamW with its
    own defaults, so the help drops the name (no transformers defaults to keep) and so does the fix."""
    [finding] = findings(REBOUND, "5.24", "BL604")
    assert finding.help == ("drop `AdamW` from the import: the script never reads it "
                            "(`from torch.optim import AdamW` binds `AdamW` anew before every read)")
    assert "eps=1e-6" not in finding.help
    assert fixed(REBOUND, "5.24", "BL604") == "from transformers import get_scheduler\nfrom torch.optim import AdamW\nopt = AdamW(params, lr=1e-5)\n"


@pytest.mark.parametrize("src", [
    # read before the rebinding: transformers' AdamW runs
    "from transformers import AdamW\nopt = AdamW(params, lr=1e-5)\nfrom torch.optim import AdamW\n",
    # the rebinding may not run
    "from transformers import AdamW\nif fast:\n    from torch.optim import AdamW\nopt = AdamW(params, lr=1e-5)\n",
    # a function called before the rebinding reads transformers' AdamW
    "from transformers import AdamW\ndef make(p):\n    return AdamW(p)\nopt = make(params)\nfrom torch.optim import AdamW\n",
    # a function nothing calls in the file may run at any time (imported elsewhere): either binding
    "from transformers import AdamW\ndef make(p):\n    return AdamW(p)\nfrom torch.optim import AdamW\n",
    # the namespace handed over: any binding may be read
    "from transformers import AdamW\nfrom torch.optim import AdamW\nopt = globals()['AdamW'](params)\n",
], ids=["read-before", "conditional-rebinding", "function-called-before", "function-not-called", "globals"])
def test_bl604_an_import_some_read_may_see_keeps_the_porting_help(src):
    [finding] = findings(src, "5.24", "BL604")
    assert finding.help.startswith("use `torch.optim.AdamW` with `eps=1e-6, weight_decay=0.0`")


def test_bl604_a_function_called_only_after_the_rebinding_reads_the_new_binding():
    src = "from transformers import AdamW, get_scheduler\ndef make(p):\n    return AdamW(p)\nfrom torch.optim import AdamW\nopt = make(params)\n"
    [finding] = findings(src, "5.24", "BL604")
    assert finding.help.startswith("drop `AdamW` from the import: the script never reads it")


def test_bl604_an_import_alone_and_never_read_is_deleted_by_hand():
    """The import's only name: the help deletes the line, the fix does not (the line may be a block's only statement)."""
    src = "import torch\nfrom transformers import AdamW\nfrom torch.optim import AdamW\nopt = AdamW(params)\n"
    [finding] = findings(src, "5.24", "BL604")
    assert finding.help.startswith("delete the import: the script never reads it") and finding.fix is None


@pytest.mark.parametrize(
    "src",
    [
        "import torch\nfrom transformers import AdamW\nopt = AdamW(params, lr=1e-3, correct_bias=False)\n",  # torch has no correct_bias
        "import torch\nfrom transformers import AdamW\nopt = AdamW(params, 1e-3, (0.9, 0.99), 1e-6, 0.0, False)\n",
        "import torch\nfrom transformers import AdamW\nopt = AdamW(params, **cfg)\n",
        "import torch\nfrom transformers import AdamW\nOPT = AdamW\nopt = OPT(params, lr=1e-3)\n",  # used other than by a call
        "import transformers\nopt = transformers.AdamW(params, lr=1e-3)\n",  # torch is not imported
        "import torch\nif True:\n    from transformers import AdamW, get_scheduler\nopt = AdamW(params)\n",  # indentation unknown
    ],
)
def test_bl604_reported_without_a_fix_when_it_could_change_behaviour(src):
    assert status(src, "5.0", "BL604") == [("error", False)]


def test_bl604_messages():
    [finding] = findings("from transformers.optimization import AdamW\n", "4.50", "BL604")
    assert finding.message == (
        "`transformers.optimization.AdamW` was removed in 4.50 (target 4.50 from transformers-version in the settings): "
        "this line raises ImportError: cannot import name 'AdamW' from 'transformers.optimization'"
    )


def test_bl604_guarded_import_is_silent():
    src = """
        try:
            from transformers import AdamW
        except ImportError:
            from torch.optim import AdamW
    """
    assert findings(src, "5.0", "BL604") == []


# --------------------------------------------------------------------------- BL605


def test_bl605_auto_factories_only():
    src = """
        import transformers as tr
        from transformers import AutoConfig, AutoformerModel, AutoModelForCausalLM, BertModel, TFAutoModel

        class A(AutoModelForCausalLM): ...
        class B(tr.AutoTokenizer): ...
        class C(AutoConfig): ...
        class D(TFAutoModel): ...
        class E(AutoformerModel): ...
        class F(BertModel): ...
        class G(object, tr.AutoModel): ...
    """
    found = findings(src, "5.23", "BL605")
    assert [(f.line, f.column) for f in found] == [(5, 9), (6, 9), (7, 9), (8, 9), (11, 17)]
    assert found[0].message.startswith("`A` subclasses the factory `AutoModelForCausalLM`")


# --------------------------------------------------------------------------- BL606


@pytest.mark.parametrize(
    ("name", "version", "expected"),
    [
        ("TFBertModel", "4.57", []),
        ("TFBertModel", "5.0", [("error", False)]),
        ("FlaxBertModel", "5.0", [("error", False)]),
        ("create_optimizer", "5.0", [("error", False)]),
        ("AdamWeightDecay", "5.0", [("error", False)]),
        ("TFTrainer", "4.30", []),
        ("TFTrainer", "4.31", [("error", False)]),
        ("BertModel", "5.0", []),
    ],
)
def test_bl606_by_version(name, version, expected):
    assert status(f"from transformers import {name}\n", version, "BL606") == expected


def test_bl606_once_per_name_and_the_error_of_each_form():
    src = """
        import transformers
        from transformers import TFBertModel
        from transformers.modeling_tf_utils import TFPreTrainedModel

        a = TFBertModel.from_pretrained("bert-base-uncased")
        b = transformers.TFBertModel.from_pretrained("bert-base-uncased")
        c = transformers.TFAutoModel.from_pretrained("bert-base-uncased")
        d = transformers.TFAutoModel.from_config(a.config)
    """
    found = findings(src, "5.0", "BL606")
    assert [(f.line, f.column) for f in found] == [(3, 26), (4, 44), (8, 5)]
    assert found[0].message.endswith("ImportError: cannot import name 'TFBertModel' from 'transformers'")
    assert found[1].message.endswith("ModuleNotFoundError: No module named 'transformers.modeling_tf_utils'")
    assert found[2].message.endswith("AttributeError: module transformers has no attribute TFAutoModel")


def test_bl606_a_name_gone_from_a_module_that_stays_is_an_import_error():
    # transformers.utils is still there in 5.x; only its TF constants are gone
    src = """
        from transformers.utils import CONFIG_NAME, TF2_WEIGHTS_NAME
        from transformers.models.bert import TFBertModel
    """
    found = findings(src, "5.0", "BL606")
    assert [f.line for f in found] == [2, 3]
    assert found[0].message.endswith("ImportError: cannot import name 'TF2_WEIGHTS_NAME' from 'transformers.utils'")
    assert found[1].message.endswith("ImportError: cannot import name 'TFBertModel' from 'transformers.models.bert'")


def test_bl606_silent_on_other_packages_and_guarded_imports():
    src = """
        from mytools import TFRecordWriter
        from keras_nlp import TFBertTokenizer
        try:
            from transformers import TFAutoModel
        except ImportError:
            TFAutoModel = None
    """
    assert findings(src, "5.0", "BL606") == []


@pytest.mark.parametrize(
    ("source", "version", "help"),
    [
        # the pin first (the code runs unchanged there), then the PyTorch class where the target exports one
        ("from transformers import TFBertModel\nm = TFBertModel.from_pretrained('b')\n", "5.24",
         "pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch, with `BertModel` in place of `TFBertModel`"),
        ("from transformers import FlaxBertForMaskedLM\nm = FlaxBertForMaskedLM.from_pretrained('b')\n", "5.0",
         "pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch, with `BertForMaskedLM` in place of `FlaxBertForMaskedLM`"),
        ("from transformers import TFTrainer\nt = TFTrainer(m)\n", "4.31",
         "pin transformers<4.31 (the code runs unchanged there), or port the script to PyTorch, with `Trainer` in place of `TFTrainer`"),
        ("from transformers.models.auto.modeling_flax_auto import FLAX_MODEL_MAPPING\nFLAX_MODEL_MAPPING[c]\n", "5.24",
         "pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch, with `transformers.MODEL_MAPPING` in place of `FLAX_MODEL_MAPPING`"),
        # AutoModelWithLMHead left with the TF classes (data/removed.json): no class to name
        ("from transformers import TFAutoModelWithLMHead\nm = TFAutoModelWithLMHead.from_pretrained('b')\n", "5.24",
         "pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch"),
        # no class of its own: the row's port
        ("from transformers import create_optimizer\nopt, s = create_optimizer(1e-3, 10, 1)\n", "5.24",
         "pin transformers<5.0 (the code runs unchanged there), or port the script to PyTorch (`torch.optim.AdamW` with a schedule of `transformers.get_scheduler`)"),
        ("from transformers import TFBertModel\n", "5.24", "delete the import: the script never uses `TFBertModel`"),
    ],
    ids=["tf-class", "flax-class", "tf-trainer-4.31", "flax-mapping-submodule", "no-pytorch-class-in-target", "port-row", "unused"],
)
def test_bl606_help_pins_first_and_names_the_pytorch_class_the_target_has(source, version, help):
    [found] = findings(source, version, "BL606")
    assert found.help == help
