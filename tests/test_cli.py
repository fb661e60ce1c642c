"""The real entry points, run as a user runs them: `python -m bertlint` and the `bertlint` console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bertlint.report import finding_to_dict
from bertlint.rules import all_codes
from checkout import readme_block
from conftest import ROOT

CONSOLE_SCRIPT = Path(sys.executable).parent / "bertlint"

BAD = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)
"""
CLEAN = """\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, padding="max_length")
"""
JSON_KEYS = set(finding_to_dict(__import__("bertlint.report", fromlist=["Finding"]).Finding("BL101", "n", "error", "m", "h", "p", 1, 1, 1, 2)))


def run(*args: str, cwd: Path, script: bool = False, stdin: str | None = None) -> subprocess.CompletedProcess:
    command = [str(CONSOLE_SCRIPT)] if script else [sys.executable, "-m", "bertlint"]
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([*command, *args], cwd=cwd, capture_output=True, text=True, env=env, input=stdin, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with a pinned target version, so the installed transformers never matters."""
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    return tmp_path


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def concise(result: subprocess.CompletedProcess) -> list[str]:
    """`path:line:col: CODE` of every finding line of `--format concise` output."""
    return [f"{location}: {rest.split()[0]}" for location, _, rest in (line.partition(": ") for line in result.stdout.splitlines()) if rest.startswith("BL")]


# --- exit codes and the two entry points ---------------------------------------------------


@pytest.mark.parametrize("script", [False, True], ids=["python-m", "console-script"])
def test_exit_codes(project, script):
    write(project, "bad.py", BAD)
    write(project, "clean.py", CLEAN)
    clean = run("clean.py", cwd=project, script=script)
    assert clean.returncode == 0 and "All checks passed!" in clean.stdout
    bad = run("bad.py", cwd=project, script=script)
    assert bad.returncode == 1
    assert "bad.py:3:54: BL101 [*]" in bad.stdout and "Found 1 error (1 fixable with `--fix`)." in bad.stdout
    missing = run("does_not_exist.py", cwd=project, script=script)
    assert missing.returncode == 2 and "does_not_exist.py" in missing.stderr


UNKNOWN_MODEL = """\
import sys

import torch
from transformers import AutoModel, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained(sys.argv[1]{side})
model = AutoModel.from_pretrained(sys.argv[1])
enc = tokenizer(["a short text", "a noticeably longer second text"], padding=True, return_tensors="pt")
{indent}hidden = model(enc["input_ids"])
"""


def test_summary_counts_each_severity_by_name(project):
    """A warning or an info is not an error: the closing line names each severity; any finding still exits 1."""
    write(project, "warn.py", UNKNOWN_MODEL.format(side="", indent="with torch.no_grad():\n    "))
    write(project, "left.py", UNKNOWN_MODEL.format(side=', padding_side="left"', indent=""))
    warning = run("--format", "concise", "warn.py", cwd=project)
    assert concise(warning) == ["warn.py:10:20: BL201"]
    assert warning.returncode == 1 and "Found 1 warning (1 fixable with `--fix --unsafe-fixes`)." in warning.stdout
    mixed = run("--format", "concise", "warn.py", "left.py", cwd=project)
    assert concise(mixed) == ["left.py:9:10: BL503", "left.py:9:16: BL201", "warn.py:10:20: BL201"]
    assert mixed.returncode == 1 and "Found 1 error, 1 warning and 1 info (3 fixable with `--fix --unsafe-fixes`)." in mixed.stdout


def test_exit_zero_keeps_the_report(project):
    write(project, "bad.py", BAD)
    result = run("--exit-zero", "bad.py", cwd=project)
    assert result.returncode == 0 and "BL101" in result.stdout


def test_exit_non_zero_on_fix(project):
    """ruff's flag for pre-commit: a run that fixed files fails, so the commit is re-staged."""
    write(project, "bad.py", BAD)
    plain = run("--fix", "bad.py", cwd=project)
    assert plain.returncode == 0 and (project / "bad.py").read_text() == CLEAN
    write(project, "bad.py", BAD)
    strict = run("--fix", "--exit-non-zero-on-fix", "bad.py", cwd=project)
    assert strict.returncode == 1 and "Fixed 1 finding." in strict.stdout and (project / "bad.py").read_text() == CLEAN
    again = run("--fix", "--exit-non-zero-on-fix", "bad.py", cwd=project)
    assert again.returncode == 0 and "All checks passed!" in again.stdout


def test_output_format_is_ruff_s_name_for_format(project):
    write(project, "bad.py", BAD)
    assert run("--output-format", "concise", "bad.py", cwd=project).stdout == run("--format", "concise", "bad.py", cwd=project).stdout


NOQA_BEFORE = """\
from transformers import AutoModel, AutoTokenizer, TrainingArguments
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)  # noqa: E501
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True){trailing}
args = TrainingArguments(output_dir="o", no_cuda=True,
    learning_rate=1e-2)  # type: ignore
note = tok(["a", "b"], pad_to_max_length=True); doc = \"\"\"
a string that a comment must not enter\"\"\"
"""
NOQA_AFTER = """\
from transformers import AutoModel, AutoTokenizer, TrainingArguments
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)  # noqa: E501, BL101
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)  # noqa: BL101
args = TrainingArguments(output_dir="o", no_cuda=True,  # noqa: BL601
    learning_rate=1e-2)  # type: ignore  # noqa: BL301
note = tok(["a", "b"], pad_to_max_length=True); doc = \"\"\"
a string that a comment must not enter\"\"\"
"""


def test_add_noqa_suppresses_each_finding_where_it_stands(project):
    """ruff's --add-noqa: extends an existing `# noqa: ...`, follows other comments, drops trailing
    blanks; a line that ends inside a string is left and its finding still reported."""
    path = write(project, "legacy.py", NOQA_BEFORE.format(trailing="   "))
    result = run("--add-noqa", "--format", "concise", "legacy.py", cwd=project)
    assert path.read_text() == NOQA_AFTER
    assert concise(result) == ["legacy.py:8:24: BL101"]
    assert result.returncode == 1 and "Added 4 noqa directives. Found 1 error (1 fixable with `--fix`)." in result.stdout
    again = run("--add-noqa", "legacy.py", cwd=project)
    assert path.read_text() == NOQA_AFTER and "Added 0 noqa directives." in again.stdout
    lint = run("--format", "concise", "legacy.py", cwd=project)
    assert concise(lint) == ["legacy.py:8:24: BL101"]  # every directive suppresses (no BL902), the string line is left


def test_add_noqa_in_a_notebook_edits_only_the_cells(project, tmp_path):
    notebook = project / "colab.ipynb"
    notebook.write_bytes((ROOT / "fixtures" / "notebooks" / "seed000_colab_short_sequences.ipynb").read_bytes())
    before = json.loads(notebook.read_text())
    result = run("--add-noqa", "colab.ipynb", cwd=project)
    assert result.returncode == 0 and "Added 3 noqa directives." in result.stdout, result.stdout
    after = json.loads(notebook.read_text())
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [4, 6, 8]  # 0-based: cells 5, 7 and 9, the ones with findings
    assert "# noqa: BL201, BL503" in "".join(after["cells"][4]["source"])
    assert all(a.get("outputs") == b.get("outputs") for a, b in zip(before["cells"], after["cells"]))
    assert run("colab.ipynb", cwd=project).returncode == 0


def test_add_noqa_refuses_other_modes(project):
    write(project, "bad.py", BAD)
    result = run("--add-noqa", "--fix", "bad.py", cwd=project)
    assert result.returncode == 2 and "--add-noqa" in result.stderr and (project / "bad.py").read_text() == BAD


def test_show_files_lists_what_a_run_lints(project):
    write(project, "train.py", BAD)
    write(project, "legacy/old.py", BAD)
    write(project, ".venv/lib/x.py", BAD)
    (project / "pyproject.toml").write_text('[tool.bertlint]\nextend-exclude = ["legacy/"]\n')
    result = run("--show-files", cwd=project)
    assert (result.returncode, result.stdout.split()) == (0, ["train.py"])
    assert run("--show-files", "legacy/old.py", cwd=project).stdout.split() == ["legacy/old.py"]
    assert run("--show-files", "--force-exclude", "legacy/old.py", cwd=project).stdout == ""
    missing = run("--show-files", "nope.py", cwd=project)
    assert missing.returncode == 2 and "nope.py: No such file or directory" in missing.stderr


def test_show_settings_is_toml_for_the_file(project):
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

    (project / "pyproject.toml").write_text(
        '[tool.bertlint]\ntransformers-version = "4.46"\npreview = true\nper-file-ignores = { "legacy/*.py" = ["BL101"] }\n'
        '[tool.bertlint.learning-rate]\nt5 = { adafactor = [1e-4, 3e-3] }\n')
    write(project, "legacy/old.py", BAD)
    result = run("--show-settings", "--gpu-memory", "24GiB", "legacy/old.py", cwd=project)
    assert result.returncode == 0 and result.stdout.startswith("# settings for legacy/old.py\n")
    shown = tomllib.loads(result.stdout)
    assert "BL101" not in shown["select"] and "BL201" in shown["select"] and shown["preview"] is True
    assert shown["gpu-memory"] == "24GiB" and shown["learning-rate"] == {"t5": {"adafactor": [1e-4, 3e-3]}}
    assert shown["transformers-version"] == "4.46 (transformers-version in pyproject.toml)"
    assert shown["config-file"] == str(project / "pyproject.toml")


def test_default_path_is_the_current_directory(project):
    write(project, "pkg/bad.py", BAD)
    result = run("--format", "concise", cwd=project)
    assert result.returncode == 1 and concise(result) == ["pkg/bad.py:3:54: BL101"]


# --- output formats -----------------------------------------------------------------------


def test_every_format_parses(project):
    write(project, "bad.py", BAD)
    outputs = {fmt: run("--format", fmt, "bad.py", cwd=project) for fmt in ("full", "concise", "json", "lsp", "sarif", "github")}
    assert all(r.returncode == 1 for r in outputs.values())
    [entry] = json.loads(outputs["json"].stdout)
    assert set(entry) == JSON_KEYS
    assert (entry["code"], entry["line"], entry["column"], entry["severity"]) == ("BL101", 3, 54, "error")
    assert entry["fix"]["applicability"] == "safe"
    [(uri, [diagnostic])] = json.loads(outputs["lsp"].stdout).items()
    assert uri.endswith("/bad.py") and diagnostic["code"] == "BL101" and diagnostic["range"]["start"] == {"line": 2, "character": 53}
    sarif = json.loads(outputs["sarif"].stdout)
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"][0]["ruleId"] == "BL101"
    assert outputs["github"].stdout.startswith("::error file=bad.py,line=3,col=54,")
    assert concise(outputs["concise"]) == ["bad.py:3:54: BL101"]
    assert "^^^^" in outputs["full"].stdout and "= help:" in outputs["full"].stdout


def test_output_file_and_statistics(project):
    write(project, "a.py", BAD)
    write(project, "b.py", BAD)
    result = run("--format", "json", "--output-file", "report.json", "a.py", "b.py", cwd=project)
    assert result.returncode == 1 and result.stdout == ""
    assert [d["path"] for d in json.loads((project / "report.json").read_text())] == ["a.py", "b.py"]
    stats = run("--statistics", "a.py", "b.py", cwd=project)
    assert stats.returncode == 1
    assert stats.stdout.splitlines()[0].split() == ["2", "BL101", "[*]", "pad-to-max-length-deprecated"]


# --- selection ----------------------------------------------------------------------------

MIXED = """\
import torch
from transformers import AutoModel, AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
model = AutoModel.from_pretrained("bert-base-uncased")
enc = tok(["a", "b c d"], max_length=8, truncation=True, padding=True, return_tensors="pt")
short = tok(["a", "b c d"], max_length=8, truncation=True, pad_to_max_length=True)
with torch.no_grad():
    out = model(enc["input_ids"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
"""


def codes_of(result: subprocess.CompletedProcess) -> list[str]:
    return sorted({line.split()[1] for line in concise(result)})


def test_select_ignore_extend_select_and_per_file_ignores(project):
    write(project, "train.py", MIXED)
    write(project, "scripts/train.py", MIXED)
    assert codes_of(run("--format", "concise", "train.py", cwd=project)) == ["BL101", "BL201", "BL301"]
    assert codes_of(run("--format", "concise", "--select", "BL2", "train.py", cwd=project)) == ["BL201"]
    assert codes_of(run("--format", "concise", "--ignore", "BL1,BL301", "train.py", cwd=project)) == ["BL201"]
    assert codes_of(run("--format", "concise", "--select", "BL101", "--extend-select", "BL301", "train.py", cwd=project)) == ["BL101", "BL301"]
    result = run("--format", "concise", "--per-file-ignores", "scripts/*.py:BL101,BL201", ".", cwd=project)
    assert concise(result) == ["scripts/train.py:9:45: BL301", "train.py:6:60: BL101", "train.py:8:17: BL201", "train.py:9:45: BL301"]


def test_bad_configuration_exits_2_naming_file_and_key(project):
    write(project, "bad.py", BAD)
    (project / "pyproject.toml").write_text('[tool.bertlint]\ngpu-memroy = "24GiB"\n')
    result = run("bad.py", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and "gpu-memroy" in result.stderr
    (project / "pyproject.toml").write_text('[tool.bertlint]\nselect = ["BL999"]\n')
    result = run("bad.py", cwd=project)
    assert result.returncode == 2 and "pyproject.toml" in result.stderr and "select" in result.stderr


def test_bad_flag_value_exits_2(project):
    write(project, "bad.py", BAD)
    result = run("--select", "BL1000", "bad.py", cwd=project)
    assert result.returncode == 2 and "BL1000" in result.stderr


# --- files that do not parse --------------------------------------------------------------


def test_syntax_error_is_bl901_and_the_other_files_are_still_checked(project):
    write(project, "broken.py", "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained(\n")
    write(project, "bad.py", BAD)
    result = run("--format", "concise", ".", cwd=project)
    assert result.returncode == 1
    assert [line.split()[1] for line in concise(result)] == ["BL101", "BL901"]
    assert concise(result)[1].startswith("broken.py:2:")


TAB_THEN_SPACES = "def f(xs):\n    out = []\n    for x in xs:\n\t    out.append(x)\n    return out\n"  # Python compiles it, libcst does not


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "lsp", "sarif", "github"])
def test_a_file_the_parser_cannot_read_is_not_linted_and_says_so(project, fmt):
    """No BL901 (the file is valid Python), a warning on stderr naming the line and the Python that compiles it, the
    other files linted; the exit code is the findings' (ruff's "Failed to lint" is a warning too). Each run says it again
    (a file not linted is not cached)."""
    (project / "tabs.py").write_text(TAB_THEN_SPACES)
    alone = run("--format", fmt, "tabs.py", cwd=project)
    assert alone.returncode == 0, alone.stderr
    assert f"bertlint: warning: tabs.py:4:1: not linted: Python {sys.version_info.major}.{sys.version_info.minor}." in alone.stderr
    assert "indent of this line, which mixes a tab and spaces" in alone.stderr
    assert "BL901" not in alone.stdout + alone.stderr
    write(project, "bad.py", BAD)
    both = run("--format", fmt, ".", cwd=project)
    assert both.returncode == 1 and "tabs.py:4:1: not linted" in both.stderr
    if fmt == "json":
        assert [f["code"] for f in json.loads(both.stdout)] == ["BL101"]
    if fmt == "sarif":
        [run_] = json.loads(both.stdout)["runs"]
        [notification] = run_["invocations"][0]["toolExecutionNotifications"]
        assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tabs.py"
        assert [r["ruleId"] for r in run_["results"]] == ["BL101"]
    if fmt == "github":
        assert "::warning file=tabs.py,line=4,col=1,title=bertlint%3A not linted::Python 3." in both.stdout
    if fmt == "full":
        assert "). Not linted: 1 file (see the warning above).\nTarget:" in both.stdout


