"""Child side: one probe per rule code. Each runs in its own process (see child.py) and returns
a verdict dict: status, evidence, measurements (numbers only) and setup (what was run).

A probe gets the values the parent lifted from the script (never the script itself) and rebuilds
just the failing step: a tokenizer call, a forward, a loss, one Trainer step, a short fine-tune.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import keyword
import logging
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch
import transformers
from transformers import AutoConfig

from bertlint.verify import build, training_steps
from bertlint.verify.verdicts import Env, error_text, verdict

HEAD_CLASSES = {
    "seq-cls": "AutoModelForSequenceClassification", "token-cls": "AutoModelForTokenClassification",
    "causal-lm": "AutoModelForCausalLM", "masked-lm": "AutoModelForMaskedLM", "seq2seq": "AutoModelForSeq2SeqLM",
}  # fmt: skip
GiB = 1 << 30


@dataclass(frozen=True)
class Effect:
    """An effect measured once per seed against the margin its probe needs. It is confirmed only when every seed
    clears the margin, so that float differences between CPU kernels (ATEN_CPU_CAPABILITY) cannot flip the verdict;
    the spread over the seeds is reported with it either way."""

    what: str
    values: tuple[float, ...]
    margin: float
    shown: str = ".0%"  # format of the values and the margin

    @property
    def clears(self) -> bool:
        return min(self.values) >= self.margin

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def spread(self) -> float:
        return max(self.values) - min(self.values)

    def text(self) -> str:
        f = self.shown
        over = f" ({min(self.values):{f}}–{max(self.values):{f}} over {len(self.values)} seeds)" if len(self.values) > 1 else ""
        clear = "every seed clears it" if len(self.values) > 1 else "it clears it"
        verdict_text = clear if self.clears else "within the spread of the margin" if max(self.values) >= self.margin else "below it"
        return f"{self.what} {self.mean:{f}}{over} against a margin of {self.margin:{f}}: {verdict_text}"

    def numbers(self) -> dict[str, float]:
        return dict(effect=self.mean, effect_min=min(self.values), effect_max=max(self.values), effect_spread=self.spread,
                    margin=self.margin, seeds=len(self.values))  # fmt: skip


def decided(effect: Effect, evidence: str, setup: str = "", **measurements: float) -> dict[str, Any]:
    """The verdict of a probe that measures an effect: its margin and spread close the evidence and join the measurements."""
    return verdict("confirmed" if effect.clears else "not_confirmed", f"{evidence}; {effect.text()}", setup, **measurements, **effect.numbers())


def _ids(config, shape: tuple[int, ...], device: str, generator: torch.Generator | None = None) -> torch.Tensor:
    """Ordinary token ids: above the special tokens, never the pad id."""
    high = min(config.vocab_size, 1000)
    ids = torch.randint(10, high, shape, generator=generator)
    return ids.masked_fill(ids == build.pad_id(config), 11).to(device)


def _accepts(model, name: str) -> bool:
    return name in inspect.signature(model.forward).parameters


# --------------------------------------------------------------------------- tokenizer calls (BL101, BL102)


@contextlib.contextmanager
def _captured():
    """Python warnings and transformers log records raised inside the block, as text."""
    seen: list[str] = []

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    logger = logging.getLogger("transformers")
    handler, level = Handler(logging.WARNING), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield seen
        seen.extend(f"{w.category.__name__}: {w.message}" for w in caught)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


GENERIC_TEXTS = "generic texts: the script's texts are not literal"


def _tokenize(spec: dict, env: Env, generic: list[str]):
    """Run the flagged call with its keywords on the script's literal texts, else on `generic` ones;
    -> (lengths or None, error or None, messages, setup)."""
    p = spec["params"]
    texts = p.get("texts") or generic
    tok, setup = build.tokenizer_for(p["tokenizer"], env.workdir, p.get("texts") or ())
    setup = f"{setup}; " + (f"the script's {len(texts)} distinct texts" if p.get("texts") else GENERIC_TEXTS)
    method = p.get("method", "__call__")
    call = tok if method == "__call__" else getattr(tok, method, None)
    if call is None:
        call, setup = tok, f"{setup}; `{method}` no longer exists in transformers {transformers.__version__}, so the tokenizer was called directly"
    arg: Any = texts if p.get("batch", True) else texts[0]
    with _captured() as messages:
        try:
            out = call(arg, **p["kwargs"])
        except Exception as exc:  # the error is the evidence
            return None, exc, messages, setup
    ids = out["input_ids"]
    lengths = [len(x) for x in ids] if p.get("batch", True) else [len(ids)]
    return lengths, None, messages, setup


def _relevant(messages: list[str], *needles: str) -> str:
    hit = next((m for m in messages if any(n in m for n in needles)), "")
    return f"; it said: {hit.splitlines()[0][:240]}" if hit else ""


def probe_pad_to_max_length(spec: dict, env: Env) -> dict:
    kwargs = spec["params"]["kwargs"]
    target = kwargs.get("max_length")
    lengths, error, messages, setup = _tokenize(spec, env, [build.text_of(3), build.text_of(6, 50)])
    if error is not None:
        return verdict("confirmed", f"transformers {transformers.__version__} raises {error_text(error)}", setup, max_length=target)
    said = _relevant(messages, "pad_to_max_length", "not recognized")
    shown = f"lengths {lengths}" if len(lengths) > 1 else f"{lengths[0]} tokens"
    if kwargs.get("pad_to_max_length") is True and target and any(n != target for n in lengths):
        how = "ignored `pad_to_max_length=True`" + (" silently" if not said else "")
        return verdict("confirmed", f"transformers {transformers.__version__} {how}: {shown} instead of max_length={target}{said}",
                       setup, output_length=max(lengths), max_length=target)  # fmt: skip
    if said:
        return verdict("confirmed", f"transformers {transformers.__version__} gave {shown}{said}", setup, output_length=max(lengths))
    return verdict("not_confirmed", f"transformers {transformers.__version__} accepted it without a warning: {shown}", setup, output_length=max(lengths))


def probe_max_length_effect(spec: dict, env: Env) -> dict:
    target = spec["params"]["kwargs"].get("max_length")
    if not isinstance(target, int):
        return verdict("could_not_run", "the call's `max_length` is not a known number")
    long_words = min(target + 8, 4096)
    lengths, error, messages, setup = _tokenize(spec, env, [build.text_of(long_words, 20), build.text_of(3)])
    if error is not None:
        return verdict("could_not_run", f"the call itself failed: {error_text(error)}", setup)
    said = _relevant(messages, "max_length")
    if spec["params"].get("texts"):
        texts = f"the script's text{'s' if len(lengths) > 1 else ''}"
    else:
        texts = f"a {long_words}-word and a 3-word text" if len(lengths) > 1 else f"a {long_words}-word text"
    numbers = dict(output_length=max(lengths), max_length=target)
    if max(lengths) > target:
        return verdict("confirmed", f"{texts} came out at lengths {lengths}, not max_length={target}: nothing is cut to it{said}", setup, **numbers)
    if spec["params"].get("texts"):
        return verdict("not_confirmed", f"{texts} came out at lengths {lengths}: none is longer than max_length={target}, so nothing needed cutting", setup, **numbers)
    return verdict("not_confirmed", f"{texts} came out at max_length={target}", setup, **numbers)


# --------------------------------------------------------------------------- forwards and losses


def probe_position_limit(spec: dict, env: Env) -> dict:
    p = spec["params"]
    model, setup = build.model_for(spec["model"], "AutoModel", env.device)
    encoder = model.get_encoder() if getattr(model.config, "is_encoder_decoder", False) else model
    length = p["length"]
    limit = getattr(model.config, "max_position_embeddings", None)
    ids = _ids(model.config, (1, length), env.device)
    kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if _accepts(encoder, "token_type_ids"):
        kwargs["token_type_ids"] = torch.zeros_like(ids)
    try:
        with torch.no_grad():
            encoder(**kwargs)
        _sync(env)
    except Exception as exc:  # IndexError / size mismatch on CPU, device-side assert on CUDA
        return verdict("confirmed", f"a forward of {length} tokens fails: {error_text(exc)}", setup, length=length, position_limit=limit or 0)
    return verdict("not_confirmed", f"a forward of {length} tokens ran without error (position table: {limit})", setup, length=length, position_limit=limit or 0)


FEW_NEW_TOKENS = 6  # greedy tokens a generation probe compares
COMPARED_ROWS = 4  # padded texts run alone as the reference


@dataclass
class Batch:
    """A padded batch as the script's tokenizer call makes it, with the model's pad id in the pad positions."""

    texts: list[str]
    ids: torch.Tensor
    mask: torch.Tensor
    side: str
    pad: int
    tokenizer: Any
    setup: str

    @property
    def padded(self) -> list[int]:
        """Rows with at least one pad position."""
        return [r for r in range(len(self.texts)) if not bool(self.mask[r].all())]

    def alone(self, row: int) -> torch.Tensor:
        return self.ids[row][self.mask[row].bool()][None]

    def shown(self, row: int) -> str:
        text = self.texts[row]
        return repr(text if len(text) <= 40 else text[:37] + "...")

    def names(self, ids: torch.Tensor) -> str:
        """Token ids as the tokenizer spells them (`#id` past its vocabulary)."""
        size = len(self.tokenizer)
        return "[" + " ".join(self.tokenizer.convert_ids_to_tokens(int(i)) if int(i) < size else f"#{int(i)}" for i in ids) + "]"


def _batch(spec: dict, config, env: Env) -> Batch:
    """The script's texts (or generic ones, said so) tokenized and padded the way its tokenizer call pads."""
    p = spec["params"]
    literal = p.get("texts")
    texts = literal or [build.text_of(5), build.text_of(10, 20)]
    tok, tok_setup = build.tokenizer_for(p.get("tokenizer") or {}, env.workdir, literal or ())
    cached = tok_setup.startswith("cached")
    side = p.get("padding_side") or (tok.padding_side if cached else build.family_padding_side(spec["model"].get("model_type")))
    tok.padding_side = side
    if tok.pad_token is None:  # a causal family's tokenizer: the model's pad id goes in below
        tok.pad_token = tok.eos_token or tok.unk_token
    kwargs = {"padding": p.get("padding", "longest"), "truncation": bool(p.get("truncation"))}
    if not cached and not getattr(config, "is_encoder_decoder", False) and spec["model"].get("head") == "causal-lm":
        kwargs["add_special_tokens"] = False  # the generated vocabulary is BERT's: a decoder-only family's text has no [CLS] ... [SEP]
    if p.get("max_length"):
        kwargs["max_length"] = p["max_length"]
    with _captured():
        enc = tok(texts, return_tensors="pt", **kwargs)
    eos = _first_id(getattr(config, "eos_token_id", None))
    own = _first_id(getattr(config, "pad_token_id", None))
    pad = eos if eos is not None and (p.get("pad_is_eos") or own is None) else own if own is not None else 0
    ids = enc["input_ids"].clamp(max=config.vocab_size - 1).masked_fill(enc["attention_mask"] == 0, pad)
    source = f"the script's {len(texts)} distinct texts" if literal else "generic texts of 5 and 10 words: the script's texts are not literal"
    how = f"padding={kwargs['padding']!r}" + (f", max_length={p['max_length']}" if p.get("max_length") else "") + f", {side} side"
    return Batch(texts, ids.to(env.device), enc["attention_mask"].to(env.device), side, pad, tok, f"{source} ({how}); {tok_setup}")


