"""The measured default rule set: preview selection, the precision data, the rule pages, and the harness.

The harness is tested on a tiny synthetic corpus written here, never on the real one.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import pages, rules
from bertlint.cli import main
from bertlint.config import ConfigError, load_settings
from bertlint.rules import MIN_JUDGED, MIN_PRECISION, all_codes, exact_reason, measured, preview_codes, preview_reason
from conftest import ROOT

HARNESS_DIR = ROOT / "benchmarks" / "precision"
# A loop that never zeroes its gradients (BL303) in a script that also imports a removed name (BL604).
SCRIPT = """\
import torch
from transformers import AdamW, AutoModelForSequenceClassification
model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)
for batch in loader:
    loss = model(**batch).loss
    loss.backward()
    optimizer.step()
"""


def _load_harness():
    spec = importlib.util.spec_from_file_location("precision_harness", HARNESS_DIR / "harness.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


harness = _load_harness()


@pytest.fixture
def measurement(monkeypatch):
    """Figures of our own: every code measured precise over MIN_JUDGED findings, except BL303 (3 judged) and
    BL503 (0.8): those two are the preview rules."""
    data = {"corpus": {"recipe": "test", "files": 7, "repos": []}, "date": "2026-01-01",
            "rules": {code: {"judged": MIN_JUDGED, "right": MIN_JUDGED, "precision": 1.0, "exact": ""} for code in all_codes()}}
    data["rules"]["BL303"] = {"judged": 3, "right": 3, "precision": 1.0, "exact": ""}
    data["rules"]["BL503"] = {"judged": 40, "right": 32, "precision": 0.8, "exact": ""}
    monkeypatch.setattr(rules, "precision_data", lambda: data)
    return data


def _cli(project: Path, *args: str):
    result = CliRunner().invoke(main, ["check", "--format", "json", "--no-cache", *args, str(project / "train.py")])
    return result, sorted({f["code"] for f in json.loads(result.stdout or "[]")}) if result.exit_code in (0, 1) else None


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\n')
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


# --------------------------------------------------------------------------- selection


def test_preview_codes_follow_the_thresholds(measurement):
    assert preview_codes() == {"BL303", "BL503"}
    assert "only 3 of its findings were judged" in preview_reason("BL303")
    assert "0.80 (32 of 40 findings right) is below 0.95" in preview_reason("BL503")
    measurement["rules"]["BL503"] = {"judged": MIN_JUDGED, "right": MIN_JUDGED, "precision": 1.0, "exact": ""}
    measurement["rules"]["BL303"] = {"judged": 0, "right": 0, "precision": None, "exact": "by construction"}
    assert preview_codes() == set()  # enough judged findings, all right; an exact rule needs no figures


def test_a_corpus_far_below_keeps_a_rule_preview(measurement):
    """Precise over all corpora together, but one corpus with 10 or more findings measures it below 0.90."""
    measurement["rules"]["BL601"] = {"judged": 100, "right": 96, "precision": 0.96, "exact": "",
                                     "corpora": {"official": {"judged": 80, "right": 80}, "trigger": {"judged": 20, "right": 16}}}
    assert "on the trigger corpus its precision 0.80 (16 of 20 findings right) is below 0.9" in preview_reason("BL601")
    measurement["rules"]["BL601"]["corpora"]["trigger"] = {"judged": 9, "right": 5}  # too few to judge that corpus alone
    measurement["rules"]["BL601"].update(judged=89, right=85)
    assert preview_reason("BL601") is None
    assert "per corpus: official 80/80, trigger 5/9." in pages.page("BL601")


def test_a_code_the_measurement_lacks_is_preview(measurement):
    del measurement["rules"]["BL101"]
    assert preview_reason("BL101") == "it has not fired on the corpus, so its precision is unmeasured"


def test_preview_is_off_by_default_and_enables_every_selected_preview_rule(tmp_path):
    held = {"BL303", "BL503"}
    off = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True)
    assert not off.preview and not held & off.select and off.select == set(all_codes()) - held
    on = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True, overrides={"preview": True})
    assert on.preview and on.select == set(all_codes())
    prefix = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True, overrides={"preview": True, "select": ["BL3"]})
    assert "BL303" in prefix.select and "BL503" not in prefix.select


def test_explicit_selection_of_a_preview_rule_needs_preview_as_in_ruff(tmp_path):
    """ruff: `--select RUF911` (a preview rule) without preview selects nothing and warns."""
    held = {"BL303", "BL503"}
    settings = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True, overrides={"select": ["BL303", "BL601"]})
    assert settings.select == {"BL601"} and settings.preview_ignored == ("BL303",)
    # A prefix that also names default rules is no mistake: nothing to warn about.
    broad = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True, overrides={"extend_select": ["BL3"]})
    assert broad.preview_ignored == () and "BL303" not in broad.select
    with_preview = load_settings(tmp_path, all_codes(), preview_codes=held, isolated=True, overrides={"select": ["BL303"], "preview": True})
    assert with_preview.select == {"BL303"} and with_preview.preview_ignored == ()


def test_preview_config_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\npreview = true\n')
    assert load_settings(tmp_path, all_codes(), preview_codes={"BL303"}).select == set(all_codes())
    (tmp_path / "pyproject.toml").write_text('[tool.bertlint]\npreview = "yes"\n')
    with pytest.raises(ConfigError, match=r"'preview' in \[tool.bertlint\]: invalid value \"yes\"; expected true or false"):
        load_settings(tmp_path, all_codes())


def test_preview_editor_setting(tmp_path):
    """The language server passes its client's settings as overrides from "the editor settings"."""
    settings = load_settings(tmp_path, all_codes(), preview_codes={"BL303"}, overrides={"preview": True}, overrides_from="the editor settings")
    assert "BL303" in settings.select
    with pytest.raises(ConfigError, match="'preview' in the editor settings: invalid value 1; expected true or false"):
        load_settings(tmp_path, all_codes(), overrides={"preview": 1}, overrides_from="the editor settings")


