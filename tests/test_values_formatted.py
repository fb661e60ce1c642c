"""f-strings of constants, checked against execution (the differential test's stand-ins): the value layer formats
each field the way Python does, and leaves unknown what it cannot format."""

from __future__ import annotations

import pytest

from test_values_differential import PRELUDE, run

KNOWN = {
    "constant-field": "AutoTokenizer.from_pretrained(f'{ \"bert-base-uncased\" }')\n",
    "fields-and-text": "AutoTokenizer.from_pretrained(f\"{'bert'}-base-{'uncased'}\")\n",
    "a-name": 'name = "bert"\nAutoTokenizer.from_pretrained(f"{name}-base-uncased")\n',
    "conversion": "AutoTokenizer.from_pretrained(f\"{'bert-base-uncased'!r}\"[1:-1])\n",
    "format-spec": 'x = 5e-05\ntorch.optim.AdamW(model.parameters(), lr=float(f"{x:.0e}"))\ntok(["a"], max_length=int(f"{128:d}"), truncation=True)\n',
}
UNKNOWN_HERE = {
    "escaped-brace": 'AutoTokenizer.from_pretrained(f"{{bert}}-base-uncased"[1:-1].replace("}", ""))\n',
    "field-not-constant": 'import os\nAutoTokenizer.from_pretrained(f"{os.getpid()}")\n',
}


def _asked(source: str) -> dict:
    outcome = run(PRELUDE + source, {})
    assert not outcome.details, "\n".join(outcome.details)
    return {key: found for key, found in outcome.results.items() if key[0] > PRELUDE.count("\n")}


@pytest.mark.parametrize("shape", KNOWN)
def test_an_fstring_of_constants_is_the_text_python_formats(shape: str):
    asked = _asked(KNOWN[shape])
    assert asked and all(found == "known" for found in asked.values()), asked


@pytest.mark.parametrize("shape", UNKNOWN_HERE)
def test_an_fstring_the_value_layer_cannot_format_is_unknown(shape: str):
    asked = _asked(UNKNOWN_HERE[shape])
    assert asked and all(found == "unknown" for found in asked.values()), asked
