"""Model knowledge: checkpoint facts, learning-rate ranges and a static training-memory estimate.

Standard library only. The tables live in ``bertlint/data/*.json`` and are read once, on first use.
Facts and formulas: research notes ``api-facts.md`` sections 7 (checkpoints), 8 (learning rates), 9 (memory).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from bertlint.patterns import Lazy
from bertlint.versions import data_file

MiB = 1 << 20
GiB = 1 << 30
CUDA_CONTEXT_BYTES = 1343 * MiB  # HF "Model training anatomy": CUDA context + kernels on a V100


# The memory of the GPUs a notebook's saved runtime names (Colab's `gpuType`, Kaggle's `accelerator`), in GiB as the
# device reports it (NVIDIA's data sheets; Colab's T4 shows 15 GiB, its A100 is the 40 GB card, its G4 an RTX PRO 6000).
CARD_MEMORY_GIB = {"T4": 15.0, "nvidiaTeslaT4": 15.0, "V100": 16.0, "P100": 16.0, "nvidiaTeslaP100": 16.0, "L4": 22.5, "A100": 40.0,
                   "nvidiaA100": 40.0, "H100": 80.0, "G4": 96.0, "nvidiaRtxPro6000": 96.0}  # fmt: skip
# A run that asks for what only Ampere or newer GPUs give (tf32, FlashAttention 2; bf16, emulated slowly before them) is
# not set for the 16 GB cards of the default budget (T4, V100, P100): the smallest common Ampere-class training cards
# (A10/A10G, L4, RTX 3090/4090) have 24 GB. Smaller consumer Ampere cards exist: the larger reading keeps findings certain.
AMPERE_BUDGET_GIB = 24.0


# --------------------------------------------------------------------------- checkpoints


@dataclass(frozen=True, repr=False)
class ModelInfo:
    """What data/checkpoints.json knows of a checkpoint: its family, architecture and sizes."""

    id: str
    model_type: str | None
    family: str | None  # learning-rate family key (see data/learning_rates.json)
    architecture: str  # "encoder" | "decoder" | "seq2seq"
    params: int | None  # encoders: bare model incl. pooler; decoders/seq2seq: with LM head (tied counted once)
    hidden_size: int | None
    num_layers: int | None  # encoder layers for seq2seq
    num_decoder_layers: int | None
    num_attention_heads: int | None
    intermediate_size: int | None  # None means 4 * hidden_size
    vocab_size: int | None
    max_position_embeddings: int | None
    usable_max_tokens: int | None  # longest input the model was built/trained for; None: no position limit at all
    hard_length_limit: bool  # True: longer inputs crash (learned absolute positions); False: they only degrade
    tokenizer: str | None  # vocabulary key: equal keys share a vocabulary
    stored_dtype: str | None  # dtype of the published weights
    source: str = "built-in"  # "built-in" or the path of the local config.json

    @property
    def total_layers(self) -> int:
        return (self.num_layers or 0) + (self.num_decoder_layers or 0)


_RECORD_FIELDS = tuple(f.name for f in fields(ModelInfo) if f.name != "source")


@functools.cache
def checkpoints() -> tuple[ModelInfo, ...]:
    """The built-in checkpoint table."""
    return tuple(ModelInfo(**{k: rec[k] for k in _RECORD_FIELDS}) for rec in data_file("checkpoints.json"))


# A chat/instruct fine-tune has its base's architecture and vocabulary: `Llama-2-7b-chat-hf` is
# `Llama-2-7b-hf`, `Qwen2.5-0.5B-Instruct` is `Qwen2.5-0.5B`, `gemma-2b-it` is `gemma-2b`.
_TUNED_VARIANT = re.compile(r"-(?:instruct|chat|it)(?=-|$)")


@functools.cache
def _index() -> tuple[dict[str, ModelInfo], dict[str, ModelInfo]]:
    """(full id -> info, short name without organisation -> info); keys lower-case, short names only if unique."""
    full = {info.id.lower(): info for info in checkpoints()}
    short: dict[str, ModelInfo | None] = {}
    for key, info in full.items():
        name = key.rsplit("/", 1)[-1]
        short[name] = None if name in short else info
    return full, {k: v for k, v in short.items() if v is not None}


def _clean_id(name: str) -> str:
    name = name.strip().removeprefix("https://huggingface.co/").rstrip("/")
    return name.split("@", 1)[0]  # "org/model@revision"


def _from_table(name: str) -> ModelInfo | None:
    clean = _clean_id(name)
    if clean.count("/") > 1 or clean.startswith((".", "/", "~")):  # a filesystem path, not a hub id
        return None
    full, short = _index()
    key = clean.lower()
    if key in full:
        return full[key]
    found = short.get(key.rsplit("/", 1)[-1])
    base = _TUNED_VARIANT.sub("", key)
    if found is None and base != key:
        found = full.get(base) or short.get(base.rsplit("/", 1)[-1])
        return replace(found, id=clean) if found is not None else None
    return found


def lookup_checkpoint(name: str, base_dir: Path | None = None) -> ModelInfo | None:
    """Facts about ``name`` as passed to ``from_pretrained``: a local directory with a config.json
    (absolute, or relative to ``base_dir`` or the cwd) wins over the built-in table. Never raises."""
    if not isinstance(name, str) or not name.strip():
        return None
    config = _local_config(name.strip(), base_dir)
    if config is not None:
        return _from_config_file(config)
    return _from_table(name)


def local_config_candidates(name: str, base_dir: Path | None) -> list[Path]:
    """The config.json files that would make `name` a local checkpoint, in the order they win."""
    try:
        path = Path(name.strip()).expanduser()
        folders = [path] if path.is_absolute() else [*([Path(base_dir) / path] if base_dir else []), Path.cwd() / path]
    except (OSError, RuntimeError, ValueError):  # `~nobody/x` with no such user
        return []
    return [folder / "config.json" for folder in folders]


def _local_config(name: str, base_dir: Path | None) -> Path | None:
    for config in local_config_candidates(name, base_dir):
        try:
            if config.is_file():
                return config
        except (OSError, ValueError):
            pass
    return None


# --------------------------------------------------------------------------- local config.json

_ROBERTA_LIKE = {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text", "ibert", "mpnet", "luke"}
_BART_LIKE = {"bart", "mbart"}
_T5_LIKE = {"t5", "mt5", "umt5", "longt5"}
_LLAMA_LIKE = {"llama", "mistral", "qwen2", "gemma", "gemma2", "qwen3", "phi3"}
_DECODERS = _LLAMA_LIKE | {"gpt2", "gpt_neo", "gpt_neox", "gptj", "phi", "opt", "bloom", "falcon", "mixtral", "codegen"}
_ROPE = _LLAMA_LIKE | {"gpt_neox", "gptj", "phi", "falcon", "mixtral", "codegen"}
_WITH_POOLER = {"bert", "roberta", "xlm-roberta", "camembert", "albert"}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _first(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        if (value := _int(cfg.get(key))) is not None:
            return value
    return None


def _dtype(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.removeprefix("torch.")
    return {"float": "float32", "half": "float16", "bf16": "bfloat16"}.get(value, value)


def _from_config_file(path: Path) -> ModelInfo | None:
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
        return _from_config(cfg, str(path)) if isinstance(cfg, dict) else None
    except Exception:  # unreadable or odd config: the lint must go on without it
        return None


def _sizes(cfg: Mapping[str, Any]) -> tuple[str | None, str, int | None, int | None, int | None, int | None, int | None, int | None, int | None]:
    """(model_type, architecture, hidden, layers, decoder layers, heads, ffn, vocab, max positions) from a config dict."""
    mt = cfg.get("model_type")
    mt = mt.lower() if isinstance(mt, str) else None
    archs = cfg.get("architectures")
    if mt in _BART_LIKE or mt in _T5_LIKE or cfg.get("is_encoder_decoder") is True:
        arch = "seq2seq"
    elif mt in _DECODERS or any(isinstance(a, str) and ("CausalLM" in a or "LMHead" in a) for a in (archs if isinstance(archs, list) else [])):
        arch = "decoder"
    else:
        arch = "encoder"
    layers = _first(cfg, "encoder_layers", "num_hidden_layers", "num_layers", "n_layer", "n_layers")
    ffn_keys = ("encoder_ffn_dim", "intermediate_size", "d_ff", "n_inner", "ffn_dim") + (("hidden_dim",) if mt == "distilbert" else ())
    return (
        mt,
        arch,
        _first(cfg, "hidden_size", "d_model", "n_embd", "dim"),
        layers,
        (_first(cfg, "decoder_layers", "num_decoder_layers") or layers) if arch == "seq2seq" else None,
        _first(cfg, "encoder_attention_heads", "num_attention_heads", "num_heads", "n_head", "n_heads"),
        _first(cfg, *ffn_keys),
        _first(cfg, "vocab_size"),
        _first(cfg, "max_position_embeddings", "n_positions"),
    )


def params_from_config(cfg: Mapping[str, Any]) -> int | None:
    """Parameter count computed from a config.json dict (formula only, no table look-up)."""
    return _count_params(cfg, *_sizes(cfg))


def _from_config(cfg: dict[str, Any], source: str) -> ModelInfo | None:
    mt, arch, h, layers, dec_layers, heads, ffn, vocab, max_pos = _sizes(cfg)
    if mt is None and h is None:
        return None
    params = _count_params(cfg, mt, arch, h, layers, dec_layers, heads, ffn, vocab, max_pos)
    usable, hard = _length_limit(cfg, mt, max_pos)

    tokenizer = None
    named = cfg.get("_name_or_path")
    named_info = _from_table(named) if isinstance(named, str) and named else None
    dims = (mt, h, layers, dec_layers, heads, ffn or 4 * (h or 0), vocab, max_pos)
    for known in ([named_info] if named_info else []) + [k for k in checkpoints() if k.model_type == mt]:
        known_ffn = known.intermediate_size or 4 * (known.hidden_size or 0)
        if (known.model_type, known.hidden_size, known.num_layers, known.num_decoder_layers, known.num_attention_heads,
                known_ffn, known.vocab_size, known.max_position_embeddings) == dims:  # fmt: skip
            params = known.params
            tokenizer = known.tokenizer if known is named_info else None  # same sizes do not imply the same vocabulary
            break
    return ModelInfo(
        id=named if isinstance(named, str) and named else str(Path(source).parent),
        model_type=mt,
        family=_family(mt, arch, h, params),
        architecture=arch,
        params=params,
        hidden_size=h,
        num_layers=layers,
        num_decoder_layers=dec_layers,
        num_attention_heads=heads,
        intermediate_size=ffn,
        vocab_size=vocab,
        max_position_embeddings=max_pos,
        usable_max_tokens=usable,
        hard_length_limit=hard,
        tokenizer=tokenizer,
        stored_dtype=_dtype(cfg.get("torch_dtype") or cfg.get("dtype")),
        source=source,
    )


def _length_limit(cfg: Mapping[str, Any], mt: str | None, max_pos: int | None) -> tuple[int | None, bool]:
    """(usable tokens, hard limit). Same convention as the table: relative/rotary models keep their
    trained length as usable_max_tokens but have no hard limit; models without positions give None."""
    if max_pos is None or mt in _T5_LIKE:
        return None, False
    if mt in _ROBERTA_LIKE:
        return max_pos - 2, True  # positions start at padding_idx + 1 = 2
    relative = mt in ("deberta", "deberta-v2") and not cfg.get("position_biased_input", True)
    rotary = mt in _ROPE or any(k in cfg for k in ("rope_theta", "rope_scaling", "rotary_pct", "rotary_dim", "partial_rotary_factor"))
    return max_pos, not (relative or rotary)


def _count_params(cfg, mt, arch, h, L, Ld, a, f, V, P) -> int | None:
    """Parameter count from config sizes; exact for the architectures in the built-in table
    (checked against it in the tests), a 12·L·h² + V·h estimate otherwise."""
    if not (h and L and V):
        return None
    f = f or 4 * h
    layer = 4 * h * h + 2 * h * f + 9 * h + f  # attention (4 linear with bias) + FFN (2 linear) + 2 LayerNorms
    if mt in _T5_LIKE:
        inner = (a or 1) * (_first(cfg, "d_kv") or h // (a or 1))
        ff = (3 if str(cfg.get("feed_forward_proj", "relu")).startswith("gated") else 2) * h * f
        bias = (_first(cfg, "relative_attention_num_buckets") or 32) * (a or 0)
        enc = L * (4 * h * inner + ff + 2 * h) + bias + h
        dec = (Ld or L) * (8 * h * inner + ff + 3 * h) + bias + h
        return V * h * (1 if cfg.get("tie_word_embeddings", True) else 2) + enc + dec
    if mt in _BART_LIKE:
        fd = _first(cfg, "decoder_ffn_dim") or f
        final_ln = 4 * h if mt == "mbart" or cfg.get("add_final_layer_norm") else 0
        enc = L * layer
        dec = (Ld or L) * (8 * h * h + 2 * h * fd + 15 * h + fd)
        return V * h + 2 * ((P or 0) + 2) * h + 4 * h + final_ln + enc + dec
    if mt in ("gpt2", "gpt_neo"):
        per = layer if mt == "gpt2" else layer - 3 * h  # GPT-Neo: q, k, v without bias
        return (V + (P or 0)) * h + L * per + 2 * h
    if mt == "gpt_neox":
        return V * h * (1 if cfg.get("tie_word_embeddings", False) else 2) + L * layer + 2 * h
    if mt == "phi":
        return 2 * V * h + V + L * (layer - 2 * h) + 2 * h  # one LayerNorm per layer; untied head with bias
    if mt in _LLAMA_LIKE:
        kv, hd = _first(cfg, "num_key_value_heads") or a, _first(cfg, "head_dim") or h // (a or 1)
        attn = 2 * h * (a or 0) * hd + 2 * h * (kv or 0) * hd
        if mt == "qwen2" or cfg.get("attention_bias"):
            attn += ((a or 0) + 2 * (kv or 0)) * hd + (h if cfg.get("attention_bias") and mt != "qwen2" else 0)
        tied = cfg.get("tie_word_embeddings", mt.startswith("gemma"))
        return V * h * (1 if tied else 2) + L * (attn + 3 * h * f + 2 * h) + h
    if arch == "encoder" and mt is not None:
        e = _first(cfg, "embedding_size") or h
        types = 0 if mt == "distilbert" else _int(cfg.get("type_vocab_size")) or (0 if "type_vocab_size" in cfg else 2)
        positions = 0 if mt in ("deberta", "deberta-v2") and not cfg.get("position_biased_input", True) else (P or 0)
        total = (V + positions + types) * e + 2 * e + (e * h + h if e != h else 0)
        n_layers = (_first(cfg, "num_hidden_groups") or 1) * (_first(cfg, "inner_group_num") or 1) if mt == "albert" else L
        total += n_layers * layer + (h * h + h if mt in _WITH_POOLER else 0)
        if mt in ("deberta", "deberta-v2") and cfg.get("relative_attention"):
            buckets = _first(cfg, "position_buckets")
            rows = 2 * buckets if buckets else 2 * (_first(cfg, "max_relative_positions") or P or 0)
            total += rows * h + (2 * h if "layer_norm" in str(cfg.get("norm_rel_ebd", "")) else 0)
        return total
    return V * h + (L + (Ld or 0)) * 12 * h * h  # unknown architecture: rough estimate


# --------------------------------------------------------------------------- families and learning rates

_BASE_FAMILY = {
    "bert": "bert-base", "distilbert": "bert-base",
    "roberta": "roberta-base", "xlm-roberta": "roberta-base", "camembert": "roberta-base",
    "deberta": "roberta-base", "deberta-v2": "roberta-base",
    "electra": "electra", "albert": "albert", "bart": "bart", "mbart": "bart",
    "t5": "t5", "mt5": "t5", "umt5": "t5", "longt5": "t5",
    "gpt2": "gpt2", "gpt_neo": "gpt2", "gpt_neox": "gpt2", "gptj": "gpt2", "opt": "gpt2",
    "llama": "llm", "mistral": "llm", "mixtral": "llm", "qwen2": "llm", "qwen3": "llm",
    "gemma": "llm", "gemma2": "llm", "phi": "llm", "phi3": "llm", "falcon": "llm",
}  # fmt: skip


def _mt_key(model_type: str) -> str:
    return model_type.lower().replace("-", "_")


_FAMILY_BY_KEY = {_mt_key(k): v for k, v in _BASE_FAMILY.items()}


def family_for_model_type(model_type: str | None) -> str | None:
    """Learning-rate family of a model_type when the size is unknown (the base-size family)."""
    return _FAMILY_BY_KEY.get(_mt_key(model_type)) if isinstance(model_type, str) else None


@functools.cache
def _bodies() -> tuple[dict[str, str], frozenset[str], frozenset[str]]:
    data = data_file("bodies.json")
    heads = frozenset(data["fresh_heads"]["names"]) | frozenset(data["output_heads"]["names"])
    return {_mt_key(t): prefix for t, prefix in data["bodies"].items()}, heads, frozenset(data["layer_stacks"]["names"])


def body_attribute(model_type: str | None) -> str | None:
    """The attribute holding a model_type's pretrained body (`base_model_prefix`: "bert", "transformer", "model"), or None."""
    return _bodies()[0].get(_mt_key(model_type)) if isinstance(model_type, str) else None


