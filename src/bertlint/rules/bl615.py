"""BL615: PEFT API drift: `prepare_model_for_int8_training` (removed in 0.10)."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class PeftDrift(LibraryDrift):
    code = "BL615"
    name = "peft-api-drift"
    exact = "each name is checked against the PEFT release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "a PEFT function the target PEFT release removed (`prepare_model_for_int8_training` in 0.10)"
    fix = None
    fix_title = ""
    needs = ("peft",)
    library = "peft"
