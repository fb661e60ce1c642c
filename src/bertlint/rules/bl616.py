"""BL616: accelerate API drift: `Accelerator(fp16=True)` (removed in 0.16)."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class AccelerateDrift(LibraryDrift):
    code = "BL616"
    name = "accelerate-api-drift"
    exact = "each keyword is checked against the accelerate release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "an `Accelerator` keyword the target accelerate release removed (`fp16=True` in 0.16): TypeError"
    fix = None  # `fp16=True` -> `mixed_precision="fp16"` changes the value too: no rename to offer
    fix_title = ""
    needs = ("accelerate",)
    library = "accelerate"