def is_head(attribute: str) -> bool:
    """`classifier`, `score`, ...: a task head the pretrained checkpoint does not hold (its weights start fresh), or the
    output projection of an LM (`lm_head`): one linear layer over the body, no transformer layer of it."""
    return attribute in _bodies()[1]


def is_layer_stack(attribute: str) -> bool:
    """`encoder`, `transformer`, `h`, `layers`: the attribute of a model's body that holds all its transformer layers."""
    return attribute in _bodies()[2]


def _family(model_type: str | None, architecture: str, hidden: int | None, params: int | None) -> str | None:
    """Family from model_type and size; the same rule assigned the families of the built-in table."""
    family = family_for_model_type(model_type)
    if family in ("bert-base", "roberta-base") and (hidden or 0) >= 1024:
        return "encoder-large"
    if family == "albert" and (hidden or 0) >= 4096:  # ALBERT-xxlarge
        return "encoder-large"
    if family is None and architecture == "decoder":
        family = "gpt2"
    if family == "gpt2" and (params or 0) >= 2e9:  # GPT-Neo-2.7B, Pythia-6.9B: LLM-sized
        return "llm"
    if family == "llm" and params and params < 1e9:  # Qwen2.5-0.5B: a small decoder
        return "gpt2"
    return family


_CLASS_PREFIXES = {
    "Bert": "bert", "DistilBert": "distilbert", "Roberta": "roberta", "XLMRoberta": "xlm-roberta", "Camembert": "camembert",
    "Albert": "albert", "Deberta": "deberta", "DebertaV2": "deberta-v2", "Electra": "electra", "Bart": "bart", "MBart": "mbart",
    "T5": "t5", "MT5": "mt5", "UMT5": "umt5", "LongT5": "longt5", "GPT2": "gpt2", "GPTNeo": "gpt_neo", "GPTNeoX": "gpt_neox",
    "GPTJ": "gptj", "OPT": "opt", "Llama": "llama", "Mistral": "mistral", "Mixtral": "mixtral", "Qwen2": "qwen2", "Qwen3": "qwen3",
    "Gemma": "gemma", "Gemma2": "gemma2", "Phi": "phi", "Phi3": "phi3", "Falcon": "falcon",
}  # fmt: skip
_CLASS_SUFFIX = Lazy(r"(For[A-Z]\w*|Model|LMHeadModel|DoubleHeadsModel|WithLMHead\w*|PreTrainedModel|MainLayer|Config|Tokenizer(Fast)?)")