def test_compile_time_syntax_error_is_the_only_finding(project):
    """`return` outside a function parses (ast.parse accepts it) but does not compile: nothing in the file runs, so
    BL901 at the error and nothing of the rules (BL101 would fire on line 3)."""
    write(project, "ret.py", BAD + "if enc:\n    pass\nreturn enc\n")
    result = run("--format", "concise", "ret.py", cwd=project)
    assert result.returncode == 1
    assert concise(result) == ["ret.py:6:1: BL901"]
    assert "SyntaxError: 'return' outside function" in result.stdout


def test_repeated_keyword_is_bl901_through_the_console_script_and_newer_syntax_is_not(project):
    """A keyword given twice in one call parses but does not compile (every Python 3.10-3.13 says "keyword argument
    repeated"): BL901 at the second keyword, the only finding of its file; a file of Python 3.12 syntax (a `type`
    statement, an f-string reusing its quotes) is linted, never a BL901, whatever Python runs bertlint."""
    write(project, "twice.py", BAD.replace("truncation=True,", "truncation=True, max_length=16,"))
    write(project, "newer.py", 'type Ids = list[int]\nrun = {"name": "bert"}\nout = f"runs/{run["name"]}"\n' + BAD)
    result = run("--format", "concise", "twice.py", "newer.py", cwd=project, script=True)
    assert result.returncode == 1
    assert concise(result) == ["newer.py:6:54: BL101", "twice.py:3:54: BL901"]
    assert "SyntaxError: keyword argument repeated: max_length" in result.stdout


