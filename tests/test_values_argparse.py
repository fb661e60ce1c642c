"""argparse namespaces (`brain/config.py`), checked against execution on the differential test's stand-ins: an
option's default is given only where Python's argparse leaves it in the namespace; `set_defaults`, a parser's
`argument_default=` and arguments handed to `parse_args` that may name the option leave it unknown, never another
value."""

from __future__ import annotations

import pytest

from test_values_differential import PRELUDE, run

PARSER = 'p = argparse.ArgumentParser()\np.add_argument("-l", "--lr", type=float, default=1e-05)\np.add_argument("--bs", type=int, default=8)\n'
READ = "torch.optim.AdamW(model.parameters(), lr=args.lr)\n"

KNOWN = {
    "no-arguments-handed": "args = p.parse_args([])\n",
    "arguments-for-another-option": 'args = p.parse_args(["--bs", "16"])\n',
    "the-command-line": "args = p.parse_args()\n",
}
NEVER_WRONG = {
    "set-defaults-after-the-argument": "p.set_defaults(lr=0.001)\nargs = p.parse_args()\n",
    "the-flag-handed": 'args = p.parse_args(["--lr", "0.001"])\n',
    "an-abbreviation-with-equals": 'args = p.parse_args(args=["--l=0.001"])\n',
    "a-short-flag-with-its-value-attached": 'args = p.parse_args(["-l0.001"])\n',
    "arguments-not-known": "import sys\nargs = p.parse_args(sys.argv[1:] + ['--lr', '0.001'])\n",
}


def _asked(source: str) -> dict:
    outcome = run(PRELUDE + source, {})
    assert not outcome.details, "\n".join(outcome.details)
    return {key: found for key, found in outcome.results.items() if key[0] > PRELUDE.count("\n")}


@pytest.mark.parametrize("shape", KNOWN)
def test_an_option_no_handed_argument_names_has_its_default(shape: str):
    asked = _asked(PARSER + KNOWN[shape] + READ)
    assert asked and all(found == "known" for found in asked.values()), asked


@pytest.mark.parametrize("shape", NEVER_WRONG)
def test_an_option_a_default_or_argument_may_override_is_unknown(shape: str):
    asked = _asked(PARSER + NEVER_WRONG[shape] + READ)
    assert asked and all(found == "unknown" for found in asked.values()), asked


def test_a_parsers_argument_default_leaves_an_option_without_its_own_default_unknown():
    asked = _asked('p = argparse.ArgumentParser(argument_default=0.001)\np.add_argument("--lr", type=float)\nargs = p.parse_args()\n' + READ)
    assert asked and all(found == "unknown" for found in asked.values()), asked
