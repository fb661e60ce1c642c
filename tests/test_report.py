"""Output formats: each one is a contract with a consumer (terminal, CI, editor, code scanning)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from bertlint import __version__
from bertlint.report import (
    FORMATS,
    PAGE_URL,
    Edit,
    Finding,
    Fix,
    Notice,
    format_findings,
    statistics,
    summary_line,
)

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

FIX = Fix("safe", "Insert `optimizer.zero_grad()`", (Edit(12, 5, 12, 5, "optimizer.zero_grad()\n    "),))
VERIFIED = {
    "status": "confirmed",
    "device": "cpu",
    "evidence": "grad norm grew 3.0x over 4 steps",
    "seconds": 2.14,
    "measurements": {"grad_norm": [1.0, 3.0]},
}


def make(**kw) -> Finding:
    base = dict(
        code="BL001",
        name="missing-zero-grad",
        severity="error",
        message="gradients accumulate across steps",
        help="Call `optimizer.zero_grad()` once per step",
        path="train.py",
        line=12,
        column=5,
        end_line=12,
        end_column=20,
        source_line="    loss.backward()",
    )
    base.update(kw)
    return Finding(**base)


@pytest.fixture
def findings() -> list[Finding]:
    """Deliberately out of order, one per severity, with a fix, a notebook cell, a verification."""
    return [
        make(fix=FIX, verification=VERIFIED),
        make(code="BL020", name="eval-mode-missing", severity="warning", message="model is not in eval mode",
             help="Call `model.eval()` before evaluating", path="nb.ipynb", line=3, column=1,
             end_line=4, end_column=8, cell=2, source_line="model(x)"),
        make(code="BL100", name="slow-loader", severity="info", message="num_workers is 0",
             help="", path="data/load.py", line=1, column=1, end_line=1, end_column=3,
             source_line="dl = DataLoader(ds)"),
    ]


# --- dispatch ---------------------------------------------------------------------------


def test_formats_and_unknown():
    assert FORMATS == ("full", "concise", "json", "lsp", "sarif", "github")
    with pytest.raises(ValueError, match="nope"):
        format_findings([], "nope")


def test_import_does_not_load_rich():
    code = "import sys, bertlint.report; assert 'rich' not in sys.modules, 'rich imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_empty_input_in_every_format():
    assert format_findings([], "full") == ""
    assert format_findings([], "concise") == ""
    assert format_findings([], "github") == ""
    assert json.loads(format_findings([], "json")) == []
    assert json.loads(format_findings([], "lsp")) == {}
    assert json.loads(format_findings([], "sarif"))["runs"][0]["results"] == []


# --- concise / full -------------------------------------------------------------------------


def test_concise_exact_and_sorted(findings):
    assert format_findings(findings, "concise").splitlines() == [
        "data/load.py:1:1: BL100 num_workers is 0",
        "nb.ipynb:cell 2:3:1: BL020 model is not in eval mode",
        "train.py:12:5: BL001 gradients accumulate across steps [confirmed on cpu in 2.1 s]",
    ]


def test_full_block(findings):
    out = format_findings([findings[0]], "full")
    assert out == (
        "train.py:12:5: BL001 [*] gradients accumulate across steps\n"
        "   |\n"
        "12 |     loss.backward()\n"
        "   |     ^^^^^^^^^^^^^^^\n"
        "   |\n"
        "  = help: Call `optimizer.zero_grad()` once per step\n"
        "  = verified on cpu in 2.1 s: grad norm grew 3.0x over 4 steps\n"
    )


def test_full_underline_is_under_the_span():
    f = make(source_line="x = model.train(True)", column=5, end_column=16)
    src, carets = format_findings([f], "full").splitlines()[2:4]
    assert carets.index("^") == src.index("model") and carets.count("^") == 11


def test_full_multiline_span_runs_to_end_of_line_and_keeps_tabs():
    f = make(source_line="\tfoo(bar,", column=2, end_line=14, end_column=3)
    carets = format_findings([f], "full").splitlines()[3]
    assert carets == "   | \t^^^^^^^^"


def test_full_separates_findings_and_marks_only_fixable(findings):
    out = format_findings(findings, "full")
    blocks = out.split("\n\n")
    assert len(blocks) == 3
    assert blocks[0].startswith("data/load.py:1:1: BL100 num_workers")
    assert "help" not in blocks[0]  # empty help gives no line
    assert blocks[1].startswith("nb.ipynb:cell 2:3:1: BL020 model is not")
    assert "[*]" not in blocks[0] + blocks[1] and "BL001 [*]" in blocks[2]
    assert "\x1b[" not in out


def test_full_show_fixes(findings):
    assert "fix" not in format_findings([findings[0]], "full")
    out = format_findings([findings[0]], "full", show_fixes=True)
    assert "  = fix (safe): Insert `optimizer.zero_grad()`\n" in out
    assert "12:5-12:5 -> 'optimizer.zero_grad()\\n    '" in out


@pytest.mark.parametrize(
    ("verification", "line"),
    [
        ({"status": "not_confirmed", "device": "cuda", "evidence": "loss fell", "seconds": 1.0},
         "  = not confirmed on cuda in 1.0 s: loss fell"),
        ({"status": "could_not_run", "device": None, "evidence": "no GPU", "seconds": None},
         "  = could not run: no GPU"),
    ],
)
def test_full_verification_lines(verification, line):
    assert line in format_findings([make(verification=verification)], "full").splitlines()


def test_colour_only_when_asked(findings):
    for fmt in ("full", "concise"):
        assert "\x1b[" not in format_findings(findings, fmt)
        coloured = format_findings(findings, fmt, color=True)
        assert "\x1b[1;31mBL001\x1b[0m" in coloured  # error: bold red
        assert "\x1b[1;33mBL020\x1b[0m" in coloured  # warning: bold yellow
        assert "\x1b[1;34mBL100\x1b[0m" in coloured  # info: bold blue
    for fmt in ("json", "lsp", "sarif", "github"):
        assert "\x1b[" not in format_findings(findings, fmt, color=True)


# --- json ---------------------------------------------------------------------------------


def test_json(findings):
    data = json.loads(format_findings(findings, "json"))
    assert [d["code"] for d in data] == ["BL100", "BL020", "BL001"]
    base = {"code", "name", "severity", "message", "help", "path", "line", "column",
            "end_line", "end_column", "fix", "url"}
    assert set(data[0]) == base
    assert set(data[1]) == base | {"cell"}
    assert set(data[2]) == base | {"verification"}
    err = data[2]
    assert (err["line"], err["column"], err["end_line"], err["end_column"]) == (12, 5, 12, 20)
    assert err["severity"] == "error" and data[1]["severity"] == "warning"
    assert data[0]["severity"] == "info"
    assert err["url"] == PAGE_URL.format(code="BL001")
    assert err["fix"] == {
        "applicability": "safe",
        "message": "Insert `optimizer.zero_grad()`",
        "edits": [{"line": 12, "column": 5, "end_line": 12, "end_column": 5,
                   "content": "optimizer.zero_grad()\n    "}],
    }
    assert err["verification"] == VERIFIED
    assert data[0]["fix"] is None and data[1]["cell"] == 2


# --- lsp ----------------------------------------------------------------------------------


def test_lsp(findings):
    data = json.loads(format_findings(findings, "lsp"))
    uri = Path("train.py").resolve().as_uri()
    assert set(data) == {uri, Path("nb.ipynb").resolve().as_uri(),
                         Path("data/load.py").resolve().as_uri()}
    (diag,) = data[uri]
    assert diag["range"] == {"start": {"line": 11, "character": 4},
                             "end": {"line": 11, "character": 19}}
    assert diag["severity"] == 1 and diag["code"] == "BL001" and diag["source"] == "bertlint"
    assert diag["codeDescription"] == {"href": PAGE_URL.format(code="BL001")}
    assert diag["message"].startswith("gradients accumulate across steps")
    assert diag["data"]["name"] == "missing-zero-grad"
    assert diag["data"]["help"] == "Call `optimizer.zero_grad()` once per step"
    assert diag["data"]["fix"]["edits"][0]["column"] == 5  # fix keeps the JSON (1-based) shape
    assert diag["data"]["verification"] == VERIFIED
    (related,) = diag["relatedInformation"]
    assert related["location"]["uri"] == uri and "grad norm grew 3.0x" in related["message"]
    severities = {d["code"]: d["severity"] for ds in data.values() for d in ds}
    assert severities == {"BL001": 1, "BL020": 2, "BL100": 3}
    (info,) = data[Path("data/load.py").resolve().as_uri()]
    assert "relatedInformation" not in info and info["data"]["fix"] is None


# --- sarif --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    # The OASIS 2.1.0 errata01 schema declares draft-04; use whatever it declares.
    assert cls.META_SCHEMA["$schema"].rstrip("#") == schema["$schema"].rstrip("#")
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_validates(findings, sarif_validator):
    log = json.loads(format_findings(findings, "sarif"))
    errors = [e.message for e in sarif_validator.iter_errors(log)]
    assert errors == []


def test_sarif_carries_files_not_linted_as_tool_notifications(findings, sarif_validator):
    """A file bertlint's parser cannot read is the tool's trouble, not a result: the invocation's notifications."""
    notices = [Notice("train.py", "Python 3.11.7 compiles it, but bertlint's parser (libcst) cannot read it here", 4, 1),
               Notice("nb.ipynb", "Python compiles it, but ...", 2, 1, cell=3), Notice("deep.py", "it nests too deeply", 0)]
    log = json.loads(format_findings(findings, "sarif", notices=notices))
    assert [e.message for e in sarif_validator.iter_errors(log)] == []
    [invocation] = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is True
    first, second, third = invocation["toolExecutionNotifications"]
    assert third["locations"] == [{"physicalLocation": {"artifactLocation": {"uri": "deep.py"}}}]
    assert first["level"] == "warning" and first["message"]["text"].startswith("not linted: Python 3.11.7 compiles it")
    assert first["locations"][0]["physicalLocation"] == {"artifactLocation": {"uri": "train.py"},
                                                         "region": {"startLine": 4, "startColumn": 1, "endLine": 4, "endColumn": 1}}
    assert second["properties"] == {"cell": 3}
    assert len(log["runs"][0]["results"]) == len(findings)  # no result for them
    assert "invocations" not in json.loads(format_findings(findings, "sarif"))["runs"][0]
    assert json.loads(format_findings(findings, "json", notices=notices)) == json.loads(format_findings(findings, "json"))  # findings only


