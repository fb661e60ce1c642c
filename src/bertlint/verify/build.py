"""Child side: the models and tokenizers a probe runs, built offline.

Imported only in the `--verify` child process (it imports torch and transformers). A checkpoint in
the Hugging Face cache is used as is; otherwise the architecture is rebuilt from its config with
random weights, shrunk in width and depth unless the probe needs the real size. Position limits,
vocabulary sizes and label counts are never shrunk: they are what most findings are about.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import torch
import transformers
from transformers import AutoConfig, PretrainedConfig

logging.getLogger("transformers").setLevel(logging.ERROR)

# Width and depth of a shrunk model: enough for every code path, small enough for a CPU.
SMALL = {"hidden": 64, "heads": 2, "layers": 2, "ffn": 128}
CACHED_WEIGHTS_MAX_PARAMS = 1_500_000_000  # larger cached checkpoints are rebuilt small instead of loaded

# Config attribute names per dimension, across the families bertlint knows (only present ones are set).
_NAMES = {
    "hidden": ("hidden_size", "n_embd", "d_model", "dim"),
    "layers": ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers"),
    "decoder_layers": ("decoder_layers", "num_decoder_layers"),
    "heads": ("num_attention_heads", "n_head", "num_heads", "n_heads", "encoder_attention_heads", "decoder_attention_heads"),
    "ffn": ("intermediate_size", "n_inner", "d_ff", "hidden_dim", "encoder_ffn_dim", "decoder_ffn_dim"),
    "vocab": ("vocab_size",),
    "positions": ("max_position_embeddings", "n_positions"),
}
_DERIVED = ("attention_layers", "layer_types")  # recomputed by the config class from the new sizes

# len(tokenizer) where the published embedding has spare rows, by (model_type, vocab_size).
# T5/Flan-T5: 32,000 SentencePiece pieces + 100 sentinels in 32,128 rows; Qwen2.5: 151,665 tokens in
# 151,936 (0.5B-3B) or 152,064 (7B+) rows (QwenLM/Qwen3#1247, arcee-ai/mergekit#425).
TOKENIZER_LENGTHS = {("t5", 32128): 32100, ("qwen2", 151936): 151665, ("qwen2", 152064): 151665}


@dataclass
class Built:
    """A config and where its sizes came from, for the evidence line."""

    config: PretrainedConfig
    setup: str


def cached_config(model: dict[str, Any]) -> PretrainedConfig | None:
    """The checkpoint's own config: a local directory's, or the Hugging Face cache's (offline)."""
    for name in (model.get("config_dir"), model.get("checkpoint")):
        if not name:
            continue
        try:
            return AutoConfig.from_pretrained(name, local_files_only=True)
        except Exception:  # not cached, or not a config we can read: rebuild from the known sizes
            continue
    return None


