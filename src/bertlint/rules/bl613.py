"""BL613: huggingface_hub API drift: `HfFolder` and `Repository` (removed in 1.0), the login keywords `write_permission=` and `new_session=` (1.0), `skip_if_logged_in=` before 1.0."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class HubDrift(LibraryDrift):
    code = "BL613"
    name = "huggingface-hub-api-drift"
    exact = "each name and keyword is checked against the huggingface_hub release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "a huggingface_hub class, function or login keyword the target huggingface_hub release removed (`HfFolder`, `Repository`, `write_permission=` in 1.0) or does not have yet"
    fix = None
    fix_title = ""
    needs = ("huggingface_hub",)
    library = "huggingface_hub"