def _first_id(value: Any) -> int | None:
    value = value[0] if isinstance(value, (list, tuple)) and value else value
    return value if isinstance(value, int) and value >= 0 else None


def _no_padding(batch: Batch, setup: str, what: str = "the mask") -> dict:
    lengths = sorted({int(n) for n in batch.mask.sum(-1)})
    return verdict("not_confirmed", f"the batch has no padding: its {len(batch.texts)} texts are all {lengths[0]} tokens long, so {what} changes nothing",
                   setup, pad_tokens=0, texts=len(batch.texts))  # fmt: skip


def probe_attention_mask(spec: dict, env: Env) -> dict:
    if spec["params"].get("generate"):
        return _probe_generation(spec, env)
    model, setup = build.model_for(spec["model"], "AutoModel", env.device)
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
    batch = _batch(spec, model.config, env)
    setup = f"{setup}; {batch.setup}"
    rows = batch.padded[:COMPARED_ROWS]
    if not rows:
        return _no_padding(batch, setup)
    d_without = d_with = scale = 0.0
    with torch.no_grad():
        without = model(input_ids=batch.ids).last_hidden_state
        masked = model(input_ids=batch.ids, attention_mask=batch.mask).last_hidden_state
        for row in rows:
            real = batch.mask[row].bool()
            alone = model(input_ids=batch.alone(row)).last_hidden_state[0]
            d_without = max(d_without, float((without[row, real] - alone).abs().max()))
            d_with = max(d_with, float((masked[row, real] - alone).abs().max()))
            scale = max(scale, float(alone.abs().max()))
    pads = int((batch.mask == 0).sum())
    text = (f"max |Δ| of a padded text's hidden states, in the batch vs alone: {d_without:.3g} without the mask, {d_with:.3g} with it "
            f"(|h| up to {scale:.2g}; {len(batch.padded)} of {len(batch.texts)} texts padded, {batch.side} side)")  # fmt: skip
    # the masked batch's difference is the float noise of batching: the effect must stand 100× above it, and above 1e-4·|h|
    effect = Effect("|Δ| without the mask relative to |h|", (d_without / max(scale, 1.0),), max(1e-4, 100 * d_with / max(scale, 1.0)), ".2g")
    if not effect.clears:
        text += ": the pad tokens do not reach the real ones"
    return decided(effect, text, setup, max_abs_diff_without_mask=d_without, max_abs_diff_with_mask=d_with, hidden_abs_max=scale, pad_tokens=pads)