def test_cli_preview_flag_config_and_explicit_select(measurement, project):
    result, found = _cli(project)
    assert found == ["BL604"]  # BL303 is a preview rule here
    result, found = _cli(project, "--preview")
    assert found == ["BL303", "BL604"]
    result, found = _cli(project, "--select", "BL303")
    assert found == [] and "selection BL303 has no effect because preview is not enabled" in result.stderr
    result, found = _cli(project, "--preview", "--select", "BL303")
    assert found == ["BL303"] and "has no effect" not in result.stderr
    (project / "pyproject.toml").write_text('[tool.bertlint]\ntransformers-version = "5.23"\npreview = true\n')
    assert _cli(project)[1] == ["BL303", "BL604"]
    assert _cli(project, "--no-preview")[1] == ["BL604"]


def test_show_settings_says_whether_preview_is_on(project):
    result = CliRunner().invoke(main, ["check", "--show-settings", "--preview", str(project / "train.py")])
    assert "preview = true\n" in result.stdout


# --------------------------------------------------------------------------- pages and listing


def test_rule_page_shows_the_measured_precision_and_the_corpus(measurement):
    text = pages.page("BL601")
    assert "## Precision" in text
    assert f"Measured precision: 1.00 ({MIN_JUDGED} of {MIN_JUDGED} findings judged right by hand) on 7 public training scripts" in text
    assert "On by default" in text
    preview = pages.page("BL503")
    assert "**Preview rule**" in preview and "0.80 (32 of 40 findings right) is below 0.95" in preview


def test_rules_json_has_preview_and_precision(measurement):
    rows = {row["code"]: row for row in json.loads(CliRunner().invoke(main, ["rules", "--format", "json"]).stdout)}
    assert rows["BL503"]["preview"] is True and rows["BL601"]["preview"] is False
    assert rows["BL503"]["precision"] == {"judged": 40, "right": 32, "precision": 0.8}


# --------------------------------------------------------------------------- the shipped figures