# --- suppressions -------------------------------------------------------------------------


def test_noqa_and_ignore_on_the_line_and_on_the_first_line_of_a_statement(project):
    write(
        project,
        "train.py",
        """\
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        a = tok("x", max_length=8, truncation=True, pad_to_max_length=True)  # noqa: BL101
        b = tok("x", max_length=8, truncation=True, pad_to_max_length=True)  # bertlint: ignore[BL101]
        c = tok(  # noqa: BL101
            "x",
            max_length=8,
            pad_to_max_length=True,
        )
        d = tok(  # bertlint: ignore[BL101]
            "x",
            pad_to_max_length=True,
        )
        e = tok("x", pad_to_max_length=True)  # noqa
        f = tok("x", pad_to_max_length=True)  # noqa: BL201
        g = tok(
            "x",
            pad_to_max_length=True,  # noqa: BL101
        )
        """,
    )
    result = run("--format", "concise", "train.py", cwd=project)
    assert concise(result) == ["train.py:15:14: BL101", "train.py:15:39: BL902"]


def test_lines_are_counted_as_python_counts_them(project):
    """A form feed is whitespace inside a line for Python; str.splitlines would break there and shift
    every later snippet and suppression by one."""
    (project / "train.py").write_text(
        'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\n\x0c\n'
        'a = tok("x", pad_to_max_length=True)\nb = tok("x", pad_to_max_length=True)  # noqa: BL101\n'
    )
    result = run("train.py", cwd=project)
    assert concise(run("--format", "concise", "train.py", cwd=project)) == ["train.py:4:14: BL101"]
    assert '4 | a = tok("x", pad_to_max_length=True)\n' in result.stdout