def _probe_generation(spec: dict, env: Env) -> dict:
    """Greedy `generate` of the padded batch without the mask (as the script calls it), with it, and of each padded text alone."""
    seq2seq = spec["model"].get("head") == "seq2seq" or spec["model"].get("architecture") == "seq2seq"
    model, setup = build.model_for(spec["model"], HEAD_CLASSES["seq2seq" if seq2seq else "causal-lm"], env.device)
    batch = _batch(spec, model.config, env)
    setup = f"{setup}; {batch.setup}"
    rows = batch.padded[:COMPARED_ROWS]
    if not rows:
        return _no_padding(batch, setup)
    gen = model.generation_config
    eos = _first_id(gen.eos_token_id)
    choice = spec["params"].get("generate_pad")
    pad = eos if choice == "eos" else batch.pad if choice == "pad" else _first_id(gen.pad_token_id)
    pad = eos if pad is None else pad  # generate's own fallback when neither the script nor the model names one
    options = dict(max_new_tokens=FEW_NEW_TOKENS, min_new_tokens=FEW_NEW_TOKENS, do_sample=False, num_beams=1, pad_token_id=pad)
    encoder_decoder = getattr(model.config, "is_encoder_decoder", False)
    if encoder_decoder and gen.decoder_start_token_id is None:
        options["decoder_start_token_id"] = batch.pad

    def generated(ids: torch.Tensor, **extra: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """(the new tokens, the logits of each step: [steps, batch, vocab])."""
        torch.manual_seed(0)
        with torch.no_grad(), _captured():
            out = model.generate(input_ids=ids, **options, **extra, output_logits=True, return_dict_in_generate=True)
        tokens = out.sequences[:, 1:] if encoder_decoder else out.sequences[:, ids.shape[1]:]
        return tokens, torch.stack(out.logits).float()

    (without, without_logits), (masked, masked_logits) = generated(batch.ids), generated(batch.ids, attention_mask=batch.mask)
    alone = {row: generated(batch.alone(row)) for row in rows}
    changed = [row for row in rows if not torch.equal(without[row], alone[row][0][0])]
    changed_masked = [row for row in rows if not torch.equal(masked[row], alone[row][0][0])]
    numbers = dict(new_tokens=FEW_NEW_TOKENS, padded_rows=len(batch.padded), compared_rows=len(rows),
                   rows_changed_without_mask=len(changed), rows_changed_with_mask=len(changed_masked), pad_tokens=int((batch.mask == 0).sum()))  # fmt: skip
    head_text = (f"greedy `generate` of {FEW_NEW_TOKENS} new tokens ({len(batch.padded)} of {len(batch.texts)} texts padded, {batch.side} side, "
                 f"pad id {batch.pad}, generate's pad_token_id {pad}{' = eos' if pad == eos else ''})")  # fmt: skip
    if not changed:
        # The same tokens: a small random-weight model's greedy choice moves little. The logits of each step (the same
        # prefixes, since the tokens agree) say whether the pads reached the real tokens, as the forward's probe measures.
        d_without = max(float((without_logits[:, row] - alone[row][1][:, 0]).abs().max()) for row in rows)
        d_with = max(float((masked_logits[:, row] - alone[row][1][:, 0]).abs().max()) for row in rows)
        scale = max(float(alone[row][1].abs().max()) for row in rows)
        effect = Effect("|Δ| of the logits without the mask relative to |l|", (d_without / max(scale, 1.0),), max(1e-4, 100 * d_with / max(scale, 1.0)), ".2g")
        text = (f"{head_text}: every padded text generates the same tokens in the batch without the mask as alone; max |Δ| of its "
                f"next-token logits, in the batch vs alone: {d_without:.3g} without the mask, {d_with:.3g} with it (|l| up to {scale:.2g})")  # fmt: skip
        if not effect.clears:
            inferred = pad != eos and bool((batch.ids == pad).any())
            text += f": `generate` infers the mask from pad_token_id={pad}, which is not the eos id" if inferred else ": the pad tokens do not reach the real ones"
        return decided(effect, text, setup, **numbers, max_abs_diff_without_mask=d_without, max_abs_diff_with_mask=d_with, logits_abs_max=scale)
    row = changed[0]
    text = (f"{head_text}: text {row + 1} {batch.shown(row)} alone → {batch.names(alone[row][0][0])}; in the batch without the mask → "
            f"{batch.names(without[row])}; with it → {batch.names(masked[row])}")  # fmt: skip
    if len(changed) > 1:
        text += f" ({len(changed)} of {len(rows)} padded texts compared changed)"
    if changed_masked and batch.side == "right" and not encoder_decoder:
        text += "; with right padding even the masked batch continues after the pads: pad on the left to generate"
    return verdict("confirmed", text, setup, **numbers)


PAD_ERROR = "does not have a padding token"  # tokenization_utils_base.py: "Asking to pad but the tokenizer does not have a padding token"


def probe_missing_pad(spec: dict, env: Env) -> dict:
    """BL209: the script's padding request (call, `tokenizer.pad` or collator) on its tokenizer as loaded, with no pad token set."""
    p = spec["params"]
    tok, setup = build.unpadded_tokenizer(p["tokenizer"], env.workdir)
    rows = [tok(build.text_of(3))["input_ids"], tok(build.text_of(1, 50))["input_ids"]]
    examples = f"two examples of {len(rows[0])} and {len(rows[1])} tokens"
    try:
        with _captured():
            if p["kind"] == "collator":
                options = {"mlm": p["mlm"]} if "mlm" in p else {}
                what = f"`{p['collator']}(tokenizer{''.join(f', {k}={v!r}' for k, v in options.items())})` on {examples}"
                out = getattr(transformers, p["collator"])(tok, **options)([{"input_ids": ids} for ids in rows])
            elif p["kind"] == "pad":
                what = f"`tokenizer.pad(...)` of {examples}"
                out = tok.pad({"input_ids": rows}, **p["kwargs"])
            else:
                texts = p.get("texts") or [build.text_of(3), build.text_of(1, 50)]
                what = f"the tokenizer call on {'the script' + chr(39) + 's texts' if p.get('texts') else 'generic texts'}"
                out = tok(texts if p.get("batch", True) else texts[0], **p["kwargs"])
    except Exception as exc:
        if PAD_ERROR in str(exc):
            return verdict("confirmed", f"{what} raises {error_text(exc)}", setup, pad_token_set=0)
        return verdict("not_confirmed", f"{what} fails, but with another error first: {error_text(exc)}", setup, pad_token_set=0)
    lengths = sorted({len(row) for row in out["input_ids"]}) if out["input_ids"] and isinstance(out["input_ids"][0], (list, torch.Tensor)) else [len(out["input_ids"])]
    return verdict("not_confirmed", f"{what} ran without error (pad token {tok.pad_token!r}; lengths {lengths})", setup, pad_token_set=int(tok.pad_token is not None))


def probe_right_padding(spec: dict, env: Env) -> dict:
    """BL210: greedy `generate` (with the mask) of the prompts padded on the right and on the left, vs each padded prompt alone."""
    model, setup = build.model_for(spec["model"], HEAD_CLASSES["causal-lm"], env.device)
    right, left = (_batch({**spec, "params": {**spec["params"], "padding_side": side}}, model.config, env) for side in ("right", "left"))
    setup = f"{setup}; {right.setup.replace(', right side', '')}"
    rows = right.padded[:COMPARED_ROWS]
    if not rows:
        return _no_padding(right, setup, "the padding side")
    options = dict(max_new_tokens=FEW_NEW_TOKENS, min_new_tokens=FEW_NEW_TOKENS, do_sample=False, num_beams=1, pad_token_id=right.pad)

    def new_tokens(ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, list[str]]:
        torch.manual_seed(0)
        with torch.no_grad(), _captured() as said:
            out = model.generate(input_ids=ids, attention_mask=mask, **options)
        return out[:, ids.shape[1]:], said

    on_right, said = new_tokens(right.ids, right.mask)
    on_left, _ = new_tokens(left.ids, left.mask)
    alone = {row: new_tokens(right.alone(row), torch.ones_like(right.alone(row)))[0][0] for row in rows}
    changed_right = [row for row in rows if not torch.equal(on_right[row], alone[row])]
    changed_left = [row for row in rows if not torch.equal(on_left[row], alone[row])]
    numbers = dict(new_tokens=FEW_NEW_TOKENS, padded_rows=len(right.padded), compared_rows=len(rows), rows_changed_right=len(changed_right),
                   rows_changed_left=len(changed_left), pad_tokens=int((right.mask == 0).sum()))  # fmt: skip
    head = f"greedy `generate` of {FEW_NEW_TOKENS} new tokens with the attention mask ({len(right.padded)} of {len(right.texts)} prompts padded, pad id {right.pad})"
    if not changed_right:
        return verdict("not_confirmed", f"{head}: every padded prompt generates the same tokens in the right-padded batch as alone", setup, **numbers)
    row = changed_right[0]
    text = (f"{head}: prompt {row + 1} {right.shown(row)} alone → {right.names(alone[row])}; right-padded in the batch → "
            f"{right.names(on_right[row])}; left-padded → {left.names(on_left[row])}")  # fmt: skip
    text += f" ({len(changed_right)} of {len(rows)} compared changed on the right, {len(changed_left)} on the left)"
    return verdict("confirmed", text + _relevant(said, "right-padding", "padding_side"), setup, **numbers)


def _length(shape: list, longest: int) -> int:
    """Sequence length a tokenizer call yields: fixed `max_length`, or the batch's longest text cut at it."""
    kind, cap = shape
    return cap if kind == "max_length" else min(longest, cap or longest)


def probe_label_length(spec: dict, env: Env) -> dict:
    p = spec["params"]
    caps = [c for _, c in (p["inputs"], p["labels"]) if c]
    longest = max(caps, default=17) + 7  # a batch whose longest text exceeds every cap
    n_in, n_lab = _length(p["inputs"], longest), _length(p["labels"], longest)
    model, setup = build.model_for(spec["model"], HEAD_CLASSES[p["head"]], env.device)
    ids = _ids(model.config, (2, n_in), env.device)
    labels = torch.zeros(2, n_lab, dtype=torch.long, device=env.device) if p["head"] == "token-cls" else _ids(model.config, (2, n_lab), env.device)
    return _loss_verdict(model, setup, env, {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels},
                         f"inputs of {n_in} tokens with labels of {n_lab}", input_length=n_in, label_length=n_lab)  # fmt: skip


def probe_label_range(spec: dict, env: Env) -> dict:
    p = spec["params"]
    values = p["labels"]
    model, setup = build.model_for(spec["model"], HEAD_CLASSES[p["head"]], env.device, num_labels=p["num_labels"])
    ids = _ids(model.config, (len(values), 8), env.device)
    labels = torch.tensor(values, device=env.device)
    if p["head"] == "token-cls":
        labels = torch.full((len(values), 8), -100, device=env.device).index_put_((torch.arange(len(values)), torch.ones(len(values), dtype=torch.long)), labels)
    return _loss_verdict(model, setup, env, {"input_ids": ids, "labels": labels},
                         f"labels {sorted(set(values))} with num_labels={p['num_labels']}", num_labels=p["num_labels"], max_label=max(values))  # fmt: skip


def probe_dtype(spec: dict, env: Env) -> dict:
    p = spec["params"]
    if p["target"] == "loss":
        labels = torch.tensor(p["labels"], device=env.device)
        logits = torch.randn(len(p["labels"]), p["num_labels"], device=env.device)
        try:
            torch.nn.functional.cross_entropy(logits, labels.float())
        except Exception as exc:
            return verdict("confirmed", f"cross-entropy on {p['num_labels']} classes with float targets fails: {error_text(exc)}", "torch.nn.functional.cross_entropy", num_labels=p["num_labels"])
        return verdict("not_confirmed", "cross-entropy accepts these float targets", "torch.nn.functional.cross_entropy", num_labels=p["num_labels"])
    model, setup = build.model_for(spec["model"], HEAD_CLASSES[p["head"]], env.device, num_labels=p["num_labels"])
    ids = _ids(model.config, (4, 8), env.device)
    labels = torch.arange(4, device=env.device) % p["num_labels"]
    if p["head"] == "token-cls":
        labels = labels[:, None].expand(4, 8).contiguous()
    if p["target"] == "labels":
        return _loss_verdict(model, setup, env, {"input_ids": ids, "labels": labels.float()}, "float labels", num_labels=p["num_labels"])
    return _loss_verdict(model, setup, env, {"input_ids": ids.float(), "labels": labels}, "float input_ids", num_labels=p["num_labels"])


def probe_added_tokens(spec: dict, env: Env) -> dict:
    model, setup = build.model_for(spec["model"], "AutoModel", env.device)
    rows = model.get_input_embeddings().num_embeddings
    length, added, origin = _tokenizer_growth(spec)
    if length is None:
        length, origin = rows, "assumed equal to the embedding rows"
    if added == 0:
        return verdict("not_confirmed", "the tokens are already in the vocabulary: nothing is added", setup)
    new = list(range(length, length + added))
    ids = torch.cat([_ids(model.config, (3,), "cpu"), torch.tensor(new)])[None].to(env.device)
    encoder = model.get_encoder() if getattr(model.config, "is_encoder_decoder", False) else model
    numbers = dict(embedding_rows=rows, largest_new_id=new[-1], tokenizer_length=length)
    try:
        with torch.no_grad():
            encoder(input_ids=ids)
        _sync(env)
    except Exception as exc:
        return verdict("confirmed", f"the new token id {new[-1]} (tokenizer length {length}, {origin}) overflows the {rows}-row embedding: {error_text(exc)}", setup, **numbers)
    return verdict("not_confirmed", f"the new ids {new[0]}–{new[-1]} fit the {rows}-row embedding (tokenizer length {length}, {origin}): it has {rows - length} spare rows", setup, **numbers)


def _tokenizer_growth(spec: dict) -> tuple[int | None, int, str]:
    """(len(tokenizer) before, tokens added, where the length comes from): the cached tokenizer, else the published length."""
    model, p = spec["model"], spec["params"]
    if model.get("checkpoint"):
        try:
            tok = transformers.AutoTokenizer.from_pretrained(model["checkpoint"], local_files_only=True)
        except Exception:  # not cached
            tok = None
        if tok is not None:
            before = len(tok)
            return before, tok.add_tokens(p["tokens"]) if p.get("tokens") else p["count"], "cached tokenizer"
    known = build.TOKENIZER_LENGTHS.get((model.get("model_type"), model.get("vocab_size")))
    return known, p["count"], "published tokenizer length" if known else ""


def _loss_verdict(model, setup: str, env: Env, inputs: dict, what: str, **measurements: float) -> dict:
    try:
        with torch.no_grad():
            loss = model(**inputs).loss
        _sync(env)
    except Exception as exc:
        return verdict("confirmed", f"the forward with {what} fails: {error_text(exc)}", setup, **measurements)
    return verdict("not_confirmed", f"the forward with {what} computes a loss ({float(loss):.3g})", setup, **measurements)


def _sync(env: Env) -> None:
    if env.device == "cuda":
        torch.cuda.synchronize()


# --------------------------------------------------------------------------- float16 and T5 (BL306)

# The fp32 magnitude of a pretrained T5's activations: transformers#10956 printed ±2.77e+05 in mT5's hidden states
# (#5651: 66,246 at t5-base's feed-forward output), above float16's largest value, 65,504.
T5_ACTIVATION_PEAK = 2.75e5


def probe_fp16_t5(spec: dict, env: Env) -> dict:
    """BL306: a forward with labels of the T5-family model in fp32 and in float16 (autocast, or `.half()` weights)."""
    p = spec["params"]
    model, setup = build.model_for(spec["model"], HEAD_CLASSES["seq2seq"], env.device, decoder_start_token_id=0)
    outputs = [m for name, m in model.named_modules() if name.endswith("DenseReluDense.wo")]
    if not outputs:
        return verdict("could_not_run", f"{type(model).__name__} has no T5 feed-forward layers (`DenseReluDense.wo`) to measure", setup)
    peak = {"abs": 0.0, "overflowed": 0}

    def watch(module, inputs, out) -> None:
        peak["abs"] = max(peak["abs"], float(out.detach().float().abs().max()))
        peak["overflowed"] += int(bool(torch.isinf(out).any()))

    for module in outputs:
        module.register_forward_hook(watch)
    g = torch.Generator().manual_seed(0)
    ids, labels = _ids(model.config, (2, 16), env.device, g), _ids(model.config, (2, 8), env.device, g)

    def forward() -> tuple[float, int, float, int]:
        peak.update(abs=0.0, overflowed=0)
        with torch.no_grad():
            out = model(input_ids=ids, labels=labels)
        return float(out.loss), int((~torch.isfinite(out.logits)).sum()), peak["abs"], peak["overflowed"]

    loss32, _, peak32, _ = forward()
    if not setup.startswith("cached"):  # random weights stay far below float16's range: scale them as pretrained ones are
        scale = T5_ACTIVATION_PEAK / max(peak32, 1e-6)
        with torch.no_grad():
            for module in outputs:
                module.weight.mul_(scale)
        loss32, _, peak32, _ = forward()
        setup += (f"; each feed-forward output projection (wo) scaled ×{scale:.3g}, so that the fp32 activations reach the magnitude "
                  "measured in a pretrained mT5 (±2.8e+05, transformers#10956)")  # fmt: skip
    if p["precision"] == "half":
        how = "float16 weights (`.half()`)"
        model.half()
        loss16, bad, peak16, overflowed = forward()
    else:
        how = "float16 autocast"
        with torch.autocast(env.device, dtype=torch.float16):
            loss16, bad, peak16, overflowed = forward()
    numbers = dict(fp32_loss=loss32, fp16_loss=loss16, fp32_activation_peak=peak32, fp16_max=65504.0, nonfinite_logits=bad,
                   overflowed_layers=overflowed, feed_forward_layers=len(outputs))  # fmt: skip
    text = (f"fp32: loss {loss32:.3g}, feed-forward outputs up to {peak32:.3g} (float16's largest value is 65504); {how}: loss {loss16:.3g}, "
            f"{bad} non-finite logits, inf in the feed-forward output of {overflowed} of {len(outputs)} layers; "
            f"margin: the fp32 peak is {peak32 / 65504:.2g}× float16's largest value, and a NaN/inf is exact")  # fmt: skip
    if not math.isfinite(loss16) or bad:
        return verdict("confirmed", text, setup, **numbers)
    if overflowed:
        text += ": transformers' T5 clamps inf in float16 hidden states (T5Block), which kept this loss finite"
    return verdict("not_confirmed", text, setup, **numbers)


# --------------------------------------------------------------------------- training (BL301, BL401)

FINE_TUNE = {"steps": 24, "batch": 8, "seq": 8, "vocab": 200, "max_width": 768}
SPIKE_MARGIN = 3.0  # BL301, a high rate: its loss peak at least 3× the reference rate's
STALL_MARGIN = 0.1  # BL301, a low rate: its weights move at most a tenth of the reference rate's


def probe_learning_rate(spec: dict, env: Env) -> dict:
    p = spec["params"]
    lr, ref = p["lr"], p["reference_lr"]
    runs = {rate: _fine_tune(spec["model"], rate, p["optimizer"], env) for rate in (lr, ref)}
    (flagged, moved, setup), (base, base_moved, _) = runs[lr], runs[ref]

    def curve(losses: list[float]) -> str:
        return f"{losses[0]:.2f} → {_tail(losses):.2f} (peak {max(losses):.2f})"

    text = f"{FINE_TUNE['steps']} steps at {lr:.3g}: loss {curve(flagged)}; at the reference {ref:.3g}: {curve(base)}"
    numbers = dict(lr=lr, reference_lr=ref, loss_first=flagged[0], loss_last=_tail(flagged), loss_peak=max(flagged),
                   reference_loss_last=_tail(base), reference_loss_peak=max(base), weight_change=moved, reference_weight_change=base_moved)  # fmt: skip
    if lr > p["high"]:
        nan = not all(math.isfinite(x) for x in flagged)
        spiked = max(flagged) >= SPIKE_MARGIN * max(base)
        margins = f"; margin: a peak {SPIKE_MARGIN:g}× the reference's ({max(flagged) / max(base):.2g}× here), a NaN, or a loss that does not go down"
        stuck = _tail(flagged) >= flagged[0] and _tail(base) < base[0]
        if nan or spiked or stuck:
            why = "the loss turns NaN" if nan else f"the loss spikes to {max(flagged):.2f}, {max(flagged) / max(base):.1f}× the reference's peak" if spiked else "the loss does not go down"
            # what a pretrained checkpoint loses: each step moves its weights this much further than a fine-tune should
            moved_text = f"; the weights moved {moved:.2g} of their norm vs {base_moved:.2g} at the reference ({moved / max(base_moved, 1e-12):.0f}×)"
            return verdict("confirmed", f"unstable ({why}): {text}{moved_text}{margins}", setup, **numbers)
        return verdict("not_confirmed", f"trains as well as the reference: {text}{margins}", setup, **numbers)
    margins = f"; margin: the weights move at most {STALL_MARGIN:g}× the reference's ({moved / max(base_moved, 1e-12):.2g}× here)"
    if moved <= STALL_MARGIN * base_moved:
        return verdict("confirmed", f"stalls: the weights moved {moved:.2g} (relative) vs {base_moved:.2g} at the reference; {text}{margins}", setup, **numbers)
    return verdict("not_confirmed", f"the weights moved {moved:.2g} vs {base_moved:.2g} at the reference; {text}{margins}", setup, **numbers)


def _tail(losses: list[float]) -> float:
    tail = losses[-5:]
    return sum(tail) / len(tail)


def _fine_tune(model_spec: dict, lr: float, optimizer: str, env: Env) -> tuple[list[float], float, str]:
    """Seeded steps on a separable task (the label is a marker token); -> losses, relative weight change, setup.

    The width is the family's (capped on CPU), since the step size that breaks a model grows as it narrows."""
    width = model_spec.get("hidden_size") or 768
    heads = model_spec.get("num_attention_heads") or 12
    if env.device == "cpu" and width > FINE_TUNE["max_width"]:
        heads, width = max(1, heads * FINE_TUNE["max_width"] // width), FINE_TUNE["max_width"]
    size = {"hidden": width, "heads": heads, "layers": 1, "ffn": 4 * width, "vocab": FINE_TUNE["vocab"], "positions": 64}
    built = build.config_for(model_spec, size=size, num_labels=2, pad_token_id=0)
    encoder_decoder = getattr(built.config, "is_encoder_decoder", False)
    if encoder_decoder:  # T5/BART's classifier shifts the ids right from the decoder start and reads the state at the eos
        built.config.decoder_start_token_id = 0
    torch.manual_seed(0)
    with torch.device(env.device):
        model = transformers.AutoModelForSequenceClassification.from_config(built.config)
    model.train()
    start = [w.detach().clone() for w in model.parameters()]
    opt = _optimizer(optimizer, model.parameters(), lr)
    g = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(FINE_TUNE["steps"]):
        y = torch.randint(0, 2, (FINE_TUNE["batch"],), generator=g)
        x = torch.randint(10, FINE_TUNE["vocab"], (FINE_TUNE["batch"], FINE_TUNE["seq"]), generator=g)
        x[:, 1] = 5 + y
        if encoder_decoder:
            x[:, -1] = _first_id(built.config.eos_token_id) or 1
        loss = model(input_ids=x.to(env.device), labels=y.to(env.device)).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(float(loss))
    with torch.no_grad():
        moved = math.sqrt(sum(float((w - s).pow(2).sum()) for w, s in zip(model.parameters(), start)))
        norm = math.sqrt(sum(float(s.pow(2).sum()) for s in start))
    return losses, moved / norm, built.setup


def _optimizer(kind: str, params, lr: float):
    if kind == "adafactor":
        return transformers.Adafactor(params, lr=lr, scale_parameter=False, relative_step=False, warmup_init=False)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    return torch.optim.AdamW(params, lr=lr)


OVERLAP = 0.7  # class means 0.7·√2 ≈ 1 σ apart: a balanced classifier gets ~69% right, like a hard real task
SEEDS = (0, 1, 2)  # the synthetic-task probes train once per seed: a verdict needs every seed past its margin
RECALL_MARGIN = 0.1  # BL401: class weights must raise the minority's recall by at least 10 points


def probe_imbalance(spec: dict, env: Env) -> dict:
    """The script's class proportions on synthetic, overlapping classes: the minority's recall unweighted vs weighted, per seed."""
    counts = {str(label): n for label, n in spec["params"]["counts"]}
    labels = list(counts)
    scale = min(1.0, 20000 / sum(counts.values()))
    sizes = [max(1, round(counts[c] * scale)) for c in labels]
    minority = min(range(len(labels)), key=lambda i: sizes[i])
    weights = torch.tensor([sum(sizes) / (len(sizes) * n) for n in sizes])
    unweighted, weighted = [], []
    for seed in SEEDS:
        g = torch.Generator().manual_seed(seed)
        means = torch.eye(len(labels), 8) * OVERLAP
        x = torch.cat([means[i] + torch.randn(n, 8, generator=g) for i, n in enumerate(sizes)])
        y = torch.cat([torch.full((n,), i) for i, n in enumerate(sizes)])
        test_x = torch.cat([means[i] + torch.randn(1000, 8, generator=g) for i in range(len(labels))])
        test_y = torch.arange(len(labels)).repeat_interleave(1000)
        unweighted.append(_recalls(x, y, test_x, test_y, None, seed)[minority])
        weighted.append(_recalls(x, y, test_x, test_y, weights, seed)[minority])
    ratio = max(sizes) / min(sizes)
    shown = ", ".join(f"{c!s}: {counts[c]}" for c in labels)
    mean_u, mean_w = sum(unweighted) / len(SEEDS), sum(weighted) / len(SEEDS)
    text = (f"counts {shown} ({ratio:.1f}:1); a classifier trained on these proportions recalls class {labels[minority]} "
            f"{mean_u:.0%} of the time unweighted vs {mean_w:.0%} with class weights")  # fmt: skip
    effect = Effect("the weights' gain in minority recall", tuple(w - u for u, w in zip(unweighted, weighted)), RECALL_MARGIN)
    return decided(effect, text, "linear classifier on synthetic overlapping classes with the script's proportions",
                   ratio=ratio, minority_recall_unweighted=mean_u, minority_recall_weighted=mean_w)  # fmt: skip


def _recalls(x, y, test_x, test_y, weights, seed: int) -> list[float]:
    torch.manual_seed(seed)
    n = int(y.max()) + 1
    net = torch.nn.Linear(x.shape[1], n)
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    for _ in range(150):
        opt.zero_grad()
        loss_fn(net(x), y).backward()
        opt.step()
    with torch.no_grad():
        pred = net(test_x).argmax(-1)
    return [float((pred[test_y == c] == c).float().mean()) for c in range(n)]


KERAS_EPSILON = 1e-7  # keras.backend.epsilon()


def keras_on_probabilities(kind: str, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The Keras cross-entropies with `from_logits=False`, in torch, as tf_keras/backend.py computes them
    (keras-team/tf-keras@389fb51): sparse clips the outputs to [ε, 1-ε] and takes a softmax cross-entropy of their log;
    categorical divides by their sum, clips and takes -Σ t·log; binary clips and takes -(t·log(p+ε) + (1-t)·log(1-p+ε))."""
    targets = torch.nn.functional.one_hot(labels, logits.shape[-1]).to(logits.dtype)
    p = _keras_probabilities(kind, logits).clamp(KERAS_EPSILON, 1 - KERAS_EPSILON)
    if kind == "sparse":
        return torch.nn.functional.cross_entropy(p.log(), labels)
    if kind == "categorical":
        return -(targets * p.log()).sum(-1).mean()
    return -(targets * (p + KERAS_EPSILON).log() + (1 - targets) * (1 - p + KERAS_EPSILON).log()).mean()


def _keras_probabilities(kind: str, logits: torch.Tensor) -> torch.Tensor:
    """What Keras clips: the outputs themselves, or (categorical) the outputs divided by their sum."""
    return logits / logits.sum(-1, keepdim=True) if kind == "categorical" else logits


# A linear head (initializer_range 0.02, as transformers' heads) on well-separated synthetic classes: from_logits=True
# learns them, so what the probability loss does to the same head is the loss's doing, not the task's.
KERAS_TASK = {"examples": 512, "dim": 32, "separation": 3.0, "steps": 100, "lr": 0.01, "init_std": 0.02, "test": 2000}
KERAS_SEEDS = (0, 1, 2, 3, 4)
DEAD_MARGIN = 0.2  # BL404: at least a fifth of the logits left without a gradient by the clip, in every seed


def probe_keras_loss(spec: dict, env: Env) -> dict:
    """BL404: a classification head trained on one synthetic task with the script's Keras loss applied to its logits (as
    probabilities) and with `from_logits=True`, once per seed; reproduced in torch, not Keras. The effect is the clip's:
    the logits it sends past [ε, 1-ε] get no gradient at all, where a softmax cross-entropy gives every logit one."""
    p = spec["params"]
    k = min(p["num_labels"], 20)
    runs = [_keras_runs(p["kind"], k, seed) for seed in KERAS_SEEDS]
    dead = tuple(r["as_probabilities"]["dead"] - r["from_logits"]["dead"] for r in runs)

    def mean(name: str, key: str) -> float:
        return sum(r[name][key] for r in runs) / len(runs)

    labels = f"{k} classes" + ("" if p["num_labels_known"] else " (num_labels not known: 2 assumed)")
    text = (f"reproduced in torch, not Keras: a linear head on synthetic separable classes ({labels}), {KERAS_TASK['steps']} Adam steps, "
            f"{len(KERAS_SEEDS)} seeds; with `{p['loss']}` on its logits (clipped to [1e-7, 1-1e-7] as Keras does) "
            f"{mean('as_probabilities', 'dead'):.0%} of the training logits end outside the clip with no gradient, "
            f"{mean('as_probabilities', 'stuck'):.0%} of the examples with their own class's logit stuck below it, test accuracy "
            f"{mean('as_probabilities', 'accuracy'):.0%}; with from_logits=True {mean('from_logits', 'dead'):.0%} without a gradient, "
            f"test accuracy {mean('from_logits', 'accuracy'):.0%}")  # fmt: skip
    numbers = dict(dead_logits_as_probabilities=mean("as_probabilities", "dead"), dead_logits_from_logits=mean("from_logits", "dead"),
                   stuck_examples=mean("as_probabilities", "stuck"), accuracy_as_probabilities=mean("as_probabilities", "accuracy"),
                   accuracy_from_logits=mean("from_logits", "accuracy"), chance=1 / k, num_labels=k)  # fmt: skip
    effect = Effect("share of logits the clip leaves without a gradient (beyond from_logits=True)", dead, DEAD_MARGIN)
    return decided(effect, text, "torch re-implementation of tf_keras/backend.py's cross-entropies", **numbers)


def _keras_runs(kind: str, k: int, seed: int) -> dict[str, dict[str, float]]:
    """One seed of the task, trained with each loss; per loss: the share of training logits whose gradient is exactly 0,
    averaged over the steps, the share of examples whose own class's value ends at the lower clip, and the test accuracy."""
    t = KERAS_TASK
    g = torch.Generator().manual_seed(seed)
    means = torch.nn.functional.normalize(torch.randn(k, t["dim"], generator=g), dim=-1) * t["separation"]
    y = torch.randint(0, k, (t["examples"],), generator=g)
    x = means[y] + torch.randn(t["examples"], t["dim"], generator=g)
    test_y = torch.randint(0, k, (t["test"],), generator=g)
    test_x = means[test_y] + torch.randn(t["test"], t["dim"], generator=g)
    losses = {"as_probabilities": lambda z, target: keras_on_probabilities(kind, z, target), "from_logits": torch.nn.functional.cross_entropy}
    out = {}
    for name, loss_fn in losses.items():
        torch.manual_seed(seed)
        head = torch.nn.Linear(t["dim"], k)
        torch.nn.init.normal_(head.weight, std=t["init_std"])
        torch.nn.init.zeros_(head.bias)
        opt = torch.optim.Adam(head.parameters(), lr=t["lr"])
        dead = 0.0
        for _ in range(t["steps"]):
            opt.zero_grad()
            logits = head(x)
            logits.retain_grad()
            loss_fn(logits, y).backward()
            dead += float((logits.grad == 0).float().mean()) / t["steps"]
            opt.step()
        with torch.no_grad():
            own = _keras_probabilities(kind, head(x)).gather(1, y[:, None])
            out[name] = {"dead": dead, "stuck": float((own <= KERAS_EPSILON).float().mean()),
                         "accuracy": float((head(test_x).argmax(-1) == test_y).float().mean())}  # fmt: skip
    return out


# --------------------------------------------------------------------------- Trainer (BL402, BL603)


def _trainer_setup(spec: dict, env: Env, **args: Any):
    """A tiny model, a 2-example dataset and TrainingArguments that stay local and quiet."""
    model, setup = build.model_for(spec.get("model") or {"model_type": "bert"}, "AutoModelForSequenceClassification", env.device)
    rows = [{"input_ids": [12, 13, 14, 15], "attention_mask": [1, 1, 1, 1], "labels": i % 2} for i in range(2)]
    fields = transformers.TrainingArguments.__dataclass_fields__
    if env.device == "cpu":
        args["use_cpu" if "use_cpu" in fields else "no_cuda"] = True
    training_args = transformers.TrainingArguments(
        output_dir=str(env.workdir / "trainer"), per_device_train_batch_size=2, per_device_eval_batch_size=2, max_steps=1,
        report_to=[], save_strategy="no", logging_strategy="no", disable_tqdm=True, **args,
    )  # fmt: skip
    return model, rows, training_args, setup


def probe_eval_without_dataset(spec: dict, env: Env) -> dict:
    strategy = spec["params"]["eval_strategy"]
    field = "eval_strategy" if "eval_strategy" in transformers.TrainingArguments.__dataclass_fields__ else "evaluation_strategy"
    model, rows, args, setup = _trainer_setup(spec, env, **{field: strategy, "eval_steps": 1})
    try:
        trainer = transformers.Trainer(model=model, args=args, train_dataset=rows)
    except ValueError as exc:  # transformers >= 4.46 checks at construction
        return verdict("confirmed", f"`Trainer(...)` raises {error_text(exc)}", setup, training_steps=0)
    try:
        trainer.train()
    except ValueError as exc:  # older releases train first and fail at the first evaluation
        return verdict("confirmed", f"`trainer.train()` raises at the first evaluation: {error_text(exc)}", setup, training_steps=trainer.state.global_step)
    return verdict("not_confirmed", f"`Trainer(...)` and one step with {field}={strategy!r} ran without an eval_dataset", setup, training_steps=trainer.state.global_step)


def probe_compute_loss_signature(spec: dict, env: Env) -> dict:
    p = spec["params"]
    compute_loss = _override(p["class"], p["params"])
    trainer_class = type(p["class"], (transformers.Trainer,), {"compute_loss": compute_loss})
    model, rows, args, setup = _trainer_setup(spec, env)
    signature = f"compute_loss({', '.join(_param_text(x) for x in p['params'])})"
    trainer = trainer_class(model=model, args=args, train_dataset=rows)
    try:
        trainer.train()
    except TypeError as exc:
        return verdict("confirmed", f"one training step with `{signature}` raises {error_text(exc)}", setup, training_steps=trainer.state.global_step)
    return verdict("not_confirmed", f"one training step with `{signature}` ran", setup, training_steps=trainer.state.global_step)


def _param_text(param: dict) -> str:
    prefix = {"var_positional": "*", "var_keyword": "**"}.get(param["kind"], "")
    return f"{prefix}{param['name']}" + ("=..." if param.get("default") else "")


def _override(class_name: str, params: list[dict]) -> Callable:
    """A compute_loss with the user's parameter list and the stock body (the user's body is never run)."""
    names = [x["name"] for x in params]
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in names + [class_name]) or len(names) < 3:
        raise ValueError("the override's parameters cannot be rebuilt")
    parts, star = [], False
    for param in params:
        if param["kind"] == "keyword_only" and not star:
            parts.append("*")
            star = True
        star = star or param["kind"] == "var_positional"
        parts.append(_param_text(param).replace("=...", "=None"))
    self_, model, inputs = names[:3]
    flag = names[3] if len(params) > 3 and params[3]["kind"] == "positional" else "False"
    source = (f"def compute_loss({', '.join(parts)}):\n"
              f"    outputs = {model}(**{inputs})\n"
              f"    return (outputs.loss, outputs) if {flag} else outputs.loss\n")  # fmt: skip
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<{class_name}.compute_loss>", "exec"), namespace)  # our own generated source
    function = namespace["compute_loss"]
    function.__qualname__ = f"{class_name}.compute_loss"
    return function


# --------------------------------------------------------------------------- memory (BL501, BL502)


def probe_memory(spec: dict, env: Env) -> dict:
    p = spec["params"]
    estimate = p["estimate_bytes"] / GiB
    shape = f"batch {p['batch']} × {p['seq']}"
    if env.device != "cuda":
        return verdict("could_not_run", f"needs CUDA; the static lower bound is {estimate:.1f} GiB for {shape} against a {p['budget_gib']:g} GiB budget",
                       "", estimate_gib=estimate, budget_gib=p["budget_gib"])  # fmt: skip
    free = torch.cuda.mem_get_info()[0] / GiB
    built = build.config_for(spec["model"], size=None)  # memory depends on the real size
    precisions = ["fp32", "amp"] if spec["code"] == "BL501" else list(dict.fromkeys(["fp32", p["precision"]]))
    runs = {prec: _peak(built.config, p, prec) for prec in precisions}
    text = "; ".join(f"{_precision_name(prec)}: {_peak_text(r)}" for prec, r in runs.items())
    numbers = {f"{prec}_peak_gib": r["peak"] / GiB for prec, r in runs.items() if r["peak"] is not None}
    numbers |= {f"{prec}_step_seconds": r["seconds"] for prec, r in runs.items() if r["seconds"] is not None}
    allocations = (p["estimate_bytes"] - p["context_bytes"]) / GiB  # what torch's allocator must hold: the peaks below count only that
    numbers |= dict(estimate_gib=estimate, allocation_bound_gib=allocations, budget_gib=p["budget_gib"], free_gib=free)
    head = (f"one training step at {shape} (static lower bound {estimate:.1f} GiB: {allocations:.1f} GiB of torch allocations + the CUDA context; "
            f"budget {p['budget_gib']:g} GiB, {free:.1f} GiB free): {text}")
    setup = f"{built.setup}, {p['optimizer']}"
    if spec["code"] == "BL501":
        fp32, amp = runs["fp32"], runs["amp"]
        if amp["peak"] is None:
            return verdict("could_not_run", f"{head}; not even mixed precision fits this device", setup, **numbers)
        faster = None not in (amp["seconds"], fp32["seconds"]) and amp["seconds"] <= 0.75 * fp32["seconds"]
        saves = fp32["peak"] is None or amp["peak"] <= 0.9 * fp32["peak"] or faster
        return verdict("confirmed" if saves else "not_confirmed", head, setup, **numbers)
    peak = runs[p["precision"]]["peak"]
    if peak is None:
        status = "confirmed" if free > p["budget_gib"] else "could_not_run"
        return verdict(status, f"{head}; even batch 1 does not fit", setup, **numbers)
    return verdict("confirmed" if peak / GiB > p["budget_gib"] else "not_confirmed", head, setup, **numbers)


def _precision_name(precision: str) -> str:
    if precision in ("fp32", "bf16_pure"):
        return {"fp32": "fp32", "bf16_pure": "bf16 weights"}[precision]
    return "bf16 autocast" if torch.cuda.is_bf16_supported() else "fp16 autocast"


def _peak_text(run: dict) -> str:
    if run["peak"] is None:
        return "does not fit even at batch 1"
    shown = f"{run['peak'] / GiB:.1f} GiB allocated at the peak"
    if run["measured_batch"] != run["batch"]:
        shown += f" (extrapolated from batch {run['measured_batch']}, the largest that fit)"
    return shown + (f", {run['seconds']:.2f} s/step" if run["seconds"] is not None else "")


def _peak(config, p: dict, precision: str) -> dict:
    """Peak allocated memory of a training step at the script's batch; halves the batch until it fits and extrapolates."""
    batch, measured = p["batch"], {}
    while batch >= 1:
        try:
            measured[batch] = _step(config, p, precision, batch)
        except torch.cuda.OutOfMemoryError:
            batch //= 2
            continue
        if batch == p["batch"] or len(measured) == 2 or batch == 1:
            break
        batch //= 2
    if not measured:
        return {"peak": None, "seconds": None, "batch": p["batch"], "measured_batch": 0}
    top = max(measured)
    peak, seconds = measured[top]
    if top != p["batch"]:
        low = min(measured)
        slope = (peak - measured[low][0]) / (top - low) if low != top else p["activation_bytes_per_example"]
        peak, seconds = peak + slope * (p["batch"] - top), None
    return {"peak": peak, "seconds": seconds, "batch": p["batch"], "measured_batch": top}


def _step(config, p: dict, precision: str, batch: int) -> tuple[float, float]:
    """Peak bytes and seconds of the second of two training steps (optimizer states exist by then)."""
    model = opt = None
    try:
        gc.collect()
        torch.cuda.empty_cache()
        head = p["head"] if p["head"] in HEAD_CLASSES else "seq-cls"  # a bare or QA model trains like a classifier
        with torch.device("cuda"):
            model = getattr(transformers, HEAD_CLASSES[head]).from_config(config, attn_implementation=p["attention"])
        if precision == "bf16_pure":
            model.to(torch.bfloat16)
        model.train()
        if p.get("gradient_checkpointing"):
            model.gradient_checkpointing_enable()
        opt = _optimizer(p["optimizer_kind"], model.parameters(), 1e-5)
        ids = _ids(config, (batch, p["seq"]), "cuda")
        zeros = {"seq-cls": (batch,), "token-cls": (batch, p["seq"])}.get(head)
        labels = torch.zeros(zeros, dtype=torch.long, device="cuda") if zeros else ids
        if getattr(config, "is_encoder_decoder", False) and p.get("target"):  # the decoder runs at the labels' length, as the estimate counts it
            labels = _ids(config, (batch, p["target"]), "cuda")
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        autocast = torch.autocast("cuda", dtype=dtype) if precision == "amp" else contextlib.nullcontext()
        for step in range(2):
            if step == 1:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                start = time.perf_counter()
            with autocast:
                loss = model(input_ids=ids, labels=labels).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        return float(torch.cuda.max_memory_allocated()), time.perf_counter() - start
    finally:
        del model, opt
        gc.collect()
        torch.cuda.empty_cache()


def prepare(specs: list[dict]) -> None:
    """Import once, before the forks, the lazily loaded transformers modules the probes will use:
    each forked probe would otherwise import them again (seconds each). No tensor op runs here, so
    no thread pool exists yet when the probes fork."""
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    needed = {"Trainer", "TrainingArguments"} if any(s["code"] in ("BL402", "BL603") for s in specs) else set()
    for spec in specs:
        model_type = (spec.get("model") or {}).get("model_type") or "bert"
        needed.add(MODEL_MAPPING_NAMES.get(model_type, "BertModel"))
        with contextlib.suppress(Exception):  # an unknown family: the probe reports it
            AutoConfig.for_model(model_type)
    for name in needed:
        getattr(transformers, name, None)


PROBES: dict[str, Callable[[dict, Env], dict]] = {
    "BL101": probe_pad_to_max_length, "BL102": probe_max_length_effect, "BL104": probe_position_limit,
    "BL201": probe_attention_mask, "BL202": probe_label_length, "BL204": probe_label_range, "BL205": probe_dtype,
    "BL206": probe_added_tokens, "BL301": probe_learning_rate, "BL401": probe_imbalance,
    "BL402": probe_eval_without_dataset, "BL501": probe_memory, "BL502": probe_memory, "BL603": probe_compute_loss_signature,
    "BL209": probe_missing_pad, "BL210": probe_right_padding, "BL306": probe_fp16_t5, "BL404": probe_keras_loss, **training_steps.PROBES,
}  # fmt: skip