def test_notice_reads_like_a_location_then_why():
    assert str(Notice("a.py", "why", 4, 2)) == "a.py:4:2: not linted: why"
    assert str(Notice("nb.ipynb", "why", 2, 1, cell=3)) == "nb.ipynb:cell 3:2:1: not linted: why"
    assert str(Notice("deep.py", "why", 0)) == "deep.py: not linted: why"  # no place: the whole file


def _result(log):
    return log["runs"][0]["results"][0]


@pytest.mark.parametrize(
    "breakage",
    [
        lambda log: _result(log).update(level="fatal"),
        lambda log: _result(log).pop("message"),
        lambda log: _result(log)["locations"][0]["physicalLocation"]["region"].update(startLine=0),
        lambda log: _result(log).update(fixes=[{"artifactChanges": []}]),
        lambda log: log.update(version="2.0.0"),
        lambda log: log["runs"][0]["tool"].pop("driver"),
    ],
)
def test_schema_rejects_broken_logs(findings, sarif_validator, breakage):
    """Guards against a schema that accepts anything (e.g. truncated or mis-assembled)."""
    log = json.loads(format_findings(findings, "sarif"))
    breakage(log)
    assert not sarif_validator.is_valid(log)


def test_sarif_content(findings):
    log = json.loads(format_findings(findings, "sarif"))
    assert log["version"] == "2.1.0" and "sarif-schema-2.1.0" in log["$schema"]
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "bertlint" and driver["version"] == __version__
    assert driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == ["BL001", "BL020", "BL100"]
    assert rules[0]["name"] == "missing-zero-grad"
    assert rules[0]["helpUri"] == PAGE_URL.format(code="BL001")
    assert rules[0]["shortDescription"]["text"]
    results = run["results"]
    assert [r["ruleId"] for r in results] == ["BL100", "BL020", "BL001"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    assert [r["level"] for r in results] == ["note", "warning", "error"]
    err = results[2]
    assert err["message"]["text"] == "gradients accumulate across steps"
    loc = err["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "train.py"
    assert loc["region"] == {"startLine": 12, "startColumn": 5, "endLine": 12, "endColumn": 20}
    assert err["properties"]["verification"] == VERIFIED
    (fix,) = err["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.py"
    assert change["replacements"] == [{
        "deletedRegion": {"startLine": 12, "startColumn": 5, "endLine": 12, "endColumn": 5},
        "insertedContent": {"text": "optimizer.zero_grad()\n    "},
    }]
    assert "properties" not in results[0] and "fixes" not in results[0]
    assert results[1]["properties"] == {"cell": 2}


def test_sarif_uris_are_relative_posix(sarif_validator):
    inside = make(path=str(Path.cwd() / "sub dir" / "t.py"))
    outside = make(path="/definitely/not/under/cwd.py")
    log = json.loads(format_findings([inside, outside], "sarif"))
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]}  # results sort by path, which depends on the cwd
    assert uris == {"file:///definitely/not/under/cwd.py", "sub%20dir/t.py"}
    assert sarif_validator.is_valid(log)


# --- github -------------------------------------------------------------------------------


def test_github(findings):
    assert format_findings(findings, "github").splitlines() == [
        "::notice file=data/load.py,line=1,col=1,endLine=1,endColumn=3,title=BL100 slow-loader"
        "::num_workers is 0",
        "::warning file=nb.ipynb,line=3,col=1,endLine=4,endColumn=8,title=BL020 eval-mode-missing"
        "::model is not in eval mode",
        "::error file=train.py,line=12,col=5,endLine=12,endColumn=20,title=BL001 missing-zero-grad"
        "::gradients accumulate across steps%0Averified on cpu in 2.1 s: grad norm grew 3.0x over 4 steps",
    ]


def test_github_escaping():
    f = make(path="a,b:c%.py", message="100% of\r\nsteps: a, b")
    assert format_findings([f], "github") == (
        "::error file=a%2Cb%3Ac%25.py,line=12,col=5,endLine=12,endColumn=20,"
        "title=BL001 missing-zero-grad::100%25 of%0D%0Asteps: a, b\n"
    )


# --- summary / statistics -----------------------------------------------------------------


def test_summary_line(findings):
    """The closing line counts each severity by its name (one finding of each here), never warnings as errors."""
    assert summary_line([]) == "All checks passed!"
    assert summary_line(findings) == "Found 1 error, 1 warning and 1 info (1 fixable with `--fix`)."
    assert summary_line(findings[1:]) == "Found 1 warning and 1 info."
    assert summary_line(findings[1:2]) == "Found 1 warning."
    assert summary_line(findings[:1]) == "Found 1 error (1 fixable with `--fix`)."
    assert summary_line([findings[2], findings[0]] * 3 + [findings[1]] * 2) == "Found 3 errors, 2 warnings and 3 infos (3 fixable with `--fix`)."
    unsafe = dataclasses.replace(findings[1], extra={"hidden_fix": findings[0].fix})  # an unsafe fix without --unsafe-fixes
    assert summary_line([unsafe]) == "Found 1 warning (1 fixable with `--fix --unsafe-fixes`)."
    assert summary_line([findings[0], unsafe]) == "Found 1 error and 1 warning (1 fixable with `--fix`; 1 more with `--unsafe-fixes`)."
    assert summary_line([], fixed=1) == "Fixed 1 finding."
    assert summary_line([], fixed=3) == "Fixed 3 findings."
    assert summary_line(findings[:1], fixed=1) == "Found 2 findings (1 fixed; 1 error remaining)."
    assert summary_line(findings[1:], fixed=2) == "Found 4 findings (2 fixed; 1 warning and 1 info remaining)."
    assert summary_line([], not_linted=1) == "All checks passed! Not linted: 1 file (see the warning above)."
    assert summary_line(findings[1:2], not_linted=2) == "Found 1 warning. Not linted: 2 files (see the warnings above)."
    assert summary_line([], files=1) == "All checks passed! Checked 1 file."
    assert summary_line(findings[1:], files=5) == "Found 1 warning and 1 info. Checked 5 files."


def test_statistics(findings):
    many = findings + [findings[1]] * 10 + [make(fix=None)]
    assert statistics(many) == (
        "11\tBL020\t[ ] eval-mode-missing\n"
        " 2\tBL001\t[*] missing-zero-grad\n"
        " 1\tBL100\t[ ] slow-loader\n"
    )
    assert statistics([]) == ""
