"""BL612: datasets API drift: `load_metric` (removed in 3.0), `load_dataset(use_auth_token=...)` (3.0), `token=` before 2.14,
`trust_remote_code=` (ignored from 4.0) and a loading script's path (`load_dataset("squad.py")`: RuntimeError from 4.0)."""

from __future__ import annotations

from bertlint import versions
from bertlint.facts import Failure
from bertlint.rules import Context
from bertlint.rules.library_drift import LibraryDrift


class DatasetsDrift(LibraryDrift):
    code = "BL612"
    name = "datasets-api-drift"
    exact = "each name and keyword is checked against the datasets release the file targets (data/libraries.json, rows checked in the wheels)"
    summary = "a datasets function or keyword the target datasets release removed (`load_metric`, `use_auth_token=`, loading scripts) or does not have yet"
    needs = ("datasets",)
    library = "datasets"

    def check(self, ctx: Context) -> None:
        super().check(ctx)
        version, source = ctx.target(self.library)
        scripts = versions.data(self.library)["scripts"]
        removed = versions.parse_version(scripts["removed"])
        if version < removed:
            return
        for call in ctx.facts.calls_to(*scripts["callables"]):
            path = ctx.facts.arg_value(call, 0, "path", cli=False)  # a literal path: a default the command line may change is not one
            if not isinstance(path, str) or not path.endswith(".py"):
                continue
            script = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
            ctx.report(
                call.arg(0, "path"),
                f"`{call.qualname}` of the loading script `{path}`: datasets {versions.show(removed)} removed loading scripts "
                f"(target datasets {versions.show(version)} from {source}): this call raises {scripts['error'].format(name=script)}",
                help="load the dataset's data files instead (Parquet, CSV, JSON: `load_dataset(\"parquet\", data_files=...)`), or pin datasets<4.0",
                failure=Failure.of(scripts["error"], library=self.library),
            )