# --- standard input (editors and pipes) -----------------------------------------------------


def test_stdin_is_linted_as_the_file_it_names(project):
    """`-` reads the source from stdin; `--stdin-filename` names it, so per-file ignores and the
    project's configuration apply as to that file on disk (which need not exist)."""
    plain = run("--format", "concise", "-", cwd=project, stdin=BAD)
    assert (plain.returncode, concise(plain)) == (1, ["-:3:54: BL101"])
    named = run("--format", "concise", "--stdin-filename", "src/train.py", cwd=project, stdin=BAD)
    assert (named.returncode, concise(named)) == (1, ["src/train.py:3:54: BL101"])
    (project / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\nper-file-ignores = { "src/*.py" = ["BL101"] }\n')
    ignored = run("--stdin-filename", "src/train.py", "-", cwd=project, stdin=BAD)
    assert ignored.returncode == 0 and "All checks passed!" in ignored.stdout
    assert not list(project.rglob("*.py")), "nothing is written for a source read from stdin"


def test_stdin_fix_prints_the_fixed_source_and_reports_on_stderr(project):
    result = run("--fix", "--stdin-filename", "train.py", "-", cwd=project, stdin=BAD)
    assert result.returncode == 0, result.stderr
    assert result.stdout == CLEAN
    assert "Fixed 1 finding." in result.stderr
    unfixable = BAD.replace("max_length=8, truncation=True, pad_to_max_length=True", "max_length=4096, truncation=True")  # one max_length: a repeated keyword would not compile
    kept = run("--fix", "--format", "concise", "-", cwd=project, stdin=unfixable)
    assert kept.returncode == 1 and kept.stdout == unfixable  # the source comes back as it was
    assert "-:3:" in kept.stderr and "BL104" in kept.stderr


def test_stdin_diff_and_syntax_error(project):
    diff = run("--diff", "-", cwd=project, stdin=BAD)
    assert diff.returncode == 1 and '+enc = tok(["a", "b"], max_length=8, truncation=True, padding="max_length")' in diff.stdout
    broken = run("--format", "concise", "-", cwd=project, stdin="x = (\n")
    assert broken.returncode == 1 and concise(broken) == ["-:1:5: BL901"]


def test_stdin_usage_errors(project):
    write(project, "bad.py", BAD)
    mixed = run("-", "bad.py", cwd=project, stdin=BAD)
    assert mixed.returncode == 2 and "cannot be mixed" in mixed.stderr
    verify = run("--verify", "-", cwd=project, stdin=BAD)
    assert verify.returncode == 2 and "--verify needs the script on disk" in verify.stderr


def test_skip_file(project):
    write(project, "train.py", "# bertlint: skip-file\n" + BAD)
    result = run("train.py", cwd=project)
    assert result.returncode == 0 and "All checks passed!" in result.stdout


def test_unknown_code_in_a_suppression_is_reported_and_fixed(project):
    """As ruff's RUF102: a bertlint code that does not exist (a typo, a prefix) suppresses nothing, ever.
    Other tools' codes in a `# noqa` are theirs (BLE001 is flake8-blind-except's); bertlint's own
    `ignore[...]` takes only bertlint codes."""
    path = write(
        project,
        "train.py",
        """\
        import os  # noqa: BL999
        x = 1  # noqa: E501, BL1
        y = 2  # bertlint: ignore[BL998, E501]
        z = 3  # noqa: BLE001, E501
        w = 4  # noqa: E501, BL1O1
        """,
    )
    result = run("--format", "json", "train.py", cwd=project)
    found = [(f["line"], f["column"], f["code"], f["message"].split(":")[0], bool(f["fix"])) for f in json.loads(result.stdout)]
    assert found == [
        (1, 12, "BL902", "unknown code BL999 in a suppression", True),
        (2, 8, "BL902", "unknown code BL1 in a suppression", True),
        (3, 8, "BL902", "unknown code BL998 in a suppression", True),
        (3, 8, "BL902", "unknown code E501 in a suppression", True),
        (5, 8, "BL902", "unknown code BL1 in a suppression", False),  # `BL1O1`, read as BL1: no rewrite would be right
    ]
    assert "bertlint has no such rule (`bertlint rules` lists them" in json.loads(result.stdout)[0]["message"]
    fixed = run("--fix", "train.py", cwd=project)
    assert fixed.returncode == 1 and "Found 5 findings (4 fixed; 1 info remaining)." in fixed.stdout
    assert path.read_text().splitlines() == ["import os", "x = 1  # noqa: E501", "y = 2", "z = 3  # noqa: BLE001, E501", "w = 4  # noqa: E501, BL1O1"]


def test_unused_suppression_is_reported_and_fixed(project):
    path = write(
        project,
        "train.py",
        """\
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained("bert-base-uncased")
        a = tok("x", padding="max_length", max_length=8, truncation=True)  # noqa: BL101, E501
        b = tok("x", padding="max_length", max_length=8, truncation=True)  # bertlint: ignore[BL201]
        c = tok("x", max_length=8, truncation=True, pad_to_max_length=True)  # noqa: BL101
        """,
    )
    result = run("--format", "concise", "train.py", cwd=project)
    assert concise(result) == ["train.py:3:68: BL902", "train.py:4:68: BL902"]
    ignored = run("--format", "concise", "--ignore", "BL201", "train.py", cwd=project)
    assert concise(ignored) == ["train.py:3:68: BL902"], "a code that is not selected may fire elsewhere: not reported"
    fixed = run("--fix", "train.py", cwd=project)
    assert fixed.returncode == 0, fixed.stdout
    lines = path.read_text().splitlines()
    assert lines[2].endswith("truncation=True)  # noqa: E501")
    assert lines[3].endswith("truncation=True)")
    assert lines[4].endswith("# noqa: BL101")


# --- rule pages and the rule list ---------------------------------------------------------


def test_rule_prints_its_page(project):
    result = run("rule", "BL201", cwd=project)
    assert result.returncode == 0
    assert result.stdout.startswith("# BL201 missing-attention-mask") and "## Use instead" in result.stdout
    assert run("rule", "bl201", cwd=project).stdout == result.stdout
    unknown = run("rule", "BL999", cwd=project)
    assert unknown.returncode == 2 and "BL999" in unknown.stderr


def test_rules_json_lists_every_code(project):
    result = run("rules", "--format", "json", cwd=project)
    rows = json.loads(result.stdout)
    assert [row["code"] for row in rows] == all_codes()
    assert all(set(row) == {"code", "name", "severity", "fix", "summary", "preview", "precision"} for row in rows)
    assert {"BL101", "BL201", "BL202", "BL301", "BL401", "BL501", "BL502", "BL901", "BL902"} <= {row["code"] for row in rows}


# --- the README's quick start ------------------------------------------------------------


@pytest.mark.parametrize("after, args", [
    ("The default rule set finds", ["demo/train.py"]),
    ("The demo's other mission findings", ["--preview", "--format", "concise", "demo/train.py"]),
])
def test_readme_quick_start_shows_what_the_cli_prints(after, args):
    """The quick start's shown outputs are what `bertlint` prints on the demo, byte for byte (its pin in
    demo/requirements.txt makes them the same with or without transformers installed). Which rules are on by default
    comes from data/precision.json: when that moves a rule, paste the new output into README.md."""
    result = run(*args, cwd=ROOT, script=True)
    assert result.returncode == (1 if "\nFound " in result.stdout else 0), result.stderr
    assert result.stdout == readme_block(after, "text"), f"README.md's quick start shows another output than:\n{result.stdout}"


# --- start-up cost ------------------------------------------------------------------------


def test_version_imports_no_deep_learning_framework():
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "bertlint", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and result.stdout.startswith("bertlint ")
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "bertlint" in imported
    assert not imported & {"torch", "transformers", "tensorflow", "keras", "jax"}


def test_linting_imports_no_deep_learning_framework(project):
    write(project, "bad.py", BAD)
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "bertlint", "bad.py"], capture_output=True, text=True, cwd=project)
    assert result.returncode == 1
    imported = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert not imported & {"torch", "transformers", "tensorflow", "keras", "jax"}


