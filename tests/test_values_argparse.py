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


# The value None (a library model's `NONE`, `brain/__init__.py`): an option without a default that no command line
# gives holds None, as Python's argparse leaves it (`Action(..., default=None)`), and so do an environment variable
# read with a None default and a dataclass field defaulting to None. Each read runs for real with a bare command line.
TOKENIZE = 'enc = tok(["a b", "c"], padding=True, max_length={}, return_tensors="pt")\n'
NONE_OPTIONS = {
    "a-flag": 'p.add_argument("--ml")',
    "a-typed-flag": 'p.add_argument("--ml", type=int)',
    "short-and-long": 'p.add_argument("-m", "--ml", type=int)',
    "not-required": 'p.add_argument("--ml", type=int, required=False)',
    "a-plain-store": 'p.add_argument("--ml", action="store", type=int)',
    "a-count": 'p.add_argument("--ml", action="count")',
    "an-append": 'p.add_argument("--ml", action="append")',
    "a-store-const": 'p.add_argument("--ml", action="store_const", const=8)',
}
NONE_READS = {
    "environ-get-none": 'import os\nml = os.environ.get("BERTLINT_TEST_NEVER_SET", None)\n',
    "environ-get-one-argument": 'import os\nml = os.environ.get("BERTLINT_TEST_NEVER_SET")\n',
    "getenv-none": 'import os\nml = os.getenv("BERTLINT_TEST_NEVER_SET", None)\n',
    "namespace-keyword": "ml = types.SimpleNamespace(k=None).k\n",
    "dataclass-field": "@dataclass\nclass A:\n    ml: object = None\n(a,) = HfArgumentParser((A,)).parse_args_into_dataclasses()\nml = a.ml\n",
}
# given on every command line that runs (here by the script itself), or set by an action the file does not show
GIVEN_OPTIONS = {
    "required": 'p.add_argument("--ml", type=int, required=True)',
    "a-positional": 'p.add_argument("ml", type=int)',
    "nargs": 'p.add_argument("--ml", type=int, nargs="+")',
    "an-action-class": 'class Keep(argparse.Action):\n    def __call__(self, *a):\n        pass\np.add_argument("--ml", action=Keep)',
}


def _max_length_asked(source: str) -> str:
    asked = _asked(source)
    return next(found for (line, kind, question), found in asked.items() if question == "max_length")


@pytest.mark.parametrize("shape", NONE_OPTIONS)
def test_an_option_without_a_default_holds_none(shape: str):
    source = "p = argparse.ArgumentParser()\n" + NONE_OPTIONS[shape] + "\nargs = p.parse_args()\n" + TOKENIZE.format("args.ml")
    assert _max_length_asked(source) == "known"


@pytest.mark.parametrize("shape", NONE_READS)
def test_a_none_default_is_the_value_none(shape: str):
    assert _max_length_asked(NONE_READS[shape] + TOKENIZE.format("ml")) == "known"


@pytest.mark.parametrize("shape", GIVEN_OPTIONS)
def test_an_option_the_command_line_must_give_is_unknown(shape: str):
    argv = '["script.py", "8"]' if shape == "a-positional" else '["script.py", "--ml", "8"]'
    source = f"import sys\nsys.argv = {argv}\np = argparse.ArgumentParser()\n" + GIVEN_OPTIONS[shape] + "\nargs = p.parse_args()\n" + TOKENIZE.format("args.ml")
    assert _max_length_asked(source) == "unknown"
