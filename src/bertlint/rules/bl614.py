"""BL614: TRL API drift: `SFTTrainer`/`DPOTrainer` keywords that moved to `SFTConfig`/`DPOConfig` (removed in 0.13)
and `tokenizer=` (renamed `processing_class=` in 0.12, removed in 0.16)."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class TrlDrift(LibraryDrift):
    code = "BL614"
    name = "trl-api-drift"
    exact = "each keyword is checked against the TRL release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "an `SFTTrainer`/`DPOTrainer` keyword the target TRL release moved to its config class or renamed (`max_seq_length=`, `beta=`, `tokenizer=`)"
    needs = ("trl",)
    library = "trl"