# Fact modules that no rule on by default asks for on a file without training code: `bertlint.facts` loads a module on
# the first use of one of its names, so a plain run never imports them (a default rule that comes to need one moves
# it out of this list).
UNASKED_FACT_MODULES = ("loops", "tensors", "uses", "trainable", "weights", "labels", "token_labels", "graphs", "demos", "inspection", "texts")


def test_a_plain_run_imports_only_the_fact_modules_its_rules_ask_for(tmp_path):
    """`bertlint FILE` through the entry the console script runs (`bertlint.__main__.run`), with the default rules,
    imports the fact modules those rules use, not every module `bertlint.facts` names. (`-X importtime` cannot tell:
    it does not list the modules `importlib.import_module` loads, as the rules and the lazy fact modules are.)"""
    write(tmp_path, "clean.py", CLEAN)
    probe = (
        "import os, sys\n"
        "end = os._exit\n"
        "def report(code):\n"
        "    sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
        "    sys.stderr.flush()\n"
        "    end(code)\n"
        "os._exit = report\n"
        "sys.argv = ['bertlint', '--isolated', '--no-cache', '--transformers-version', '5.23', 'clean.py']\n"
        "from bertlint.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    imported = set(result.stderr.rpartition("MODULES ")[2].split())
    assert {"bertlint.facts.core", "bertlint.facts.padded", "bertlint.rules.bl101"} <= imported  # the run did lint
    assert not imported & {f"bertlint.facts.{name}" for name in UNASKED_FACT_MODULES}
    assert not imported & {"pkgutil", "importlib.util"}  # the rule modules are listed from their folder


# The dataclasses whose generated `__repr__` and `__eq__` are part of what bertlint hands out (the report's and the
# settings'): Python 3.11 compiles each generated method at import, one `exec` each (~60 us), so the classes only the
# lint uses inside (facts, values, the engine's and the runner's records) have neither a repr nor, where they are
# mutable, field equality (identity, as the facts' classes already had).
SHOWN_DATACLASSES = {"bertlint.report.Edit", "bertlint.report.Fix", "bertlint.report.Finding", "bertlint.report.Notice", "bertlint.config.Settings"}


def test_a_plain_run_generates_no_repr_or_mutable_equality_it_does_not_hand_out(tmp_path):
    """Every dataclass a plain run defines: a `__repr__` only for the classes of the report and the settings; `__eq__`
    by fields only for those and the frozen (value) classes, whose equality and hashing are their meaning."""
    write(tmp_path, "bad.py", BAD)
    probe = (
        "import dataclasses, os, sys\n"
        "end = os._exit\n"
        "def report(code):\n"
        "    for module in list(sys.modules.values()):\n"
        "        if not getattr(module, '__name__', '').startswith('bertlint'):\n"
        "            continue\n"
        "        for cls in vars(module).values():\n"
        "            if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__:\n"
        "                p = cls.__dataclass_params__\n"
        "                sys.stderr.write(f'CLASS {cls.__module__}.{cls.__qualname__} {p.repr} {p.eq} {p.frozen}\\n')\n"
        "    sys.stderr.flush()\n"
        "    end(code)\n"
        "os._exit = report\n"
        "sys.argv = ['bertlint', '--isolated', '--no-cache', '--transformers-version', '5.23', 'bad.py']\n"
        "from bertlint.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "BL101" in result.stdout, result.stdout + result.stderr
    classes = {parts[1]: [flag == "True" for flag in parts[2:]] for parts in (line.split() for line in result.stderr.splitlines()) if parts[:1] == ["CLASS"]}
    assert {"bertlint.facts.nodes.Call", "bertlint.rules.Report", "bertlint.runner.Outcome"} | SHOWN_DATACLASSES <= set(classes)
    for name, (shown_repr, field_eq, frozen) in classes.items():
        assert shown_repr == (name in SHOWN_DATACLASSES), name
        if name in SHOWN_DATACLASSES:
            assert field_eq, name
        elif not frozen:
            assert not field_eq, name  # a record the lint fills in: compared by identity


def test_a_lint_reads_each_data_file_of_the_package_once(tmp_path):
    """The tables in `bertlint/data` are read on first use and kept: a lint with every rule reads none twice (removed.json
    serves `versions` and `knowledge` from one read)."""
    write(tmp_path, "bad.py", BAD)
    probe = (
        "import collections, pathlib, sys\n"
        "read = collections.Counter()\n"
        "original = pathlib.Path.read_text\n"
        "def counted(self, *args, **kwargs):\n"
        "    if self.parent.name == 'data' and self.parent.parent.name == 'bertlint':\n"
        "        read[self.name] += 1\n"
        "    return original(self, *args, **kwargs)\n"
        "pathlib.Path.read_text = counted\n"
        "from bertlint.cli import main\n"
        "try:\n"
        "    main(['--isolated', '--no-cache', '--preview', '--transformers-version', '5.23', 'bad.py'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(read.items()), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    counts = dict(eval(result.stderr.strip().splitlines()[-1]))
    assert "BL101" in result.stdout and "removed.json" in counts, result.stdout + result.stderr
    assert {name: n for name, n in counts.items() if n > 1} == {}


def test_every_name_of_the_facts_package_is_the_fact_not_a_module():
    """`from bertlint.facts import NAME` gives the function or class its module defines, whichever fact modules were
    imported before (the package holds each imported submodule under its name: `liveness` is both), and importing
    the package alone loads none of the modules no engine step needs."""
    probe = (
        "import importlib, pkgutil, sys, types\n"
        "import bertlint.facts as facts\n"
        f"print(sorted(m for m in {UNASKED_FACT_MODULES!r} if 'bertlint.facts.' + m in sys.modules))\n"
        "for info in pkgutil.walk_packages(facts.__path__, 'bertlint.facts.'):\n"
        "    importlib.import_module(info.name)\n"
        "print(sorted(n for n in facts.__all__ if isinstance(getattr(facts, n), types.ModuleType)))\n"
        "from bertlint.facts import *\n"
        "print(liveness.__module__, Facts.__module__, frozen_models.__module__)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "[]", "bertlint.facts.liveness bertlint.facts.core bertlint.facts.trainable"]


CELL_SCRIPT = """\
# %%
!pip install -q transformers
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")

# %%
enc = tok(["a", "b"], max_length=8, truncation=True, pad_to_max_length=True)
%time again = tok(["a"], max_length=8, truncation=True, pad_to_max_length=True)
"""


def test_a_cell_script_is_linted_as_ipython_runs_it_and_fix_keeps_its_ipython_lines(project):
    """A `# %%` script runs cell by cell in IPython: its `!pip` and `%time` lines are no BL901, the rest is linted
    through the entry point; `--fix` fixes the plain line and leaves every byte of the masked ones. The same `!pip`
    in a script without a cell marker stays BL901 (`python file.py` refuses it)."""
    (project / "cells.py").write_text(CELL_SCRIPT)
    result = run("--format", "concise", "cells.py", cwd=project, script=True)
    assert result.returncode == 1, result.stderr
    assert concise(result) == ["cells.py:7:54: BL101", "cells.py:8:57: BL101"]
    fixed = run("--fix", "cells.py", cwd=project, script=True)
    text = (project / "cells.py").read_text()
    assert fixed.returncode == 1 and "padding=" in text.splitlines()[6], fixed.stdout + fixed.stderr
    assert text.splitlines()[1] == "!pip install -q transformers" and text.splitlines()[7] == CELL_SCRIPT.splitlines()[7]
    (project / "plain.py").write_text(CELL_SCRIPT.replace("# %%\n", ""))
    plain = run("--format", "concise", "plain.py", cwd=project, script=True)
    assert concise(plain) == ["plain.py:5:54: BL101", "plain.py:6:57: BL101"]  # an export whose only errors are `!` lines
    (project / "pasted.py").write_text(CELL_SCRIPT.replace("# %%\n", "").replace("!pip", "pip"))
    assert concise(run("--format", "concise", "pasted.py", cwd=project, script=True)) == ["pasted.py:1:5: BL901"]  # a shell line pasted without `!`


def test_the_entry_sets_the_collector_before_the_command_line_is_imported():
    """The `bertlint` script and `python -m bertlint` run `bertlint.__main__.run`, which makes the collector run rarely
    before click (the command line's first import) is imported: its imports pay no collections at the default thresholds."""
    from bertlint.collector import GC_THRESHOLDS

    probe = (
        "import gc, sys\n"
        "class Probe:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'click':\n"
        "            print('click imported at', gc.get_threshold(), flush=True)\n"
        "sys.meta_path.insert(0, Probe())\n"
        "sys.argv = ['bertlint', '--version']\n"
        "from bertlint.__main__ import run\n"
        "run()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == f"click imported at {GC_THRESHOLDS}"
    assert "[project.scripts]\nbertlint = \"bertlint.__main__:run\"" in (ROOT / "pyproject.toml").read_text()


def test_findings_do_not_depend_on_when_garbage_is_collected():
    """The command line runs the cyclic garbage collector rarely (`collector.collect_rarely`, mypy's thresholds): a lint
    finds on the fixtures what it finds when the collector runs every hundred allocations."""
    import gc

    from bertlint.collector import GC_THRESHOLDS, collect_rarely

    before = gc.get_threshold()
    try:
        collect_rarely()
        assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
    args = ["--isolated", "--no-cache", "--preview", "--format", "json", "--transformers-version", "5.0", str(ROOT / "fixtures" / "core")]
    rarely = run(*args, cwd=ROOT, script=True)
    often = subprocess.run([sys.executable, "-c", "import gc, sys; gc.set_threshold(100, 5, 5); from bertlint.cli import main; main(sys.argv[1:])", *args],
                           cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=300)
    assert rarely.returncode == often.returncode == 1
    assert json.loads(rarely.stdout) == json.loads(often.stdout) != []