def test_precision_json_covers_every_rule_consistently():
    data = json.loads((ROOT / "src" / "bertlint" / "data" / "precision.json").read_text(encoding="utf-8"))
    assert list(data["corpora"]) == list(harness.CORPORA)  # every corpus measured, in order
    for name, measured_on in data["corpora"].items():
        recipe = harness.CORPORA[name].load_recipe()
        assert measured_on["recipe"] == recipe["id"] and measured_on["files"] > 0, name
        assert measured_on["repos"] == harness.recipe_repos(recipe), name
    assert data["corpus"] == {"recipe": " + ".join(c["recipe"] for c in data["corpora"].values()),
                              "files": sum(c["files"] for c in data["corpora"].values())}
    assert sorted(data["rules"]) == all_codes()
    for code, figures in data["rules"].items():
        assert list(figures["corpora"]) == list(data["corpora"]), code
        assert figures["judged"] == sum(part["judged"] for part in figures["corpora"].values()), code
        assert figures["right"] == sum(part["right"] for part in figures["corpora"].values()), code
        assert all(0 <= part["right"] <= part["judged"] for part in figures["corpora"].values()), code
        expected = round(figures["right"] / figures["judged"], 4) if figures["judged"] else None
        assert figures["precision"] == expected, code
        assert figures["exact"] == exact_reason(code), f"{code}: rerun the harness with --write"


def test_default_rules_meet_the_bar():
    for code in sorted(set(all_codes()) - preview_codes()):
        figures = measured(code)
        assert figures["exact"] or (figures["judged"] >= MIN_JUDGED and figures["right"] / figures["judged"] >= MIN_PRECISION), code


@pytest.mark.parametrize("name", list(harness.CORPORA))
def test_judgments_match_the_shipped_figures(name):
    """precision.json is what the harness computed from each corpus's committed judgments (matched findings only)."""
    judgments = [j for j in harness.read_judgments(harness.CORPORA[name].judgments) if j.verdict]
    assert all(j.verdict in ("right", "wrong") and (j.verdict == "right" or j.reason) for j in judgments)
    data = json.loads((ROOT / "src" / "bertlint" / "data" / "precision.json").read_text(encoding="utf-8"))
    for code, figures in data["rules"].items():
        mine = [j for j in judgments if j.code == code]
        part = figures["corpora"][name]
        assert part["judged"] <= len(mine), code  # stale judgments may remain; never fewer than shipped
        assert part["right"] <= sum(j.verdict == "right" for j in mine), code


# --------------------------------------------------------------------------- the harness


def _finding(path: Path, line: int, code: str = "BL303", severity: str = "error", cell: int | None = None) -> dict:
    out = {"code": code, "severity": severity, "message": "m", "path": str(path), "line": line, "column": 1}
    if cell is not None:
        out["cell"] = cell
    return out


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "repo").mkdir(parents=True)
    (root / "repo" / "a.py").write_text("import x\nfirst()\nsecond()\nfirst()\n")
    cells = [{"cell_type": "markdown", "source": ["# t"]}, {"cell_type": "code", "source": ["import y\n", "third()\n"]}]
    (root / "repo" / "b.ipynb").write_text(json.dumps({"cells": cells, "nbformat": 4}))
    return root


def test_findings_carry_their_source_line_and_context(corpus):
    found = harness.findings_of([_finding(corpus / "repo" / "b.ipynb", 2, cell=2), _finding(corpus / "repo" / "a.py", 3)], corpus)
    assert [(f.path, f.cell, f.line, f.text) for f in found] == [("repo/a.py", None, 3, "second()"), ("repo/b.ipynb", 2, 2, "third()")]
    assert found[0].context[0] == (1, "import x") and found[0].source == harness.source_hash("  second()  ")


def test_judgments_survive_line_shifts_and_flag_new_and_stale(corpus, tmp_path):
    a = corpus / "repo" / "a.py"
    before = harness.findings_of([_finding(a, 2), _finding(a, 3, "BL604"), _finding(a, 4)], corpus)
    judged = [harness.Judgment(f.code, f.path, f.cell, f.line, f.source, verdict, "why" if verdict == "wrong" else "")
              for f, verdict in zip(before, ["right", "wrong", "wrong"])]
    table = tmp_path / "judgments.csv"
    harness.write_judgments(table, judged)
    judged = harness.read_judgments(table)
    # Two lines are inserted above: every finding moves by two; the BL604 line is gone, a BL105 is new.
    a.write_text("import x\n\n\nfirst()\nsecond()\nfirst()\nthird()\n")
    after = harness.findings_of([_finding(a, 4), _finding(a, 6), _finding(a, 7, "BL105")], corpus)
    paired, stale = harness.match(after, judged)
    # The two `first()` findings keep their own verdicts (nearest line first), the new one is unjudged.
    assert {after[i].line: j.verdict for i, j in paired.items()} == {4: "right", 6: "wrong"}
    assert [(j.code, j.line) for j in stale] == [("BL604", 3)]


