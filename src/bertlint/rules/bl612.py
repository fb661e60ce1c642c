"""BL612: datasets API drift: `load_metric` (removed in 3.0), `load_dataset(use_auth_token=...)` (3.0), `token=` before 2.14."""

from __future__ import annotations

from bertlint.rules.library_drift import LibraryDrift


class DatasetsDrift(LibraryDrift):
    code = "BL612"
    name = "datasets-api-drift"
    exact = "each name and keyword is checked against the datasets release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "a datasets function or keyword the target datasets release removed (`load_metric`, `use_auth_token=`) or does not have yet"
    needs = ("datasets",)
    library = "datasets"
