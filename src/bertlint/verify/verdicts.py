"""Child side: what a probe is given (`Env`) and what it gives back (`verdict`), shared by every probe (`probes.py`,
`training_steps.py`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Env:
    device: str  # "cpu" | "cuda"
    workdir: Path

    @property
    def label(self) -> str:
        if self.device != "cuda":
            return "cpu"
        import torch  # the child's, already imported there

        return f"cuda ({torch.cuda.get_device_name()})"


def verdict(status: str, evidence: str, setup: str = "", **measurements: float) -> dict[str, Any]:
    return {"status": status, "evidence": evidence, "setup": setup,
            "measurements": {k: v for k, v in measurements.items() if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}}  # fmt: skip


def error_text(exc: BaseException) -> str:
    first = next((line for line in str(exc).strip().splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first[:300]}"