def config_for(model: dict[str, Any], *, size: dict[str, int] | None = SMALL, **overrides: Any) -> Built:
    """The architecture of `model` (a spec from the parent): its cached config, else its known sizes.

    `size` replaces the width and depth (`SMALL` by default; None keeps the real size); `overrides`
    are config attributes (num_labels, pad_token_id, ...)."""
    cached = cached_config(model)
    if cached is not None:
        base, origin = cached.to_dict(), f"the cached config of {model.get('checkpoint') or model.get('config_dir')}"
        model_type = cached.model_type
    else:
        model_type = model.get("model_type")
        if not model_type:
            raise ValueError("the model's architecture is not known")
        base = AutoConfig.for_model(model_type).to_dict()
        known = {
            "hidden": model.get("hidden_size"), "layers": model.get("num_layers"),
            "decoder_layers": model.get("num_decoder_layers") or model.get("num_layers"),
            "heads": model.get("num_attention_heads"), "ffn": model.get("intermediate_size"),
            "vocab": model.get("vocab_size"), "positions": model.get("max_position_embeddings"),
        }  # fmt: skip
        _set(base, {k: v for k, v in known.items() if v})
        origin = f"the sizes of {model['id']}" if model.get("id") else f"a default {model_type} config"
    if size is not None:
        kv = base.get("num_key_value_heads")
        _set(base, {k: v for k, v in size.items() if k in _NAMES} | {"decoder_layers": size["layers"]})
        if kv:
            base["num_key_value_heads"] = min(kv, size["heads"])
        for key in ("head_dim", "d_kv"):
            if key in base:
                base[key] = size["hidden"] // size["heads"]
        if "embedding_size" in base:
            base["embedding_size"] = min(base["embedding_size"], size["hidden"])
    for key in _DERIVED:
        base.pop(key, None)
    if "attention_types" in base:  # GPT-Neo: one entry per layer
        layers = next(base[k] for k in _NAMES["layers"] if k in base)
        base["attention_types"] = [[["global", "local"], layers // 2]] if layers % 2 == 0 else [[["global"], layers]]
    if "num_labels" in overrides:  # 4.x keeps a stale id2label over a new num_labels
        base.pop("id2label", None)
        base.pop("label2id", None)
    base.update(overrides)
    base.pop("model_type", None)
    config = AutoConfig.for_model(model_type, **base)
    shape = f"{_get(config, 'layers')} layers × {_get(config, 'hidden')} wide" if size is not None else "real size"
    return Built(config, f"random-weight {model_type} ({shape}) from {origin}")


def _set(cfg: dict[str, Any], dims: dict[str, Any]) -> None:
    for dim, value in dims.items():
        for key in _NAMES[dim]:
            if key in cfg and (dim != "ffn" or cfg[key] is not None or value is not None):
                cfg[key] = value


def _get(config: PretrainedConfig, dim: str) -> Any:
    return next((getattr(config, k) for k in _NAMES[dim] if getattr(config, k, None) is not None), None)


def model_for(model: dict[str, Any], auto_class: str, device: str, **overrides: Any) -> tuple[torch.nn.Module, str]:
    """A model with the task head `auto_class` (e.g. "AutoModelForSequenceClassification"), in eval mode.

    The cached checkpoint's weights are used when present and not too large; else random weights."""
    cls = getattr(transformers, auto_class)
    checkpoint = model.get("checkpoint")
    if checkpoint and (model.get("params") or 0) <= CACHED_WEIGHTS_MAX_PARAMS:
        try:
            loaded = cls.from_pretrained(checkpoint, local_files_only=True, **overrides)
            return loaded.to(device).eval(), f"cached {checkpoint}"
        except Exception:  # not in the cache (the usual case offline): rebuild it below
            pass
    built = config_for(model, **overrides)
    torch.manual_seed(0)
    with torch.device(device):
        net = cls.from_config(built.config)
    return net.eval(), built.setup


def pad_id(config: PretrainedConfig) -> int:
    pad = getattr(config, "pad_token_id", None)
    return pad if isinstance(pad, int) and pad >= 0 else 0


def family_padding_side(model_type: str | None) -> str:
    """The padding side of the family's tokenizer class (LLaMA and Gemma tokenizers pad on the left)."""
    from transformers.models.auto import tokenization_auto

    if not model_type:
        return "right"
    names = tokenization_auto.TOKENIZER_MAPPING_NAMES.get(model_type)
    names = list(names) if isinstance(names, (tuple, list)) else [names]
    try:
        names.append(type(AutoConfig.for_model(model_type)).__name__.replace("Config", "Tokenizer"))
    except ValueError:
        pass
    for name in names:
        cls = getattr(transformers, name, None) if name else None
        if cls is not None and getattr(cls, "padding_side", None) in ("left", "right"):
            return cls.padding_side
    return "right"


# --------------------------------------------------------------------------- tokenizers

WORDS = [f"w{i}" for i in range(200)] + ["hello", "world", "the", "cat", "sat", "on", "mat"]
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_WORD = re.compile(r"\w+|[^\w\s]")  # BERT's basic split: words and single punctuation marks


def tokenizer_for(spec: dict[str, Any], workdir: Path, texts: Iterable[str] = ()) -> tuple[Any, str]:
    """The script's tokenizer: the cached one, else a WordPiece tokenizer over a generated vocabulary
    that holds every word of `texts` (the script's own), one token each as a real vocabulary's common words.

    A slow class named by the script (`BertTokenizer` in 4.x, or `use_fast=False`) stays slow: slow
    and fast tokenizers treat unknown keywords differently."""
    checkpoint = spec.get("checkpoint")
    name = spec.get("class") or "AutoTokenizer"
    slow = spec.get("use_fast") is False or not (name == "AutoTokenizer" or name.endswith("Fast"))
    if checkpoint:
        try:
            tok = transformers.AutoTokenizer.from_pretrained(checkpoint, local_files_only=True, use_fast=not slow)
            return tok, f"cached tokenizer of {checkpoint}"
        except Exception:  # not cached: build one below
            pass
    words = list(dict.fromkeys(WORDS + [w for text in texts for w in _WORD.findall(text.lower())]))
    vocab = workdir / "vocab.txt"
    vocab.write_text("\n".join(_SPECIALS + words) + "\n", encoding="utf-8")
    cls = transformers.BertTokenizer if slow else transformers.BertTokenizerFast
    tok = cls(str(vocab), model_max_length=spec.get("model_max_length") or 512)
    kind = "slow" if not getattr(tok, "is_fast", False) else "fast"
    return tok, f"{kind} {type(tok).__name__} over a {len(_SPECIALS) + len(words)}-token generated vocabulary (one token per word)"


def text_of(words: int, offset: int = 0) -> str:
    """A text of `words` vocabulary words (one token each with the generated vocabulary)."""
    return " ".join(WORDS[(offset + i) % 200] for i in range(words))


def unpadded_tokenizer(spec: dict[str, Any], workdir: Path) -> tuple[Any, str]:
    """The script's tokenizer as it loads: the cached one, else GPT-2's byte-level BPE class over the 256 byte symbols
    (no merges) with `<|endoftext|>` as its only special token and no pad token, as GPT-2's own (Llama's and Mistral's
    base tokenizers have none either). The error it raises is the base class's, shared by every tokenizer class."""
    from tokenizers.pre_tokenizers import ByteLevel

    checkpoint = spec.get("checkpoint")
    if checkpoint:
        try:
            return transformers.AutoTokenizer.from_pretrained(checkpoint, local_files_only=True), f"cached tokenizer of {checkpoint}"
        except Exception:  # not cached: build one below
            pass
    vocab = {symbol: i for i, symbol in enumerate(sorted(ByteLevel.alphabet()))}
    vocab["<|endoftext|>"] = len(vocab)
    (workdir / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    (workdir / "merges.txt").write_text("#version: 0.2\n", encoding="utf-8")
    tok = transformers.GPT2Tokenizer(str(workdir / "vocab.json"), str(workdir / "merges.txt"), model_max_length=spec.get("model_max_length") or 1024)
    return tok, f"{type(tok).__name__} over the 256 byte symbols, no pad token (as the `{checkpoint}` tokenizer)"
