"""Model knowledge: checkpoint table, config.json reading, learning-rate ranges, memory estimate.

Reference numbers come from the research notes (api-facts.md §7-§9, mem_estimate.txt)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bertlint import knowledge
from bertlint.knowledge import (
    GiB,
    MiB,
    MemoryEstimate,
    ModelInfo,
    checkpoints,
    estimate_training_memory,
    family_for_model_type,
    lookup_checkpoint,
    lr_range,
    max_fitting_batch,
    model_type_from_class_name,
    params_from_config,
)

FAMILIES = {"bert-base", "encoder-large", "roberta-base", "electra", "albert", "bart", "t5", "gpt2", "llm"}


# --------------------------------------------------------------------------- table


def test_table_has_enough_complete_records():
    table = checkpoints()
    assert len(table) >= 45
    assert len({info.id.lower() for info in table}) == len(table)
    for info in table:
        assert info.architecture in {"encoder", "decoder", "seq2seq"}, info.id
        assert info.family in FAMILIES, info.id
        assert isinstance(info.params, int) and info.params > 1_000_000, info.id
        for name in ("hidden_size", "num_layers", "num_attention_heads", "vocab_size"):
            assert isinstance(getattr(info, name), int), (info.id, name)
        assert (info.num_decoder_layers is not None) == (info.architecture == "seq2seq"), info.id
        assert isinstance(info.hard_length_limit, bool), info.id
        assert info.tokenizer, info.id
        assert info.stored_dtype in {"float32", "float16", "bfloat16", None}, info.id
        assert info.source == "built-in"
        if info.hard_length_limit:
            assert info.usable_max_tokens, info.id


def test_raw_json_records_have_all_fields():
    from importlib.resources import files

    records = json.loads((files("bertlint") / "data" / "checkpoints.json").read_text())
    required = {f.name for f in dataclasses.fields(ModelInfo)}
    for rec in records:
        assert required <= set(rec), rec["id"]
        assert rec["source"].startswith("https://")


def test_table_keeps_research_numbers():
    info = lookup_checkpoint("bert-large-uncased")
    assert (info.params, info.hidden_size, info.num_layers, info.intermediate_size) == (335_141_888, 1024, 24, 4096)
    assert lookup_checkpoint("google/flan-t5-small").params == 76_961_152
    assert lookup_checkpoint("EleutherAI/pythia-160m").params == 162_322_944
    qwen = lookup_checkpoint("Qwen/Qwen2.5-1.5B")
    assert (qwen.max_position_embeddings, qwen.usable_max_tokens, qwen.hard_length_limit) == (131072, 32768, False)
    mistral = lookup_checkpoint("mistralai/Mistral-7B-v0.1")
    assert (mistral.max_position_embeddings, mistral.usable_max_tokens) == (32768, 8192)


def test_tokenizer_keys_group_shared_vocabularies():
    tok = lambda name: lookup_checkpoint(name).tokenizer  # noqa: E731
    assert tok("bert-base-uncased") == tok("bert-large-uncased") == tok("distilbert-base-uncased") == tok("google/electra-base-discriminator")
    assert tok("bert-base-cased") != tok("bert-base-uncased")
    assert tok("roberta-base") == tok("facebook/bart-large") != tok("gpt2")
    assert tok("gpt2") == tok("EleutherAI/gpt-neo-125m") != tok("EleutherAI/pythia-160m")
    assert tok("t5-small") == tok("google/flan-t5-xl")
    assert tok("meta-llama/Llama-2-7b-hf") != tok("mistralai/Mistral-7B-v0.1")
    assert tok("meta-llama/Llama-2-7b-hf") != tok("meta-llama/Meta-Llama-3-8B")


def test_table_families_follow_the_size_rule():
    for info in checkpoints():
        assert knowledge._family(info.model_type, info.architecture, info.hidden_size, info.params) == info.family, info.id


def test_learning_rate_table_covers_every_family():
    table = knowledge._lr_table()
    assert "default" not in table  # an unknown family has no built-in range (issue 10, cause 4)
    for key in FAMILIES | {"lora", "from_scratch"}:
        entry = table[key]
        assert entry["label"] and entry["source"]
        low, high = entry["adamw"]
        assert 0 < low < high


# --------------------------------------------------------------------------- lookups


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bert-base-uncased", "bert-base-uncased"),
        ("google-bert/bert-base-uncased", "bert-base-uncased"),
        ("BERT-Base-Uncased", "bert-base-uncased"),
        ("FacebookAI/roberta-base", "roberta-base"),
        ("distilbert/distilbert-base-uncased", "distilbert-base-uncased"),
        ("openai-community/gpt2", "gpt2"),
        ("google-t5/t5-small", "t5-small"),
        ("bart-base", "facebook/bart-base"),
        ("facebook/bart-base/", "facebook/bart-base"),
        ("roberta-large@main", "roberta-large"),
        ("meta-llama/llama-2-7b-hf", "meta-llama/Llama-2-7b-hf"),
    ],
)
def test_lookup_aliases(name, expected):
    assert lookup_checkpoint(name).id == expected


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf"),
        ("meta-llama/Llama-2-13b-chat-hf", "meta-llama/Llama-2-13b-hf"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "meta-llama/Meta-Llama-3-8B"),
        ("mistralai/Mistral-7B-Instruct-v0.1", "mistralai/Mistral-7B-v0.1"),
        ("Qwen/Qwen2.5-0.5B-Instruct", "Qwen/Qwen2.5-0.5B"),
        ("google/gemma-2b-it", "google/gemma-2b"),
    ],
)
def test_a_chat_or_instruct_variant_is_its_base_under_its_own_name(name, base):
    info, known = lookup_checkpoint(name), lookup_checkpoint(base)
    assert info.id == name
    assert (info.params, info.vocab_size, info.max_position_embeddings, info.tokenizer) == (known.params, known.vocab_size, known.max_position_embeddings, known.tokenizer)


@pytest.mark.parametrize("name", ["mistralai/Mistral-7B-Instruct-v0.2", "Qwen/Qwen2.5-3B-Instruct", "bert-base-uncased-finetuned-it"])
def test_a_variant_of_an_unknown_base_stays_unknown(name):
    assert lookup_checkpoint(name) is None


@pytest.mark.parametrize("name", ["not-a-model", "", "   ", "bert-base-uncased-finetuned-sst2", "/no/such/dir/bert-base-uncased", "./out"])
def test_lookup_unknown(name):
    assert lookup_checkpoint(name) is None


def test_length_limits_from_table():
    roberta = lookup_checkpoint("roberta-base")
    assert (roberta.max_position_embeddings, roberta.usable_max_tokens, roberta.hard_length_limit) == (514, 512, True)
    t5 = lookup_checkpoint("t5-base")
    assert (t5.usable_max_tokens, t5.hard_length_limit) == (None, False)
    llama = lookup_checkpoint("meta-llama/Llama-2-7b-hf")
    assert llama.hard_length_limit is False and llama.usable_max_tokens == 4096
    assert lookup_checkpoint("microsoft/deberta-v3-base").hard_length_limit is False
    assert lookup_checkpoint("bert-base-uncased").hard_length_limit is True


# --------------------------------------------------------------------------- local config.json

TINY_BERT = {"model_type": "bert", "hidden_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
             "intermediate_size": 512, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2}  # fmt: skip


def _write_config(directory: Path, config) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else json.dumps(config)
    (directory / "config.json").write_text(text)
    return directory


def test_local_config_wins_over_table(tmp_path, monkeypatch):
    local = _write_config(tmp_path / "bert-base-uncased", TINY_BERT)
    for found in (lookup_checkpoint("bert-base-uncased", base_dir=tmp_path), lookup_checkpoint(str(local))):
        assert found.source == str(local / "config.json")
        assert (found.hidden_size, found.num_layers, found.family, found.architecture) == (128, 2, "bert-base", "encoder")
        assert found.usable_max_tokens == 512 and found.hard_length_limit
        assert found.tokenizer is None  # a custom model: the vocabulary is unknown
    monkeypatch.chdir(tmp_path)
    assert lookup_checkpoint("bert-base-uncased").hidden_size == 128
    assert lookup_checkpoint("bert-base-uncased", base_dir=tmp_path / "elsewhere").hidden_size == 128  # cwd fallback


def test_directory_without_config_falls_back_to_table(tmp_path):
    (tmp_path / "roberta-base").mkdir()
    assert lookup_checkpoint("roberta-base", base_dir=tmp_path).source == "built-in"


def test_local_config_of_a_known_checkpoint(tmp_path):
    config = {**CONFIGS["bert-base-uncased"], "_name_or_path": "bert-base-uncased", "torch_dtype": "float32"}
    info = lookup_checkpoint("model", base_dir=_write_config(tmp_path / "model", config).parent)
    assert (info.id, info.params, info.tokenizer, info.stored_dtype) == ("bert-base-uncased", 109_482_240, "bert-uncased", "float32")


@pytest.mark.parametrize(
    "text", ["{not json", "[1, 2, 3]", '"bert"', "{}", '{"model_type": 5}', "\xff\xfe garbage", '{"model_type": "bert", "hidden_size": "big"}']
)
def test_malformed_config_returns_none(tmp_path, text):
    _write_config(tmp_path / "m", text)
    result = lookup_checkpoint("m", base_dir=tmp_path)
    assert result is None or result.hidden_size is None  # never raises; nothing made up


def test_local_length_limits(tmp_path):
    roberta = {**CONFIGS["roberta-base"], "hidden_size": 256}
    t5 = {**CONFIGS["t5-small"], "d_model": 256}
    llama = {**CONFIGS["meta-llama/Llama-2-7b-hf"], "hidden_size": 256, "num_hidden_layers": 2}
    deberta = {**CONFIGS["microsoft/deberta-v3-base"], "hidden_size": 256}
    got = {name: lookup_checkpoint(str(_write_config(tmp_path / name, cfg))) for name, cfg in
           {"roberta": roberta, "t5": t5, "llama": llama, "deberta": deberta}.items()}  # fmt: skip
    assert (got["roberta"].usable_max_tokens, got["roberta"].hard_length_limit) == (512, True)
    assert (got["t5"].usable_max_tokens, got["t5"].hard_length_limit, got["t5"].architecture) == (None, False, "seq2seq")
    assert (got["llama"].usable_max_tokens, got["llama"].hard_length_limit, got["llama"].architecture) == (4096, False, "decoder")
    assert (got["deberta"].usable_max_tokens, got["deberta"].hard_length_limit) == (512, False)
    assert got["llama"].stored_dtype == "float16"


# Minimal copies of the published config.json files (only the fields the formulas read).
CONFIGS = {
    "bert-base-uncased": {"model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                          "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2},
    "bert-large-cased": {"model_type": "bert", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                         "intermediate_size": 4096, "vocab_size": 28996, "max_position_embeddings": 512, "type_vocab_size": 2},
    "distilbert-base-uncased": {"model_type": "distilbert", "dim": 768, "n_layers": 6, "n_heads": 12, "hidden_dim": 3072,
                                "vocab_size": 30522, "max_position_embeddings": 512},
    "roberta-base": {"model_type": "roberta", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                     "intermediate_size": 3072, "vocab_size": 50265, "max_position_embeddings": 514, "type_vocab_size": 1},
    "xlm-roberta-large": {"model_type": "xlm-roberta", "hidden_size": 1024, "num_hidden_layers": 24, "num_attention_heads": 16,
                          "intermediate_size": 4096, "vocab_size": 250002, "max_position_embeddings": 514, "type_vocab_size": 1},
    "albert-base-v2": {"model_type": "albert", "embedding_size": 128, "hidden_size": 768, "num_hidden_layers": 12,
                       "num_attention_heads": 12, "intermediate_size": 3072, "vocab_size": 30000, "max_position_embeddings": 512,
                       "type_vocab_size": 2, "num_hidden_groups": 1, "inner_group_num": 1},
    "albert-xxlarge-v2": {"model_type": "albert", "embedding_size": 128, "hidden_size": 4096, "num_hidden_layers": 12,
                          "num_attention_heads": 64, "intermediate_size": 16384, "vocab_size": 30000, "max_position_embeddings": 512,
                          "type_vocab_size": 2, "num_hidden_groups": 1, "inner_group_num": 1},
    "microsoft/deberta-v3-base": {"model_type": "deberta-v2", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                                  "intermediate_size": 3072, "vocab_size": 128100, "max_position_embeddings": 512, "type_vocab_size": 0,
                                  "position_biased_input": False, "relative_attention": True, "position_buckets": 256,
                                  "norm_rel_ebd": "layer_norm", "max_relative_positions": -1},
    "google/electra-large-discriminator": {"model_type": "electra", "embedding_size": 1024, "hidden_size": 1024, "num_hidden_layers": 24,
                                           "num_attention_heads": 16, "intermediate_size": 4096, "vocab_size": 30522,
                                           "max_position_embeddings": 512, "type_vocab_size": 2},
    "facebook/bart-base": {"model_type": "bart", "d_model": 768, "encoder_layers": 6, "decoder_layers": 6, "encoder_attention_heads": 12,
                           "encoder_ffn_dim": 3072, "decoder_ffn_dim": 3072, "vocab_size": 50265, "max_position_embeddings": 1024},
    "facebook/bart-large-cnn": {"model_type": "bart", "d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
                                "encoder_attention_heads": 16, "encoder_ffn_dim": 4096, "decoder_ffn_dim": 4096, "vocab_size": 50264,
                                "max_position_embeddings": 1024, "add_final_layer_norm": False},
    "t5-small": {"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 2048, "num_layers": 6, "num_heads": 8, "vocab_size": 32128,
                 "relative_attention_num_buckets": 32, "feed_forward_proj": "relu"},
    "t5-11b": {"model_type": "t5", "d_model": 1024, "d_kv": 128, "d_ff": 65536, "num_layers": 24, "num_heads": 128, "vocab_size": 32128},
    "google/flan-t5-small": {"model_type": "t5", "d_model": 512, "d_kv": 64, "d_ff": 1024, "num_layers": 8, "num_decoder_layers": 8,
                             "num_heads": 6, "vocab_size": 32128, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False},
    "google/flan-t5-xl": {"model_type": "t5", "d_model": 2048, "d_kv": 64, "d_ff": 5120, "num_layers": 24, "num_decoder_layers": 24,
                          "num_heads": 32, "vocab_size": 32128, "feed_forward_proj": "gated-gelu", "tie_word_embeddings": False},
    "gpt2": {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": None, "vocab_size": 50257, "n_positions": 1024},
    "gpt2-xl": {"model_type": "gpt2", "n_embd": 1600, "n_layer": 48, "n_head": 25, "vocab_size": 50257, "n_positions": 1024},
    "EleutherAI/gpt-neo-125m": {"model_type": "gpt_neo", "hidden_size": 768, "num_layers": 12, "num_heads": 12, "intermediate_size": None,
                                "vocab_size": 50257, "max_position_embeddings": 2048},
    "EleutherAI/pythia-160m": {"model_type": "gpt_neox", "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                               "intermediate_size": 3072, "vocab_size": 50304, "max_position_embeddings": 2048, "rotary_pct": 0.25},
    "meta-llama/Llama-2-7b-hf": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                 "num_key_value_heads": 32, "intermediate_size": 11008, "vocab_size": 32000, "max_position_embeddings": 4096,
                                 "rope_theta": 10000.0, "torch_dtype": "float16"},
    "meta-llama/Meta-Llama-3-8B": {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                   "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
                                   "max_position_embeddings": 8192, "rope_theta": 500000.0},
    "mistralai/Mistral-7B-v0.1": {"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                  "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 32768},
    "microsoft/phi-2": {"model_type": "phi", "hidden_size": 2560, "num_hidden_layers": 32, "num_attention_heads": 32,
                        "intermediate_size": 10240, "vocab_size": 51200, "max_position_embeddings": 2048, "partial_rotary_factor": 0.4},
    "Qwen/Qwen2.5-0.5B": {"model_type": "qwen2", "hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14,
                          "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936, "max_position_embeddings": 32768,
                          "tie_word_embeddings": True},
    "Qwen/Qwen2.5-7B": {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
                        "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 131072,
                        "tie_word_embeddings": False},
    "google/gemma-2b": {"model_type": "gemma", "hidden_size": 2048, "num_hidden_layers": 18, "num_attention_heads": 8,
                        "num_key_value_heads": 1, "head_dim": 256, "intermediate_size": 16384, "vocab_size": 256000,
                        "max_position_embeddings": 8192},
    "google/gemma-7b": {"model_type": "gemma", "hidden_size": 3072, "num_hidden_layers": 28, "num_attention_heads": 16,
                        "num_key_value_heads": 16, "head_dim": 256, "intermediate_size": 24576, "vocab_size": 256000,
                        "max_position_embeddings": 8192},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_param_formula_matches_counted_params(name):
    assert params_from_config(CONFIGS[name]) == lookup_checkpoint(name).params


def test_unknown_architecture_gets_rough_count(tmp_path):
    cfg = {"model_type": "brand-new", "hidden_size": 512, "num_hidden_layers": 4, "num_attention_heads": 8, "vocab_size": 1000}
    info = lookup_checkpoint(str(_write_config(tmp_path / "x", cfg)))
    assert info.params > 12 * 4 * 512 * 512 * 0.9 and info.family is None


# --------------------------------------------------------------------------- families, classes, learning rates


@pytest.mark.parametrize(
    ("cls", "model_type"),
    [
        ("BertForSequenceClassification", "bert"),
        ("RobertaForSequenceClassification", "roberta"),
        ("XLMRobertaModel", "xlm-roberta"),
        ("TFBertModel", "bert"),
        ("DebertaV2ForTokenClassification", "deberta-v2"),
        ("GPT2LMHeadModel", "gpt2"),
        ("GPTNeoXForCausalLM", "gpt_neox"),
        ("T5ForConditionalGeneration", "t5"),
        ("MBartForConditionalGeneration", "mbart"),
        ("BertTokenizerFast", "bert"),
        ("AutoModelForSequenceClassification", None),
        ("Bertie", None),
    ],
)
def test_model_type_from_class_name(cls, model_type):
    assert model_type_from_class_name(cls) == model_type


def test_family_for_model_type():
    assert family_for_model_type("roberta") == "roberta-base"
    assert family_for_model_type("xlm-roberta") == family_for_model_type("xlm_roberta") == "roberta-base"
    assert family_for_model_type("gpt_neox") == "gpt2"
    assert family_for_model_type("llama") == "llm"
    assert family_for_model_type("unknown") is None and family_for_model_type(None) is None


def _range(*args, **kwargs):
    low, high, _ = lr_range(*args, **kwargs)
    return low, high


def test_lr_ranges_by_family():
    assert _range(lookup_checkpoint("bert-base-uncased")) == (5e-6, 1e-4)
    assert _range(lookup_checkpoint("distilbert-base-uncased")) == (5e-6, 1e-4)
    for large in ("bert-large-uncased", "roberta-large", "xlm-roberta-large", "microsoft/deberta-v3-large", "albert-xxlarge-v2"):
        assert _range(lookup_checkpoint(large)) == (2e-6, 5e-5), large
    assert _range(lookup_checkpoint("roberta-base")) == (3e-6, 1e-4)
    assert _range(lookup_checkpoint("t5-base"), "adafactor") == (1e-4, 3e-3)
    assert _range(lookup_checkpoint("t5-base"), "adamw_torch") == (1e-5, 1e-3)
    assert _range(lookup_checkpoint("meta-llama/Llama-2-7b-hf")) == (1e-6, 5e-5)
    assert _range(lookup_checkpoint("meta-llama/Llama-2-7b-hf"), peft=True) == (1e-5, 1e-2)
    assert _range(lookup_checkpoint("bert-base-uncased"), from_scratch=True) == (1e-6, 3e-3)
    assert _range(lookup_checkpoint("gpt2")) == (5e-6, 5e-4)


def test_lr_labels():
    assert lr_range(lookup_checkpoint("bert-base-uncased"))[2] == "BERT/DistilBERT-base with AdamW"
    assert lr_range(lookup_checkpoint("t5-small"), "adafactor")[2] == "T5/Flan-T5 with Adafactor"
    assert "AdamW range" in lr_range(lookup_checkpoint("roberta-base"), "sgd")[2]


def test_lr_unknown_family_has_no_range():
    assert lr_range(None) is None
    assert lr_range(None, model_type="something-new") is None  # speech, vision, unlisted models are not BERT
    assert lr_range(None, "adafactor", model_type="wav2vec2") is None
    assert _range(None, model_type="roberta") == (3e-6, 1e-4)  # class known, size not: base range
    assert _range(None, model_type=model_type_from_class_name("T5ForConditionalGeneration"), optimizer="adafactor") == (1e-4, 3e-3)


def test_lr_overrides_win():
    bert = lookup_checkpoint("bert-base-uncased")
    low, high, label = lr_range(bert, overrides={"bert-base": [1e-6, 1e-3]})
    assert (low, high) == (1e-6, 1e-3) and "[tool.bertlint]" in label
    assert _range(bert, overrides={"bert_base": {"adamw": [1e-6, 2e-4]}}) == (1e-6, 2e-4)
    assert _range(bert, "adafactor", overrides={"bert-base": {"adamw": [1e-6, 2e-4]}}) == (1e-4, 1e-3)  # other optimizer: built-in
    assert _range(bert, overrides={"bert-base-uncased": [1e-7, 1e-2]}) == (1e-7, 1e-2)
    assert _range(lookup_checkpoint("roberta-large"), overrides={"FacebookAI/roberta-large": [1e-7, 1e-2]}) == (1e-7, 1e-2)
    assert _range(None, overrides={"default": [1e-7, 1.0]}) == (1e-7, 1.0)
    assert _range(bert, overrides={"default": [1e-7, 1.0]}) == (5e-6, 1e-4)  # default is for unknown families
    assert _range(bert, peft=True, overrides={"lora": [1e-6, 1e-2]}) == (1e-6, 1e-2)
    assert _range(bert, from_scratch=True, overrides={"from-scratch": [1e-5, 1e-2]}) == (1e-5, 1e-2)
    assert _range(bert, overrides={"bert-base": "oops"}) == (5e-6, 1e-4)  # malformed: ignored


# --------------------------------------------------------------------------- memory

P_BERT_LARGE_CLS = 335_143_938  # BertForSequenceClassification(bert-large-uncased, 2 labels), research §9
BERT_LARGE_CLS = ModelInfo(
    id="bert-large-uncased", model_type="bert", family="encoder-large", architecture="encoder", params=P_BERT_LARGE_CLS,
    hidden_size=1024, num_layers=24, num_decoder_layers=None, num_attention_heads=16, intermediate_size=4096, vocab_size=30522,
    max_position_embeddings=512, usable_max_tokens=512, hard_length_limit=True, tokenizer="bert-uncased", stored_dtype="float32",
)  # fmt: skip

# mem_estimate.txt (MiB) less the gradients (1,278 MiB), which are made as the activations are freed: on an H200
# (torch 2.11) bert-large fp32 at batch 32 × 512 with SDPA peaked at 29.1 GiB allocated, under the research's sum of all four.
RESEARCH_TOTALS = [
    (4, "fp32", "eager", 13081 - 1278),
    (32, "fp32", "eager", 59449 - 1278),
    (32, "amp", "eager", 44728 - 1278),
    (32, "amp", "flash", 23224 - 1278),
    (8, "amp", "flash", 11128 - 1278),
]


@pytest.mark.parametrize(("batch", "precision", "attention", "mib"), RESEARCH_TOTALS)
def test_memory_matches_research(batch, precision, attention, mib):
    for info in (BERT_LARGE_CLS, lookup_checkpoint("bert-large-uncased")):
        est = estimate_training_memory(info, batch_size=batch, seq_len=512, precision=precision, attention=attention)
        assert abs(est.total / MiB - mib) < 1, (info.params, est.total / MiB)


def test_memory_parts_and_breakdown():
    est = estimate_training_memory(BERT_LARGE_CLS, batch_size=32, seq_len=512, precision="amp", attention="flash")
    assert isinstance(est, MemoryEstimate)
    assert est.weights == 6 * P_BERT_LARGE_CLS and est.gradients == 4 * P_BERT_LARGE_CLS
    assert est.optimizer_states == 8 * P_BERT_LARGE_CLS
    assert est.activations == 16128 * MiB and est.overhead == 1343 * MiB and est.lm_head == 0
    assert est.total == est.weights + est.optimizer_states + est.activations + est.overhead  # gradients come as activations go
    assert est.breakdown() == (
        "weights 1.9 GiB + AdamW states 2.5 GiB + activations 15.8 GiB (batch 32 × 512)"
        " + CUDA context 1.3 GiB = 21.4 GiB (gradients 1.2 GiB: made as the activations are freed)"
    )
    pure_7b = estimate_training_memory(lookup_checkpoint("meta-llama/Llama-2-7b-hf"), batch_size=8, seq_len=1, precision="bf16_pure", lm_head=True)
    assert pure_7b.total == pure_7b.weights + pure_7b.optimizer_states + pure_7b.gradients + pure_7b.overhead  # gradients the larger
    assert pure_7b.breakdown() == "weights 12.6 GiB + AdamW states 25.1 GiB + gradients 12.6 GiB + CUDA context 1.3 GiB = 51.5 GiB"
    assert est.notes and "lower bound" in est.notes[0]


def test_memory_options():
    base = dict(batch_size=8, seq_len=512, precision="amp", attention="sdpa")
    est = estimate_training_memory(BERT_LARGE_CLS, **base)
    assert estimate_training_memory(BERT_LARGE_CLS, **{**base, "attention": "flash_attention_2"}).total == est.total
    assert estimate_training_memory(BERT_LARGE_CLS, **base, optimizer="adamw_8bit").optimizer_states == 2 * P_BERT_LARGE_CLS
    assert estimate_training_memory(BERT_LARGE_CLS, **base, optimizer="sgd").optimizer_states == 0
    assert estimate_training_memory(BERT_LARGE_CLS, **base, optimizer="sgd_momentum").optimizer_states == 4 * P_BERT_LARGE_CLS
    assert estimate_training_memory(BERT_LARGE_CLS, **base, optimizer="adafactor").optimizer_states == 4 * P_BERT_LARGE_CLS
    pure = estimate_training_memory(BERT_LARGE_CLS, **{**base, "precision": "bf16_pure"})
    assert pure.weights + pure.gradients + pure.optimizer_states == 8 * P_BERT_LARGE_CLS
    ckpt = estimate_training_memory(BERT_LARGE_CLS, **base, gradient_checkpointing=True)
    assert ckpt.activations < est.activations / 5
    lora = estimate_training_memory(BERT_LARGE_CLS, **base, trainable_params=1_000_000)
    assert lora.weights == est.weights and lora.gradients == 4_000_000 and lora.optimizer_states == 8_000_000
    head = estimate_training_memory(BERT_LARGE_CLS, **base, lm_head=True)
    assert head.lm_head == 8 * 512 * 8 * 30522 and "LM-head logits" in head.breakdown()
    accum = estimate_training_memory(BERT_LARGE_CLS, **base, grad_accum=4)
    assert accum.total == est.total and any("accumulation" in n for n in accum.notes)
    assert any("not recognised" in n for n in estimate_training_memory(BERT_LARGE_CLS, **base, optimizer="lion").notes)
    with pytest.raises(ValueError):
        estimate_training_memory(BERT_LARGE_CLS, **{**base, "precision": "int3"})


def test_memory_seq2seq_counts_both_stacks():
    t5 = lookup_checkpoint("t5-base")
    enc_only = dataclasses.replace(t5, num_decoder_layers=None)
    full = estimate_training_memory(t5, batch_size=4, seq_len=512)
    assert full.activations == 2 * estimate_training_memory(enc_only, batch_size=4, seq_len=512).activations


def test_max_fitting_batch():
    kwargs = dict(seq_len=512, precision="amp", attention="flash")
    best = max_fitting_batch(BERT_LARGE_CLS, 16 * GiB, **kwargs)
    assert 8 <= best < 32
    assert estimate_training_memory(BERT_LARGE_CLS, batch_size=best, **kwargs).total <= 16 * GiB
    assert estimate_training_memory(BERT_LARGE_CLS, batch_size=best + 1, **kwargs).total > 16 * GiB
    assert max_fitting_batch(BERT_LARGE_CLS, 4 * GiB, **kwargs) == 0
    # fp32 eager: b=4 is 11,803 MiB (the research's 13,081 less the gradients), each further sample 1,656 MiB
    assert max_fitting_batch(lookup_checkpoint("bert-large-uncased"), 14 * GiB, seq_len=512, attention="eager") == 5


# --------------------------------------------------------------------------- import hygiene


def test_import_is_light():
    code = (
        "import sys, bertlint.knowledge as k; k.lookup_checkpoint('bert-base-uncased'); k.lr_range(None);"
        "bad = [m for m in ('torch', 'transformers', 'tensorflow', 'jax', 'numpy') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_attention_per_architecture_and_conditioning_encoders():
    from bertlint.knowledge import attention_of, conditioning_encoder, lookup_checkpoint

    assert attention_of(info=lookup_checkpoint("bert-base-uncased")) == "bidirectional"
    assert attention_of(info=lookup_checkpoint("gpt2")) == "causal"
    assert attention_of(class_name="transformers.CLIPTextModel") == "causal"
    assert attention_of(class_name="transformers.T5EncoderModel") == "bidirectional"
    assert attention_of(class_name="transformers.DPRQuestionEncoder") == attention_of(class_name="transformers.DPRContextEncoder") == "bidirectional"
    assert attention_of(class_name="transformers.LlamaForSequenceClassification") == "causal"
    assert attention_of(class_name="transformers.AutoModel") is None
    assert conditioning_encoder("transformers.AutoModel", "text_encoder_2") and conditioning_encoder("transformers.CLIPTextModel", None)
    assert not conditioning_encoder("transformers.BertModel", "unet")