def test_partial_keeps_the_judgments_of_files_not_on_disk(corpus, tmp_path, capsys):
    """`--partial`: only some of a recipe's files are on disk; the judgments of the others keep their verdicts (counted,
    never stale), while the files on disk are matched as usual. Without it the absent file's judgments are stale."""
    a = corpus / "repo" / "a.py"
    found = [_finding(a, 2)]
    (tmp_path / "f.json").write_text(json.dumps(found))
    rows = [harness.Judgment("BL303", "repo/a.py", None, 2, harness.source_hash("first()"), "right", ""),
            harness.Judgment("BL303", "repo/a.py", None, 3, harness.source_hash("second()"), "wrong", "gone"),
            harness.Judgment("BL101", "repo/gone.py", None, 9, "0" * 12, "wrong", "not on disk")]
    args = ["--corpus", str(corpus), "--findings", str(tmp_path / "f.json"), "--table", str(tmp_path / "r.md"), "--drop-stale"]
    for partial, kept in ((True, [("repo/a.py", 2), ("repo/gone.py", 9)]), (False, [("repo/a.py", 2)])):
        table = tmp_path / f"j{partial}.csv"
        harness.write_judgments(table, rows)
        capsys.readouterr()
        assert harness.main(args + ["--judgments", str(table)] + (["--partial"] if partial else [])) == 0
        assert [(j.path, j.line) for j in harness.read_judgments(table)] == kept
        out = capsys.readouterr().out
        assert ("| BL101 | 1 | 1 | 0 | 0.000 | 0 |" in out) is partial  # the absent file's verdict is counted


def test_a_changed_line_falls_back_to_its_number(corpus):
    a = corpus / "repo" / "a.py"
    judged = [harness.Judgment("BL303", "repo/a.py", None, 3, harness.source_hash("old text"), "right", "")]
    paired, stale = harness.match(harness.findings_of([_finding(a, 3)], corpus), judged)
    assert list(paired) == [0] and stale == []


def test_precision_per_rule_and_groups(corpus):
    a = corpus / "repo" / "a.py"
    found = harness.findings_of([_finding(a, 2), _finding(a, 3, severity="warning"), _finding(a, 4, "BL601"), _finding(a, 1, "BL503", "info")], corpus)
    verdicts = {("BL303", 2): "right", ("BL303", 3): "wrong", ("BL601", 4): "right"}
    paired = {i: harness.Judgment(f.code, f.path, None, f.line, f.source, verdicts[f.code, f.line], "r")
              for i, f in enumerate(found) if (f.code, f.line) in verdicts}
    per_code, groups = harness.tallies(found, paired)
    assert (per_code["BL303"].judged, per_code["BL303"].right, per_code["BL303"].precision) == (2, 1, 0.5)
    assert per_code["BL503"].unjudged == 1 and per_code["BL503"].precision is None
    assert (groups["all"].judged, groups["all"].right) == (3, 2)
    assert (groups["errors"].judged, groups["errors"].right) == (2, 2)
    assert (groups["outside BL6xx"].judged, groups["outside BL6xx"].right, groups["outside BL6xx"].unjudged) == (2, 1, 1)
    data = harness.precision_data({}, "official", per_code, {"BL303": "", "BL601": "exact", "BL101": ""}, {"id": "r", "repos": []}, 1, "d")
    assert data["rules"]["BL303"] == {"judged": 2, "right": 1, "precision": 0.5, "exact": "", "corpora": {"official": {"judged": 2, "right": 1}}}
    assert data["rules"]["BL101"] == {"judged": 0, "right": 0, "precision": None, "exact": "", "corpora": {"official": {"judged": 0, "right": 0}}}


