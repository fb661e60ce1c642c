"""The GitHub Action (action.yml), run step by step as the runner runs a composite action.

The `run` steps are executed as GitHub executes them (`bash --noprofile --norc -eo pipefail`), their
`${{ inputs.* }}` and `${{ github.action_path }}` expressions filled in, their `if:` conditions
evaluated; the `uses` steps (setup-python, upload-sarif) cannot run here and are checked by name.
One test installs bertlint as the action does, from the action's own checkout into a fresh venv
(it needs the package index: `-m "not network"` leaves it out offline); the others run the lint
steps with the bertlint of this environment.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bertlint.cli import main
from conftest import ROOT
from checkout import readme_block

ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
CONDITION = re.compile(r"^inputs\.([\w-]+) == '(\w+)'$")
SCRIPT = '''\
from transformers import AutoTokenizer, TrainingArguments

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "bb"], padding="max_length")
args = TrainingArguments("out", evaluation_strategy="epoch")
'''
HERE = Path(sys.executable).parent  # the bertlint of this environment
CLEAN = SCRIPT.replace("evaluation_strategy", "eval_strategy").replace('padding="max_length"', "padding=True")


def fill(text: str, inputs: dict[str, str]) -> str:
    """`${{ inputs.NAME }}` and `${{ github.action_path }}`: the only expressions the action may use."""
    def value(match: re.Match) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(ROOT)
        assert expression.startswith("inputs."), expression
        return inputs[expression.removeprefix("inputs.")]
    return EXPRESSION.sub(value, text)


def run_action(project: Path, bindir: Path, skip: tuple[str, ...] = (), **given: str) -> dict[str, object]:
    """Every step in order, as the runner would, until a `run` step fails: name -> its result, or
    'skipped' (its `if:` is false), or 'uses <action>' (not runnable here)."""
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    assert set(given) <= set(inputs), set(given) - set(inputs)
    inputs.update(given)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}", "GITHUB_ACTION_PATH": str(ROOT), "NO_COLOR": "1"}
    if bindir != HERE:
        env.pop("PYTHONPATH", None)  # the bertlint installed there, not this checkout's src/
    outcome: dict[str, object] = {}
    for step in STEPS:
        name = step.get("name") or step["uses"]
        if "if" in step:
            condition = CONDITION.match(step["if"])
            assert condition, f"unsupported if: {step['if']}"
            if inputs[condition.group(1)] != condition.group(2):
                outcome[name] = "skipped"
                continue
        if "uses" in step:
            outcome[name] = f"uses {step['uses']}"
            continue
        if name in skip:
            continue
        step_env = {**env, **{key: fill(str(value), inputs) for key, value in step.get("env", {}).items()}}
        result = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", fill(step["run"], inputs)],
                                cwd=project, env=step_env, capture_output=True, text=True, timeout=600)
        outcome[name] = result
        if result.returncode != 0:
            break
    return outcome


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bertlint.toml").write_text('transformers-version = "5.0"\n')
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def annotations(stdout: str) -> list[str]:
    return [line.split("::")[1] for line in stdout.splitlines() if line.startswith("::")]


def test_manifest_declares_what_its_steps_use():
    assert ACTION["runs"]["using"] == "composite"
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    used = {m.group(1).removeprefix("inputs.") for m in EXPRESSION.finditer(text) if m.group(1) != "github.action_path"}
    used |= {m.group(1) for step in STEPS if "if" in step for m in [CONDITION.match(step["if"])] if m}
    assert used == set(ACTION["inputs"]) == {"paths", "args", "python-version", "install", "sarif", "sarif-file"}
    assert [step["uses"] for step in STEPS if "uses" in step] == ["actions/setup-python@v5", "github/codeql-action/upload-sarif@v3"]
    assert all(step.get("shell") == "bash" for step in STEPS if "run" in step)


def test_run_steps_use_only_real_bertlint_options():
    """Every option of every `bertlint` command line in the action is one `bertlint check` accepts."""
    check = main.commands["check"]
    known = {opt for param in check.params for opt in (*param.opts, *param.secondary_opts)}
    lines = [step["run"] for step in STEPS if "run" in step and step["run"].startswith("bertlint ")]
    assert len(lines) == 2
    for line in lines:
        words = shlex.split(line)
        assert words[:2] == ["bertlint", "check"]
        options = [word for word in words if word.startswith("--")]
        assert options and set(options) <= known, set(options) - known


def test_findings_become_annotations_and_fail_the_job(project: Path):
    outcome = run_action(project, HERE, skip=("Install bertlint",), args="--preview")  # BL106 (an info) is a preview rule
    assert outcome["Write the SARIF report"] == outcome["Upload the SARIF report to code scanning"] == "skipped"
    lint = outcome["Lint"]
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert annotations(lint.stdout) == ["notice file=train.py,line=4,col=24,endLine=4,endColumn=44,title=BL106 static-padding-to-max",
                                        "error file=train.py,line=5,col=33,endLine=5,endColumn=60,title=BL601 removed-training-argument"]
    assert not (project / "bertlint.sarif").exists()


def test_args_and_paths_reach_bertlint(project: Path):
    (project / "clean.py").write_text(CLEAN)
    lint = run_action(project, HERE, skip=("Install bertlint",), paths="clean.py")["Lint"]
    assert lint.returncode == 0 and annotations(lint.stdout) == [], lint.stdout + lint.stderr
    lint = run_action(project, HERE, skip=("Install bertlint",), args="--preview --ignore BL601")["Lint"]
    assert lint.returncode == 1 and [a.split()[0] for a in annotations(lint.stdout)] == ["notice"]
    lint = run_action(project, HERE, skip=("Install bertlint",), args="--preview --ignore BL601,BL106")["Lint"]
    assert lint.returncode == 0 and annotations(lint.stdout) == [], lint.stdout + lint.stderr


@pytest.mark.network
def test_the_action_installs_bertlint_from_its_checkout_and_writes_sarif(project: Path, tmp_path_factory):
    """setup-python stands for a fresh venv here; the install step then runs as written."""
    venv = tmp_path_factory.mktemp("action-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    outcome = run_action(project, venv / "bin", sarif="true", args="--preview")
    install = outcome["Install bertlint"]
    assert install.returncode == 0, install.stdout + install.stderr
    assert (venv / "bin" / "bertlint").exists()
    assert outcome["Write the SARIF report"].returncode == 0
    assert outcome["Upload the SARIF report to code scanning"] == "uses github/codeql-action/upload-sarif@v3"
    log = json.loads((project / "bertlint.sarif").read_text())
    assert log["version"] == "2.1.0"
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in log["runs"][0]["results"]] == [
        ("BL106", 4), ("BL601", 5)]
    lint = outcome["Lint"]
    assert lint.returncode == 1 and len(annotations(lint.stdout)) == 2, lint.stdout + lint.stderr


def vendored(project: Path) -> Path:
    """The README's layout: a copy of bertlint at tools/bertlint (its own fixtures are full of findings)."""
    (project / "tools" / "bertlint" / "fixtures").mkdir(parents=True)
    (project / "tools" / "bertlint" / "fixtures" / "bad.py").write_text(SCRIPT)
    return project