def model_type_from_class_name(class_name: str) -> str | None:
    """``"RobertaForSequenceClassification"`` -> ``"roberta"`` (TF/Flax prefixes allowed); None if unknown."""
    name = re.sub(r"^(TF|Flax)(?=[A-Z])", "", class_name)
    for prefix in sorted(_CLASS_PREFIXES, key=len, reverse=True):
        if name.startswith(prefix) and _CLASS_SUFFIX.fullmatch(name[len(prefix) :]):
            return _CLASS_PREFIXES[prefix]
    return None


# --------------------------------------------------------------------------- attention (BL201)


@functools.cache
def _attention() -> tuple[dict[str, str], dict[str, str], frozenset[str], frozenset[str]]:
    """(model_type key -> "causal"/"bidirectional", class -> same, conditioning subfolders, conditioning classes)."""
    data = data_file("attention.json")
    by_type = {_mt_key(t): kind for kind, types in data["model_types"].items() for t in types}
    conditioning = data["conditioning"]
    return by_type, dict(data["classes"]), frozenset(conditioning["subfolders"]), frozenset(conditioning["classes"])


def attention_of(*, model_type: str | None = None, class_name: str | None = None, info: ModelInfo | None = None) -> str | None:
    """How a model's self-attention sees the sequence: "bidirectional" (pads reach every position unless masked),
    "causal" (a position sees only the ones before it), or None when unknown. A known checkpoint wins over
    the class; a decoder-only checkpoint of an unlisted type is causal."""
    by_type, by_class, _, _ = _attention()
    if info is not None:
        found = by_type.get(_mt_key(info.model_type)) if info.model_type else None
        if found is not None or info.architecture == "decoder":
            return found or "causal"
    if class_name:
        name = class_name.rsplit(".", 1)[-1]
        if name in by_class:
            return by_class[name]
        model_type = model_type or model_type_from_class_name(name)
    return by_type.get(_mt_key(model_type)) if model_type else None