def test_write_replaces_one_corpus_and_keeps_the_other():
    """Each corpus's figures come from its own run; a code's figures are their sum over the corpora."""
    exact = {"BL303": "", "BL601": "exact"}
    official = harness.precision_data({}, "official", {"BL303": harness.Tally(judged=4, right=4)}, exact,
                                      {"id": "o-1", "repos": [{"repo": "a/b"}]}, 10, "2026-01-01")
    both = harness.precision_data(official, "community", {"BL303": harness.Tally(judged=3, right=1)}, exact,
                                  {"id": "c-1", "repos": [{"repo": "c/d"}]}, 5, "2026-01-02")
    assert both["rules"]["BL303"] == {"judged": 7, "right": 5, "precision": 0.7143, "exact": "",
                                      "corpora": {"official": {"judged": 4, "right": 4}, "community": {"judged": 3, "right": 1}}}
    assert both["rules"]["BL601"]["corpora"] == {"official": {"judged": 0, "right": 0}, "community": {"judged": 0, "right": 0}}
    assert both["corpus"] == {"recipe": "o-1 + c-1", "files": 15} and both["date"] == "2026-01-02"
    assert [c["repos"] for c in both["corpora"].values()] == [["a/b"], ["c/d"]]
    # Re-measuring the official corpus replaces its figures only; the corpora stay in CORPORA's order.
    again = harness.precision_data(both, "official", {"BL303": harness.Tally(judged=5, right=4)}, exact,
                                   {"id": "o-2", "repos": []}, 11, "2026-01-03")
    assert again["rules"]["BL303"]["corpora"] == {"official": {"judged": 5, "right": 4}, "community": {"judged": 3, "right": 1}}
    assert list(again["corpora"]) == ["official", "community"] and again["corpus"]["recipe"] == "o-2 + c-1"


def test_a_wrong_verdict_needs_a_reason(tmp_path):
    table = tmp_path / "j.csv"
    table.write_text("code,path,cell,line,source,verdict,reason\nBL303,a.py,,1,abc,wrong,\n")
    with pytest.raises(SystemExit, match="needs its reason"):
        harness.read_judgments(table)


def test_harness_end_to_end_through_the_command_line(corpus, tmp_path):
    """Lint the tiny corpus with bertlint's own entry point, add the pending finding, judge it, report."""
    (corpus / "repo" / "c.py").write_text(textwrap.dedent("""\
        from transformers import AdamW
    """))
    table = tmp_path / "judgments.csv"
    review = tmp_path / "review.md"
    harness.main(["--corpus", str(corpus), "--judgments", str(table), "--table", str(review), "--add-pending"])
    rows = table.read_text().splitlines()
    assert rows[0] == "code,path,cell,line,source,verdict,reason" and rows[1].startswith("BL604,repo/c.py,,1,")
    assert "## BL604 error `repo/c.py:1:26`" in review.read_text() and "**unjudged**" in review.read_text()
    table.write_text(rows[0] + "\n" + rows[1].rstrip(",") + ",right,\n")
    harness.main(["--corpus", str(corpus), "--judgments", str(table), "--table", str(review)])
    assert "verdict: **right**" in review.read_text()


def test_each_corpus_has_its_own_recipe_folder_and_judgments():
    official, community = harness.CORPORA["official"], harness.CORPORA["community"]
    assert (official.recipe.name, official.judgments.name) == ("recipe.json", "judgments.csv")
    assert (community.recipe.name, community.judgments.name) == ("community.json", "community_judgments.csv")
    assert official.folder != community.folder
    assert not {r["repo"] for r in official.load_recipe()["repos"]} & {r["repo"] for r in community.load_recipe()["repos"]}


# --------------------------------------------------------------------------- trigger corpora

corpus_module = sys.modules["corpus"]  # the corpus.py the harness imported


