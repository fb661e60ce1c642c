"""BL613: huggingface_hub API drift: `HfFolder` (removed in 1.0)."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class HubDrift(LibraryDrift):
    code = "BL613"
    name = "huggingface-hub-api-drift"
    exact = "each name is checked against the huggingface_hub release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "a huggingface_hub class or function the target huggingface_hub release removed (`HfFolder` in 1.0)"
    fix = None
    fix_title = ""
    needs = ("huggingface_hub",)
    library = "huggingface_hub"