def conditioning_encoder(class_name: str | None, subfolder: Any) -> bool:
    """A text encoder of a diffusion pipeline: loaded from the pipeline's `text_encoder*` subfolder, or one of the
    text-encoder-only classes diffusion models are conditioned with (data/attention.json "conditioning")."""
    _, _, subfolders, classes = _attention()
    return (isinstance(subfolder, str) and subfolder.strip("/") in subfolders) or (bool(class_name) and class_name.rsplit(".", 1)[-1] in classes)


_OPT_LABEL = {"adamw": "AdamW", "adafactor": "Adafactor", "sgd": "SGD"}


def _lr_kind(optimizer: str) -> str:
    name = optimizer.lower()
    return "adafactor" if "adafactor" in name else "sgd" if name.startswith("sgd") else "adamw"


@functools.cache
def _lr_table() -> dict[str, Any]:
    return data_file("learning_rates.json")


def _pair(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
        low, high = float(value[0]), float(value[1])
        return (low, high) if 0 <= low <= high else None
    return None


def lr_range(
    info: ModelInfo | None,
    optimizer: str = "adamw",
    *,
    from_scratch: bool = False,
    peft: bool = False,
    model_type: str | None = None,
    overrides: Mapping | None = None,
    family: str | None = None,
) -> tuple[float, float, str] | None:
    """(low, high, label): peak learning rates outside [low, high] deserve a warning; None when no range is known.

    Precedence: from-scratch > PEFT/LoRA > the checkpoint's family > ``family`` > the base family of
    ``model_type`` (or of ``info.model_type``) > "default". ``overrides`` is ``[tool.bertlint] learning-rate``: keys are
    family keys, ``default``, ``lora``, ``from-scratch`` or checkpoint ids; values ``[lo, hi]`` or
    ``{optimizer: [lo, hi]}``; it wins over the built-in table. An unknown family has no built-in range
    (speech, vision and unlisted models are not BERT): only a configured ``default`` gives it one."""
    table = _lr_table()
    kind = _lr_kind(optimizer)
    if from_scratch:
        key = "from_scratch"
    elif peft:
        key = "lora"
    else:
        key = (info.family if info else None) or family or family_for_model_type(model_type or (info.model_type if info else None)) or "default"
    entry = table.get(key, {"label": "a model of unknown family"})

    if overrides:
        norm = lambda k: str(k).lower().replace("_", "-")  # noqa: E731
        table_keys = {norm(k): v for k, v in overrides.items()}
        for k, v in overrides.items():  # "FacebookAI/roberta-large" also matches "roberta-large"
            table_keys.setdefault(norm(k).rsplit("/", 1)[-1], v)
        names = [norm(key)] + (["peft"] if key == "lora" else [])
        if info and key not in ("from_scratch", "lora"):
            names = [norm(info.id), norm(info.id).rsplit("/", 1)[-1]] + names
        for name in names:
            value = table_keys.get(name)
            if isinstance(value, Mapping):
                value = {str(k).lower(): v for k, v in value.items()}.get(kind)
            if (pair := _pair(value)) is not None:
                return (*pair, f"{entry['label']} with {_OPT_LABEL[kind]} (from [tool.bertlint] learning-rate)")

    if kind in entry:
        return (float(entry[kind][0]), float(entry[kind][1]), f"{entry['label']} with {_OPT_LABEL[kind]}")
    if "adamw" not in entry:
        return None
    low, high = entry["adamw"]
    return (float(low), float(high), f"{entry['label']} (AdamW range; none published for {_OPT_LABEL[kind]})")


# --------------------------------------------------------------------------- what a module exports


@functools.cache
def _exports() -> dict[str, frozenset[str]]:
    return {module: frozenset(entry["names"]) for module, entry in data_file("exports.json").items() if module != "_doc"}


def exported_names(module: str) -> frozenset[str] | None:
    """Every name `from module import NAME` imports in some release of its library (data/exports.json), or None when
    bertlint does not have the module's list."""
    return _exports().get(module)


# --------------------------------------------------------------------------- removed APIs no rule reports (stops)

Release = tuple[int, ...]


@functools.cache
def _removed() -> dict[str, Any]:
    return data_file("removed.json")["libraries"]


def _release(text: str) -> Release:
    parts = tuple(int(p) for p in text.split("."))
    return parts + (0,) * (3 - len(parts))


def removal_libraries() -> tuple[str, ...]:
    """The package names of the libraries of data/removed.json outside transformers and the libraries around it (those
    with releases of their own there): the target stage resolves their targets as it does those (a pin, else the
    installed one, else the newest release)."""
    return tuple(name for name, group in _removed().items() if "latest" in group)


def brought_by(library: str) -> dict[str, Any] | None:
    """What release of `library` each release of the library that brings it requires (data/removed.json `required_by`:
    keras of tensorflow): {"library": the one that brings it, "specifiers": its "X.Y" -> the specifier it requires}."""
    return _removed().get(library, {}).get("required_by")


def removed_import(module: str, name: str | None, releases: Mapping[str, Release]) -> bool:
    """Does `import module` (`name` None) or `from module import name` raise ImportError on the target `releases`
    (package name -> release; a library missing from it is unknown: False), because its library removed the module, a
    module above it, or the name (data/removed.json)? A module's own file beside the script is the caller's to rule out."""
    for library, names, removed in _removed_names().get(module, ()) if name else ():
        if name in names and (release := releases.get(library)) is not None and release >= removed:
            return True
    # the module, one below it, or one imported from its parent (`from torchtext import legacy`)
    for path in (module, f"{module}.{name}") if name else (module,):
        parts = path.split(".")
        for depth in range(1, len(parts) + 1):
            found = _removed_modules().get(".".join(parts[:depth]))
            if found is not None and (release := releases.get(found[0])) is not None and release >= found[1]:
                return True
    return False


@functools.cache
def _removed_names() -> dict[str, list[tuple[str, frozenset[str], Release]]]:
    """Module -> (library, names, the release that removed them) of data/removed.json's `imports` with `names`."""
    found: dict[str, list[tuple[str, frozenset[str], Release]]] = {}
    for library, group in _removed().items():
        for entry in group.get("imports", ()):
            if "names" in entry:
                found.setdefault(entry["module"], []).append((library, frozenset(entry["names"]), _release(entry["removed"])))
    return found


@functools.cache
def _removed_modules() -> dict[str, tuple[str, Release]]:
    """Module -> (library, the release that removed it and every module below it), from data/removed.json's `imports`
    without `names` (`module`, or `modules` removed by the same release)."""
    found: dict[str, tuple[str, Release]] = {}
    for library, group in _removed().items():
        for entry in group.get("imports", ()):
            if "names" not in entry:
                for module in entry.get("modules", [entry.get("module")]):
                    removed = _release(entry["removed"])
                    found[module] = (library, min(removed, found.get(module, (library, removed))[1]))
    return found


def before_post_init(library: str, releases: Mapping[str, Release]) -> frozenset[str]:
    """The methods that a subclass of `library`'s `*PreTrainedModel` base may not call in its `__init__` before
    `self.post_init()` on the target `releases` (data/removed.json: `init_weights` from transformers 5.0 on)."""
    release = releases.get(library)
    return frozenset(method for entry in _removed().get(library, {}).get("before_post_init", ()) if release is not None
                     and release >= _release(entry["removed"]) for method in entry["methods"])


def model_from_pretrained(library: str) -> str:
    """The callable `from_pretrained` of any (PyTorch) model class of `library`, as `removed_keywords` knows it: what the
    data/removed.json `keywords` entries without `functions` are of."""
    return f"{library}.<model class>.from_pretrained"


def removed_keywords(callable_: str, releases: Mapping[str, Release]) -> frozenset[str]:
    """The keywords the callable `callable_` no longer takes on the target `releases`: passing one raises TypeError. A
    function by its qualified name (`pandas.read_csv`, data/removed.json `keywords` with `functions`), or
    `model_from_pretrained(library)` (`keywords` without `functions`)."""
    return frozenset(name for library, names, removed in _removed_keyword_index().get(callable_, ())
                     if (release := releases.get(library)) is not None and release >= removed for name in names)


@functools.cache
def _removed_keyword_index() -> dict[str, list[tuple[str, frozenset[str], Release]]]:
    """Callable -> (library, keywords, the release that removed them) of data/removed.json's `keywords`."""
    found: dict[str, list[tuple[str, frozenset[str], Release]]] = {}
    for library, group in _removed().items():
        for entry in group.get("keywords", ()):
            for callable_ in entry.get("functions", [model_from_pretrained(library)]):
                found.setdefault(callable_, []).append((library, frozenset(entry["names"]), _release(entry["removed"])))
    return found


def removed_methods(cls: str, releases: Mapping[str, Release]) -> frozenset[str]:
    """The methods that an instance of the library class `cls` (`pandas.DataFrame`) no longer has on the target
    `releases` (data/removed.json `methods`): calling one raises AttributeError."""
    return frozenset(name for library, group in _removed().items() if (release := releases.get(library)) is not None
                     for entry in group.get("methods", ()) if entry["class"] == cls and release >= _release(entry["removed"])
                     for name in entry["names"])


def removed_hooks(module: str, method: str, releases: Mapping[str, Release]) -> tuple[str, ...]:
    """The hooks of a module class whose definition makes `Trainer.method` of the library `module` names (its import
    name's top: `pytorch_lightning`, `lightning`) raise on the target `releases` (data/removed.json `hooks`)."""
    return tuple(hook for library, group in _removed().items() if (release := releases.get(library)) is not None
                 for entry in group.get("hooks", ()) if entry["module"] == module and release >= _release(entry["removed"])
                 for hook in entry["methods"].get(method, ()))


# --------------------------------------------------------------------------- calls refused by their arguments (stops)

class BestModelCheck(NamedTuple):
    """transformers' `TrainingArguments.__post_init__` check of `load_best_model_at_end=True` (data/refusals.json):
    the keywords that set the evaluation strategy (`eval_strategy`, its old name `evaluation_strategy`), the strategies
    it compares (`strategies`; any other value, `"best"` among them, is not this check's), and each field's default."""
    eval_keywords: tuple[str, ...]
    strategies: frozenset[str]
    defaults: Mapping[str, Any]


@functools.cache
def _refusals() -> dict[str, Any]:
    return data_file("refusals.json")["transformers"]


def keyword_only_config(name: str, releases: Mapping[str, Release]) -> bool:
    """Does transformers' config class `name` refuse every positional argument on the target `releases` (a release
    at or after data/refusals.json's 'since'; an unknown target: False)?"""
    entry = _refusals()["keyword_only_configs"]
    release = releases.get("transformers")
    return release is not None and release >= _release(entry["since"]) and name in entry["classes"]


def best_model_check(name: str, releases: Mapping[str, Release]) -> BestModelCheck | None:
    """The `load_best_model_at_end` check of transformers' training-arguments class `name` on the target `releases`,
    or None where the target predates it, is unknown, or the class is not one whose defaults are known."""
    entry = _refusals()["best_model_strategies"]
    release = releases.get("transformers")
    if release is None or release < _release(entry["since"]) or name not in entry["classes"]:
        return None
    return BestModelCheck(tuple(entry["eval_keywords"]), frozenset(entry["strategies"]), entry["defaults"])


def exclusive_keywords(name: str, releases: Mapping[str, Release]) -> tuple[str, ...]:
    """The keywords that transformers' class `name` refuses all together on the target `releases` (data/refusals.json
    'exclusive_keywords': `Trainer(model=..., model_init=...)` from 5.2 on), or () where it accepts them."""
    entry = _refusals()["exclusive_keywords"]
    release = releases.get("transformers")
    return tuple(entry["keywords"]) if release is not None and release >= _release(entry["since"]) and name in entry["classes"] else ()


# The class name data/refusals.json gives any transformers tokenizer (its call `tok(...)` the method `__call__`).
TOKENIZER = "<tokenizer>"


class ValueRefusal(NamedTuple):
    """A keyword whose value a transformers method refuses (data/refusals.json 'keyword_values'): a constant of
    `values`, or one that starts with one of `prefixes`."""
    keyword: str
    values: frozenset[str]
    prefixes: tuple[str, ...]

    def refuses(self, value: Any) -> bool:
        return isinstance(value, str) and (value in self.values or value.startswith(self.prefixes))


def refused_values(name: str, method: str, releases: Mapping[str, Release]) -> tuple[ValueRefusal, ...]:
    """The keyword values that the method `method` of transformers' class `name` (`TOKENIZER`: any tokenizer; its
    construction: `__init__`) refuses on the target `releases` (`return_tensors="tf"` of a tokenizer's call from 5.0,
    `BitsAndBytesConfig(bnb_4bit_compute_dtype="torch.bfloat16")` from 4.30), () where it refuses none or the target is
    unknown."""
    release = releases.get("transformers")
    return tuple(ValueRefusal(entry["keyword"], frozenset(entry.get("values", ())), tuple(entry.get("prefixes", ())))
                 for entry in _refusals()["keyword_values"] if release is not None and release >= _release(entry["since"])
                 and name in entry["classes"] and method in entry["methods"])


def closed_keywords(name: str, releases: Mapping[str, Release]) -> frozenset[str] | None:
    """Every keyword that transformers' class `name` takes in some release up to the target `releases`, where that is
    known for certain (data/refusals.json 'closed_keywords': `TrainingArguments`, a dataclass, and `Trainer`, whose
    `__init__` takes no `**kwargs` but on 3.1-3.5, where it asserts them empty, from 2.9 through 5.24): any other
    keyword raises. None for another class, or a target outside that range or unknown."""
    release = releases.get("transformers")
    for entry in _refusals()["closed_keywords"]:
        if release is not None and name in entry["classes"] and _release(entry["since"]) <= release <= _release(entry["through"]):
            return frozenset(entry["keywords"]) | frozenset(entry["classes"][name])
    return None


class Conflict(NamedTuple):
    """Keywords a call refuses together (data/refusals.json 'conflicting_keywords'): one of `any_true` given a constant
    that is true, and every one of `not_none` given a value certainly not None."""
    any_true: tuple[str, ...]
    not_none: tuple[str, ...]


def load_conflicts(releases: Mapping[str, Release]) -> tuple[Conflict, ...]:
    """The keywords that `from_pretrained` of a transformers PyTorch model class refuses together on the target
    `releases` (data/refusals.json 'conflicting_keywords': `load_in_8bit=True` beside `quantization_config=` on 4.38 to
    4.57), () where it refuses none or the target is unknown."""
    release = releases.get("transformers")
    return tuple(Conflict(tuple(entry["any_true"]), tuple(entry["not_none"])) for entry in _refusals()["conflicting_keywords"]
                 if release is not None and _release(entry["since"]) <= release and release[:2] <= _release(entry["through"])[:2])


class Driven(NamedTuple):
    """What a library drives in a subclass of one of its classes (data/driven.json): the `methods` only the library
    calls, and the `wrappers` (qualified name -> (position, keyword) of the instance, the keywords that make the
    wrapper's constructor call those methods)."""
    methods: frozenset[str]
    wrappers: Mapping[str, tuple[int, str, frozenset[str]]]


@functools.cache
def _driven() -> dict[str, Driven]:
    table: dict[str, Driven] = {}
    for row in data_file("driven.json")["classes"]:
        wrappers = {name: (*entry["dataset"], frozenset(entry["driving_keywords"])) for name, entry in row["wrappers"].items()}
        table.update(dict.fromkeys(row["bases"], Driven(frozenset(row["methods"]), wrappers)))
    return table


def driven(base: str | None) -> Driven | None:
    """What the library drives in a subclass of `base` (a qualified name: `torch.utils.data.Dataset`), or None."""
    return _driven().get(base or "")


# --------------------------------------------------------------------------- checkpoint traits (BL209, BL210, BL306)


@functools.cache
def _traits() -> dict[str, Any]:
    data = data_file("traits.json")
    compiled = {key: re.compile("|".join(f"(?:{p})" for p in data[key]["patterns"])) for key in ("without_pad_token", "pads_on_the_right")}
    family = data["t5_family"]
    compiled["t5"] = re.compile("|".join(f"(?:{p})" for p in family["checkpoint_patterns"]))
    compiled["fp16_tolerant"] = re.compile("|".join(f"(?:{p})" for p in family["fp16_tolerant"]["patterns"]))
    return {
        **compiled, "t5_types": frozenset(family["model_types"]), "t5_prefixes": tuple(family["class_prefixes"]),
        "overflowing_prefixes": tuple(family["classes_of_overflowing_checkpoints"]),
    }


def _trait(key: str, checkpoint: Any) -> bool:
    return isinstance(checkpoint, str) and _traits()[key].fullmatch(_clean_id(checkpoint).lower()) is not None


def tokenizer_lacks_pad_token(checkpoint: Any) -> bool:
    """The hub checkpoint's tokenizer loads with no pad token (data/traits.json "without_pad_token")."""
    return _trait("without_pad_token", checkpoint)


def tokenizer_pads_right(checkpoint: Any) -> bool:
    """The hub checkpoint's tokenizer pads on the right unless told otherwise (data/traits.json "pads_on_the_right")."""
    return _trait("pads_on_the_right", checkpoint)


def _class_prefixed(class_name: str | None, prefixes: tuple[str, ...]) -> bool:
    name = re.sub(r"^(TF|Flax)(?=[A-Z])", "", (class_name or "").rsplit(".", 1)[-1])
    return any(name.startswith(prefix) and _CLASS_SUFFIX.fullmatch(name[len(prefix) :]) for prefix in prefixes)


def is_t5_family(*, checkpoint: Any = None, class_name: str | None = None, info: ModelInfo | None = None) -> bool:
    """T5, mT5, UMT5, LongT5 (Flan-T5 and ByT5 are T5): by a known checkpoint's model_type, its hub id, or the class."""
    traits = _traits()
    if info is not None and info.model_type:
        return info.model_type in traits["t5_types"]
    return _trait("t5", checkpoint) or _class_prefixed(class_name, traits["t5_prefixes"])


def t5_overflows_fp16(*, checkpoint: Any = None, class_name: str | None = None, info: ModelInfo | None = None) -> bool:
    """A T5-family model whose activations overflow float16: a known checkpoint other than the original t5-small and
    t5-base, or an mT5/UMT5/LongT5 class (every checkpoint of theirs is v1.1-style). An unknown T5 checkpoint: False."""
    if _trait("fp16_tolerant", checkpoint):
        return False
    known = isinstance(checkpoint, str) and (info is not None or _trait("t5", checkpoint))
    if known:
        return is_t5_family(checkpoint=checkpoint, info=info)
    return _class_prefixed(class_name, _traits()["overflowing_prefixes"])


# --------------------------------------------------------------------------- memory

_PRECISIONS = {"fp32": "fp32", "float32": "fp32", "amp": "amp", "fp16": "amp", "bf16": "amp", "mixed": "amp", "bf16_pure": "bf16_pure", "pure_bf16": "bf16_pure"}
_WEIGHT_BYTES = {"fp32": 4, "amp": 6, "bf16_pure": 2}  # amp: fp32 master + 16-bit copy
_GRAD_BYTES = {"fp32": 4, "amp": 4, "bf16_pure": 2}
_STATE_BYTES = {"adamw": 8, "adam": 8, "adamw_8bit": 2, "sgd_momentum": 4, "sgd": 0, "adafactor": 4}  # fp32 states
_STATE_LABEL = {"adamw": "AdamW states", "adam": "Adam states", "adamw_8bit": "8-bit AdamW states",
                "sgd_momentum": "SGD momentum", "sgd": "SGD states", "adafactor": "Adafactor states"}  # fmt: skip
# Per layer s·b·h·(c_lin + slope·(ffn/4h − 1) + c_att·a·s/h) bytes, CUDA (1-byte dropout masks).
_ACTIVATION = {"fp32": (66, 32, 9), "amp": (42, 16, 7), "bf16_pure": (34, 16, 5)}


def _optimizer(name: str) -> tuple[str, bool]:
    """(memory kind, known?)"""
    n = name.lower().replace("-", "_")
    if n in _STATE_BYTES:
        return n, True
    if "adafactor" in n:
        return "adafactor", True
    if "8bit" in n or "8_bit" in n:
        return "adamw_8bit", True
    if n.startswith("sgd"):
        return ("sgd_momentum" if "momentum" in n else "sgd"), True
    return "adamw", "adam" in n


@dataclass(frozen=True, repr=False)
class MemoryEstimate:
    """Training memory of a model by part, in bytes, and how it was estimated."""

    weights: int
    gradients: int
    optimizer_states: int
    activations: int
    lm_head: int
    overhead: int
    total: int
    precision: str
    attention: str
    notes: tuple[str, ...] = ()
    batch_size: int = 0
    seq_len: int = 0
    optimizer: str = "adamw"

    def breakdown(self) -> str:
        gib = lambda n: f"{n / GiB:.1f} GiB"  # noqa: E731
        parts = [f"weights {gib(self.weights)}"]
        if self.optimizer_states:
            parts.append(f"{_STATE_LABEL.get(self.optimizer, 'optimizer states')} {gib(self.optimizer_states)}")
        forward = [f"activations {gib(self.activations)} (batch {self.batch_size} × {self.seq_len})"]
        if self.lm_head:
            forward.append(f"LM-head logits {gib(self.lm_head)}")
        gradients = f"gradients {gib(self.gradients)}"
        if self.gradients > self.activations + self.lm_head:
            parts.append(gradients)
            aside = f"{' and '.join(forward)}: freed as the gradients are made"
        else:
            parts += forward
            aside = f"{gradients}: made as the activations are freed"
        parts.append(f"CUDA context {gib(self.overhead)}")
        small = min(self.gradients, self.activations + self.lm_head) < GiB / 20  # shows as 0.0 GiB: not worth the words
        return " + ".join(parts) + f" = {gib(self.total)}" + ("" if small else f" ({aside})")


def estimate_training_memory(
    info: ModelInfo,
    *,
    batch_size: int,
    seq_len: int,
    precision: str = "fp32",
    optimizer: str = "adamw",
    attention: str = "sdpa",
    grad_accum: int = 1,
    gradient_checkpointing: bool = False,
    trainable_params: int | None = None,
    lm_head: bool = False,
    target_len: int | None = None,
) -> MemoryEstimate:
    """Lower bound of peak GPU memory for one training step (api-facts.md §9).

    ``batch_size`` is the per-step micro-batch (gradient accumulation does not change memory).
    ``precision``: "fp32" | "amp" (fp16/bf16 autocast, fp32 master weights) | "bf16_pure".
    ``attention``: "eager" keeps the a·s² softmax/dropout tensors; "sdpa"/"flash" drop them (GPU kernels).
    ``trainable_params``: PEFT/frozen layers: gradients and optimizer states only for these.
    ``target_len``: for an encoder-decoder, the decoder's (label) length: its layers and the LM head run at it,
    the encoder's at ``seq_len``; without it every layer counts at ``seq_len``."""
    mode = _PRECISIONS.get(precision.lower())
    if mode is None:
        raise ValueError(f"unknown precision {precision!r}; use 'fp32', 'amp' or 'bf16_pure'")
    attn = attention.lower()
    if not (attn in ("eager", "sdpa") or attn.startswith("flash")):
        raise ValueError(f"unknown attention {attention!r}; use 'eager', 'sdpa' or 'flash'")
    if not (info.params and info.hidden_size and info.total_layers and info.num_attention_heads):
        raise ValueError(f"{info.id}: parameter count and sizes are needed for a memory estimate")
    opt, known = _optimizer(optimizer)
    notes = ["lower bound: measured peaks run 15-20% higher (allocator caching, temporaries)"]
    if not known:
        notes.append(f"optimizer {optimizer!r} not recognised: assumed AdamW (8 bytes of state per parameter)")
    if grad_accum > 1:
        notes.append(f"gradient accumulation ×{grad_accum} does not change per-step memory")

    params = info.params
    trainable = params if trainable_params is None else trainable_params
    state_bytes = _STATE_BYTES[opt] / (2 if mode == "bf16_pure" and opt != "adamw_8bit" else 1)  # states in bf16
    weights = params * _WEIGHT_BYTES[mode]
    gradients = trainable * _GRAD_BYTES[mode]
    states = round(trainable * state_bytes)

    s, b, h, a = seq_len, batch_size, info.hidden_size, info.num_attention_heads
    c_lin, slope, c_att = _ACTIVATION[mode]
    c_lin += slope * ((info.intermediate_size or 4 * h) / (4 * h) - 1)
    if attn != "eager":
        c_att = 0
    def per_layer(length: int) -> float:
        return length * b * (h * c_lin + c_att * a * length)

    if target_len is not None and info.num_decoder_layers:  # the decoder runs at the label length, not the source's
        stacks = [(info.num_layers or 0, s), (info.num_decoder_layers, target_len)]
    else:
        stacks = [(info.total_layers, s)]
    if gradient_checkpointing:  # only each layer's input is kept, plus one layer being recomputed
        kept = 2 if mode == "bf16_pure" else 4
        activations = sum(n * kept * length * b * h for n, length in stacks) + max(per_layer(length) for n, length in stacks if n)
        notes.append("gradient checkpointing: layer inputs kept, one layer recomputed at a time")
    else:
        activations = sum(n * per_layer(length) for n, length in stacks)
    logits_len = target_len if target_len is not None and info.num_decoder_layers else s
    head = 8 * logits_len * b * (info.vocab_size or 0) if lm_head else 0  # fp32 logits + log-softmax copy
    activations = round(activations)
    # The forward's activations (and logits) and the gradients are never all held at once: gradients are set to None
    # between steps (torch >= 2.0's zero_grad, the Trainer's) and each layer's appear in backward as its activations
    # are freed. So the bound is the larger of the two, beside weights and optimizer states (measured on an H200,
    # torch 2.11: bert-large fp32, batch 32 × 512, SDPA: 29.1 GiB allocated at the peak; this bound 28.5 GiB, the sum of all four 29.8).
    total = weights + states + max(activations + head, gradients) + CUDA_CONTEXT_BYTES
    return MemoryEstimate(
        weights=weights, gradients=gradients, optimizer_states=states, activations=activations, lm_head=head,
        overhead=CUDA_CONTEXT_BYTES, total=total, precision=mode, attention=attn, notes=tuple(notes),
        batch_size=batch_size, seq_len=seq_len, optimizer=opt,
    )  # fmt: skip


def max_fitting_batch(info: ModelInfo, budget_bytes: int, **kwargs: Any) -> int:
    """Largest micro-batch whose estimate fits in ``budget_bytes`` (0 if not even batch 1).
    ``kwargs`` are those of :func:`estimate_training_memory` except ``batch_size``."""

    def fits(batch: int) -> bool:
        return estimate_training_memory(info, batch_size=batch, **kwargs).total <= budget_bytes

    if not fits(1):
        return 0
    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
        if high > 1 << 24:
            return low
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if fits(mid) else (low, mid)
    return low


@functools.cache
def pandas_frame_attributes() -> frozenset[str]:
    """The public attributes and methods of a pandas DataFrame (data/pandas_frame.json): `df.NAME` for one of them is
    never the column NAME."""
    return frozenset(data_file("pandas_frame.json")["attributes"])