def test_readme_workflow(project: Path):
    workflow = yaml.safe_load(readme_block("### CI: GitHub Actions", "yaml"))
    steps = workflow["jobs"]["bertlint"]["steps"]
    assert [step["uses"] for step in steps] == ["actions/checkout@v4", "./tools/bertlint"]
    given = {key: str(value).lower() if isinstance(value, bool) else str(value) for key, value in steps[1]["with"].items()}
    assert given["sarif"] == "true" and workflow["permissions"]["security-events"] == "write"
    outcome = run_action(vendored(project), HERE, skip=("Install bertlint",), **given)
    assert outcome["Write the SARIF report"].returncode == 0
    log = json.loads((project / "bertlint.sarif").read_text())
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["BL601"]
    lint = outcome["Lint"]
    assert lint.returncode == 1 and annotations(lint.stdout) == [
        "error file=train.py,line=5,col=33,endLine=5,endColumn=60,title=BL601 removed-training-argument"], lint.stdout + lint.stderr


def test_readme_gitlab_job(project: Path):
    """The job's bertlint commands, as printed (its `pip install` of the copy is the action's install step)."""
    job = yaml.safe_load(readme_block("(`.gitlab-ci.yml`", "yaml"))["bertlint"]
    install, *commands = job["script"]
    assert install == "pip install --quiet ./tools/bertlint" and job["artifacts"]["paths"] == ["bertlint.sarif"]
    vendored(project)
    env = {**os.environ, "PATH": f"{HERE}{os.pathsep}{os.environ['PATH']}", "NO_COLOR": "1"}
    results = [subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True) for command in commands]
    assert [r.returncode for r in results] == [0, 1], [r.stderr for r in results]
    assert [r["ruleId"] for r in json.loads((project / "bertlint.sarif").read_text())["runs"][0]["results"]] == ["BL601"]  # BL106 (info) is in preview since stop 22's judgments
    assert re.findall(r"^(\S+: BL\d+)", results[1].stdout, re.MULTILINE) == ["train.py:5:33: BL601"]