def test_trigger_recipes_are_sets_named_by_their_stem(tmp_path):
    for name in ("trigger.json", "trigger_catalogue3.json", "triggerish.json", "other.json"):
        (tmp_path / name).write_text('{"id": "t", "files": []}')
    found = corpus_module.trigger_corpora(tmp_path)
    assert [(c.name, c.folder.name, c.judgments.name) for c in found] == [
        ("trigger", "corpus-trigger", "trigger_judgments.csv"),
        ("trigger_catalogue3", "corpus-trigger_catalogue3", "trigger_catalogue3_judgments.csv")]
    assert all(c.trigger for c in found) and not harness.CORPORA["official"].trigger
    assert corpus_module.recipe_repos({"files": [{"repo": "b/c"}, {"id": "1"}, {"repo": "a/b"}, {"repo": "b/c"}]}) == ["a/b", "b/c"]
    assert corpus_module.recipe_repos({"repos": [{"repo": "z/z"}, {"repo": "a/a"}]}) == ["z/z", "a/a"]


def test_trigger_files_enter_once_and_at_most_three_a_repository(tmp_path):
    recipe = {"id": "t", "files": []}
    for n in range(5):
        (tmp_path / f"{n}.py").write_text(f"x = {n}\n")
    (tmp_path / "copy.py").write_text("x = 0\n")
    assert corpus_module.add_trigger(recipe, tmp_path, "0.py", {"id": "7", "query": "q", "rule": "BL101"}) is None
    assert corpus_module.add_trigger(recipe, tmp_path, "copy.py", {"id": "9", "query": "q", "rule": "BL101"}) == "the same text is already in the corpus"
    for n in (1, 2, 3):
        assert corpus_module.add_trigger(recipe, tmp_path, f"{n}.py", {"repo": "o/r", "commit": "c0", "path": f"{n}.py", "query": "q", "rule": "BL201"}) is None
    assert corpus_module.add_trigger(recipe, tmp_path, "4.py", {"repo": "o/r", "query": "q", "rule": "BL201"}) == "o/r already gave 3 files"
    assert [f["name"] for f in recipe["files"]] == ["0.py", "1.py", "2.py", "3.py"]
    assert corpus_module.check_trigger(recipe, tmp_path) == ["4.py: not in the recipe", "copy.py: not in the recipe"]
    (tmp_path / "0.py").write_text("changed\n")
    (tmp_path / "2.py").unlink()
    problems = corpus_module.check_trigger(recipe, tmp_path)
    assert "0.py: its text differs from the one judged (read_file id 7)" in problems
    assert "missing 2.py (o/r/2.py at c0, sought for BL201)" in problems


def _committed(repo: Path, files: dict[str, str]) -> str:
    """A git repository at `repo` holding `files` in one commit; the commit's id."""
    import subprocess

    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "t"], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_a_snapshot_file_brings_the_pins_on_its_way_to_the_root(tmp_path):
    repo = tmp_path / "repo"
    commit = _committed(repo, {"requirements.txt": "transformers==4.40.0\n", "src/train.py": "import torch\n",
                               "src/pyproject.toml": "[project]\n", "other/requirements.txt": "peft\n", "src/deep/setup.cfg": ""})
    pins = corpus_module.project_files(repo / ".git", commit, "src/train.py")
    assert pins == {"requirements.txt": b"transformers==4.40.0\n", "src/pyproject.toml": b"[project]\n"}


def test_a_snapshot_file_brings_the_data_it_names(tmp_path):
    repo = tmp_path / "repo"
    notebook = json.dumps({"cells": [{"cell_type": "code", "source": ['df = pd.read_csv("data/train.csv")\n']}]})
    commit = _committed(repo, {"nb/run.ipynb": notebook, "nb/data/train.csv": "text,label\na,0\n", "nb/other.csv": "x\n",
                               "nb/train.py": "df = pd.read_csv('./other.csv')\n", "top.csv": "y\n"})
    # the notebook's JSON text escapes the quotes around the path it reads
    assert corpus_module.data_files(repo / ".git", commit, "nb/run.ipynb", notebook) == {"nb/data/train.csv": b"text,label\na,0\n"}
    assert corpus_module.data_files(repo / ".git", commit, "nb/train.py", "df = pd.read_csv('./other.csv')\n") == {"nb/other.csv": b"x\n"}
