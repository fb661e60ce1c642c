"""The target transformers version, end to end: config key, then the script's own `# /// script` pin,
then a pin near the script, then the installed package's metadata (never an import), then the newest known release."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import target as stage
from bertlint import versions
from bertlint.cli import main
from bertlint.config import load_settings
from bertlint.rules import all_codes

SCRIPT = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='out', no_cuda=True)\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def target(script: Path, **kwargs) -> tuple[tuple[int, ...], str]:
    settings = load_settings(script.parent, all_codes(), **kwargs)
    return stage.target_version(settings, script, script.read_text(encoding="utf-8"))


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """Run from the temporary project, and pretend nothing is installed unless a test says so."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: None)


def cli(*args: str, cwd: Path):
    """The real `bertlint` command, in-process, from `cwd` (the fixture has chdir'ed there)."""
    assert Path.cwd() == cwd
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


# --------------------------------------------------------------------------- specifiers


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("==4.40.2", (4, 40, 2)),
        ("===4.46.3", (4, 46, 3)),
        (">=4.40,<4.41", (4, 40, 0)),
        (">=4.40, <5", (4, 57, 0)),
        ("<4.41", (4, 40, 0)),
        ("<=4.46.3", (4, 46, 3)),
        ("~=4.40", (4, 57, 0)),
        ("~=4.40.1", (4, 40, 1)),
        ("==4.40.*", (4, 40, 0)),
        ("!=4.41,<4.42", (4, 40, 0)),
        (">4.30,<=4.31", (4, 31, 0)),
    ],
)
def test_specifier_resolves_to_the_newest_release_it_allows(spec, expected):
    assert versions.resolve_specifier(spec) == expected


@pytest.mark.parametrize("spec", [">=4.30", ">4.40", "!=4.41", "==banana", ">=5.0,<4.0"])
def test_specifier_without_a_ceiling_is_not_a_pin(spec):
    assert versions.resolve_specifier(spec) is None


def test_show_drops_trailing_zero_patch():
    assert (versions.show((4, 41, 0)), versions.show((4, 46, 3)), versions.show((5, 0, 0))) == ("4.41", "4.46.3", "5.0")


# --------------------------------------------------------------------------- precedence


def test_config_key_wins_over_a_pin(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.bertlint]\ntransformers-version = "4.40"\n')
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    version, source = target(write(tmp_path / "train.py", SCRIPT))
    assert version == (4, 40, 0)
    assert source == "transformers-version in pyproject.toml"


@pytest.mark.parametrize(("given_by", "said"), [(None, "--transformers-version"), ("the editor settings", "transformers-version in the editor settings")])
def test_an_override_is_credited_to_who_gave_it(tmp_path, given_by, said):
    write(tmp_path / "pyproject.toml", '[tool.bertlint]\ntransformers-version = "4.40"\n')
    script = write(tmp_path / "train.py", SCRIPT)
    assert target(script, overrides={"transformers_version": "5.0"}, overrides_from=given_by) == ((5, 0, 0), said)


@pytest.mark.parametrize(
    ("name", "text", "expected", "shown"),
    [
        ("requirements.txt", "torch>=2.1\ntransformers[torch]==4.46.3  # the cluster image\n", (4, 46, 3), "transformers==4.46.3"),
        ("requirements-dev.txt", "pytest\ntransformers>=4.40,<4.41\n", (4, 40, 0), "transformers>=4.40,<4.41"),
        ("requirements.txt", "transformers ~= 4.38.0 ; python_version >= '3.9'\n", (4, 38, 0), "transformers~=4.38.0"),
    ],
)
def test_requirements_pin_next_to_the_script(tmp_path, name, text, expected, shown):
    write(tmp_path / name, text)
    version, source = target(write(tmp_path / "train.py", SCRIPT))
    assert version == expected
    assert source == f"the pin {shown} in {name}"


def test_requirements_txt_wins_over_requirements_dev(tmp_path):
    write(tmp_path / "requirements-dev.txt", "transformers==4.30.2\n")
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    assert target(write(tmp_path / "train.py", SCRIPT))[0] == (4, 46, 3)


def test_an_edited_pin_is_seen_by_a_long_lived_process(tmp_path):
    script = write(tmp_path / "train.py", SCRIPT)
    write(tmp_path / "requirements.txt", "transformers==4.40.2\n")
    assert target(script)[0] == (4, 40, 2)
    write(tmp_path / "requirements.txt", "transformers==4.46.3  # upgraded\n")
    assert target(script)[0] == (4, 46, 3)


INLINE = """\
# /// script
# requires-python = ">=3.10"
# dependencies = [
#   "torch>=2.1",
#   "transformers==4.40.2",
# ]
# ///
"""


def test_inline_script_metadata_pin_wins_over_the_project_s(tmp_path):
    """PEP 723: the script's own dependencies are more specific than the project's requirements."""
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    version, source = target(write(tmp_path / "train.py", INLINE + SCRIPT))
    assert (version, source) == ((4, 40, 2), "the pin transformers==4.40.2 in the script's `# /// script` block")


@pytest.mark.parametrize(
    "block",
    [
        INLINE.replace("transformers==4.40.2", "transformers"),  # no ceiling: not a pin
        INLINE.replace("# /// script", "# /// pyproject"),  # another block type
        INLINE.replace("# ]\n", ""),  # broken TOML
        INLINE.replace("#   \"transformers", "   \"transformers"),  # not a comment block
    ],
)
def test_inline_block_without_a_usable_pin_falls_back_to_the_project_s(tmp_path, block):
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    assert target(write(tmp_path / "train.py", block + SCRIPT))[0] == (4, 46, 3)


def test_cli_inline_pin_sets_the_severity(tmp_path):
    write(tmp_path / "train.py", INLINE + SCRIPT)
    run = cli("--format", "json", "--select", "BL601", "train.py", cwd=tmp_path)
    [finding] = json.loads(run.stdout)
    assert finding["severity"] == "warning"
    assert "(target 4.40.2 from the pin transformers==4.40.2 in the script's `# /// script` block)" in finding["message"]


def test_pyproject_dependencies_pin(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["torch", "transformers>=4.40,<4.41"]\n')
    version, source = target(write(tmp_path / "train.py", SCRIPT))
    assert version == (4, 40, 0)
    assert source == "the pin transformers>=4.40,<4.41 in pyproject.toml"


def test_pyproject_optional_dependencies_pin(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n[project.optional-dependencies]\ntrain = [\n  "transformers==4.44.2",\n]\n')
    assert target(write(tmp_path / "train.py", SCRIPT))[0] == (4, 44, 2)


def test_unpinned_requirement_is_not_a_pin(tmp_path):
    write(tmp_path / "requirements.txt", "transformers>=4.30\n")
    assert target(write(tmp_path / "train.py", SCRIPT)) == (versions.latest(), "the latest release known to bertlint")


def test_pin_found_up_to_the_project_root(tmp_path):
    write(tmp_path / "bertlint.toml", "select = ['BL6']\n")
    write(tmp_path / "requirements.txt", "transformers==4.45.2\n")
    script = write(tmp_path / "experiments" / "glue" / "train.py", SCRIPT)
    assert target(script)[0] == (4, 45, 2)


def test_pin_above_the_project_root_is_not_the_project_s(tmp_path):
    write(tmp_path / "requirements.txt", "transformers==4.30.2\n")
    write(tmp_path / "project" / "bertlint.toml", "select = ['BL6']\n")
    script = write(tmp_path / "project" / "train.py", SCRIPT)
    assert target(script)[0] == versions.latest()


def test_pin_of_the_repository_found_when_run_from_elsewhere(tmp_path, monkeypatch):
    """`bertlint ~/repo/src/train.py` run outside the repository: the root is the folder holding `.git`, so the
    repository's requirements.txt pins the target (a folder without one keeps the file's own folder as root)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / "requirements.txt", "transformers==4.45.2\n")
    script = write(repo / "src" / "train.py", SCRIPT)
    monkeypatch.chdir(write(tmp_path / "elsewhere" / "x.txt", "").parent)
    assert target(script)[0] == (4, 45, 2)
    bare = tmp_path / "bare"
    write(bare / "requirements.txt", "transformers==4.45.2\n")
    assert target(write(bare / "src" / "train.py", SCRIPT))[0] == versions.latest()


def test_installed_metadata_next(tmp_path, monkeypatch):
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: (4, 33, 3) if library == "transformers" else None)
    assert target(write(tmp_path / "train.py", SCRIPT)) == ((4, 33, 3), "the installed transformers package")


def test_pin_wins_over_installed(tmp_path, monkeypatch):
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: (4, 33, 3) if library == "transformers" else None)
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    assert target(write(tmp_path / "train.py", SCRIPT))[0] == (4, 46, 3)


def test_latest_last(tmp_path):
    assert target(write(tmp_path / "train.py", SCRIPT)) == (versions.latest(), "the latest release known to bertlint")


def test_installed_version_read_from_metadata_without_importing(tmp_path):
    """A fake `transformers-4.33.3.dist-info` on the path: bertlint reports 4.33 and never imports
    transformers, torch or tensorflow while linting."""
    site = tmp_path / "site"
    write(site / "transformers-4.33.3.dist-info" / "METADATA", "Metadata-Version: 2.1\nName: transformers\nVersion: 4.33.3\n")
    write(site / "transformers" / "__init__.py", "raise SystemExit('transformers was imported')\n")
    project = tmp_path / "project"
    script = write(project / "train.py", SCRIPT)
    code = textwrap.dedent(
        f"""
        import json, sys
        sys.path.insert(0, {str(site)!r})
        from pathlib import Path
        from bertlint import engine
        from bertlint.config import load_settings
        from bertlint.target import target_version
        from bertlint.rules import all_codes
        path = Path({str(script)!r})
        settings = load_settings(path.parent, all_codes(), isolated=True)
        findings = engine.lint_source(path.read_text(), path, settings, target=target_version(settings, path, path.read_text()))
        heavy = sorted(m for m in ("transformers", "torch", "tensorflow") if m in sys.modules)
        print(json.dumps([target_version(settings, path), [f.message for f in findings], heavy]))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    (version, source), messages, heavy = json.loads(result.stdout)
    assert (tuple(version), source) == ((4, 33, 3), "the installed transformers package")
    assert any("`no_cuda` is deprecated since 4.32" in m and "target 4.33.3 from the installed transformers package" in m for m in messages)
    assert heavy == []


# --------------------------------------------------------------------------- the acceptance, through the CLI


@pytest.mark.parametrize("config_name", ["pyproject.toml", "bertlint.toml"])
def test_acceptance_warning_on_440_error_on_50(tmp_path, config_name):
    """The same script: BL601 a warning with transformers-version 4.40 (deprecated), an error with 5.0
    (removed); the message names the version and where it came from."""
    write(tmp_path / "train.py", SCRIPT)
    results = {}
    for version in ("4.40", "5.0"):
        body = f'transformers-version = "{version}"\n'
        write(tmp_path / config_name, ("[tool.bertlint]\n" + body) if config_name == "pyproject.toml" else body)
        run = cli("--format", "json", "--select", "BL601", "train.py", cwd=tmp_path)
        assert run.exit_code == 1, run.output
        [finding] = json.loads(run.stdout)
        results[version] = finding
    assert results["4.40"]["severity"] == "warning"
    assert results["4.40"]["message"] == (
        f"`no_cuda` is deprecated since 4.32 and removed in 5.0 (target 4.40 from transformers-version in {config_name})"
    )
    assert results["5.0"]["severity"] == "error"
    assert results["5.0"]["message"] == (
        f"`no_cuda` was removed in 5.0 (target 5.0 from transformers-version in {config_name}): this line raises "
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'no_cuda'"
    )
    assert (results["4.40"]["line"], results["4.40"]["column"]) == (2, 44)


def test_cli_pin_in_requirements(tmp_path):
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    write(tmp_path / "train.py", SCRIPT.replace("no_cuda=True", "evaluation_strategy='epoch'"))
    run = cli("--format", "json", "--select", "BL601", "train.py", cwd=tmp_path)
    [finding] = json.loads(run.stdout)
    assert finding["severity"] == "warning"
    assert "(target 4.46.3 from the pin transformers==4.46.3 in requirements.txt)" in finding["message"]


def test_cli_pin_at_the_top_of_the_working_directory(tmp_path, monkeypatch):
    """`bertlint src/train.py` run at a repository's top, no config file anywhere: the repository's requirements.txt
    pins the script in src/ (the working directory is the project root, as ruff takes it); run from src/ itself, the
    top's file lies outside the project and pins nothing."""
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    write(tmp_path / "src" / "train.py", SCRIPT.replace("no_cuda=True", "evaluation_strategy='epoch'"))
    [finding] = json.loads(cli("--format", "json", "--select", "BL601", "src/train.py", cwd=tmp_path).stdout)
    assert "(target 4.46.3 from the pin transformers==4.46.3 in requirements.txt)" in finding["message"]
    monkeypatch.chdir(tmp_path / "src")
    [finding] = json.loads(cli("--format", "json", "--select", "BL601", "train.py", cwd=tmp_path / "src").stdout)
    assert "4.46.3" not in finding["message"]


# --- the other requirement files, and where the project runs ------------------------------------

REAL_INSTALLED_IN = stage._installed_in  # the autouse fixture replaces it


@pytest.mark.parametrize(("name", "body", "version"), [
    ("setup.cfg", "[options]\ninstall_requires =\n    torch\n    transformers==4.38.2\n", (4, 38, 2)),
    ("environment.yml", "name: ft\ndependencies:\n  - python=3.10\n  - transformers=4.39\n", (4, 39, 0)),
    ("environment.yml", "name: ft\ndependencies:\n  - pip\n  - pip:\n    - transformers==4.41.1\n", (4, 41, 1)),
    ("Pipfile", '[packages]\ntorch = "*"\ntransformers = "==4.42.4"\n', (4, 42, 4)),
    ("Pipfile", '[packages]\ntransformers = {version = "<4.44", extras = ["torch"]}\n', (4, 43, 0)),
    ("pyproject.toml", '[tool.poetry.dependencies]\npython = "^3.10"\ntransformers = "~4.39"\n', (4, 39, 0)),
    ("pyproject.toml", '[tool.poetry.group.train.dependencies]\ntransformers = {version = "^4.24.0", extras = ["torch"]}\n', (4, 57, 0)),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntransformers = "4.30.2"\n', (4, 30, 2)),
    ("poetry.lock", '[[package]]\nname = "torch"\nversion = "2.0.1"\n\n[[package]]\nname = "transformers"\nversion = "4.30.2"\n', (4, 30, 2)),
    ("uv.lock", 'version = 1\n[[package]]\nname = "transformers"\nversion = "4.44.2"\nsource = { registry = "https://pypi.org/simple" }\n', (4, 44, 2)),
    ("Pipfile.lock", '{"_meta": {}, "default": {"transformers": {"hashes": [], "version": "==4.41.1"}}, "develop": {}}', (4, 41, 1)),
], ids=["setup.cfg", "conda", "conda-pip", "pipfile", "pipfile-table", "poetry-tilde", "poetry-group-caret", "poetry-bare",
        "poetry.lock", "uv.lock", "Pipfile.lock"])
def test_other_requirement_files_pin(tmp_path, name, body, version):
    write(tmp_path / name, body)
    found, source = target(write(tmp_path / "train.py", SCRIPT))
    assert found == version and source.endswith(f" in {name}")


@pytest.mark.parametrize(("name", "body"), [
    ("environment.yml", "dependencies:\n  - transformers\n"),
    ("Pipfile", '[packages]\ntransformers = "*"\n'),
    ("pyproject.toml", '[tool.poetry.dependencies]\ntransformers = "*"\ntorch = {git = "https://github.com/pytorch/pytorch"}\n'),
    ("uv.lock", '[[package]]\nname = "transformers"\nversion = "4.44.2"\nresolution-markers = ["python_full_version < \'3.9\'"]\n'
                '[[package]]\nname = "transformers"\nversion = "4.57.1"\nresolution-markers = ["python_full_version >= \'3.9\'"]\n'),
    ("Pipfile.lock", '{"default": {"transformers": {"git": "https://github.com/huggingface/transformers", "ref": "abc"}}}'),
    ("poetry.lock", '[[package]\nname = "transformers"\nversion = "4.30.2"\n'),
], ids=["conda", "pipfile", "poetry", "uv-fork", "pipfile.lock-git", "broken-lock"])
def test_unpinned_entries_of_other_files_pin_nothing(tmp_path, name, body):
    write(tmp_path / name, body)
    assert target(write(tmp_path / "train.py", SCRIPT)) == (versions.latest(), stage.LATEST)


def test_lock_file_comes_before_the_manifest_it_resolves(tmp_path):
    """`poetry install` installs poetry.lock's release, not the newest that pyproject.toml's `^4.24.0` admits; a
    requirements.txt beside them still comes first, as before."""
    write(tmp_path / "pyproject.toml", '[tool.poetry.dependencies]\ntransformers = "^4.24.0"\n')
    write(tmp_path / "poetry.lock", '[[package]]\nname = "Transformers"\nversion = "4.24.0"\n')
    script = write(tmp_path / "train.py", SCRIPT)
    assert target(script) == ((4, 24, 0), "the pin transformers==4.24.0 in poetry.lock")
    write(tmp_path / "requirements.txt", "transformers==4.46.3\n")
    assert target(script)[0] == (4, 46, 3)


def test_precision_corpus_carries_every_pin_file(monkeypatch):
    """benchmarks/precision/corpus.py copies into a corpus the files the target stage reads (`PIN_FILES`)."""
    spec = importlib.util.spec_from_file_location("precision_corpus", Path(__file__).parent.parent / "benchmarks" / "precision" / "corpus.py")
    corpus = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, corpus)  # its dataclasses look their module up there
    spec.loader.exec_module(corpus)
    for name in (*stage._OTHER_FILES, "requirements.txt", "requirements-dev.txt"):
        assert corpus.PIN_FILES.fullmatch(name), name


def fake_environment(env: Path, version: str) -> Path:
    (env / "lib" / "python3.11" / "site-packages" / f"transformers-{version}.dist-info").mkdir(parents=True)
    (env / "bin").mkdir()
    (env / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return env


def test_the_project_s_own_environment_wins_over_bertlint_s(tmp_path, monkeypatch):
    """What the project runs with (its .venv), not what bertlint happens to be installed beside."""
    monkeypatch.setattr(stage, "_installed_in", REAL_INSTALLED_IN)
    fake_environment(tmp_path / ".venv", "4.36.2")
    assert target(write(tmp_path / "train.py", SCRIPT)) == ((4, 36, 2), "the transformers installed in the project's environment .venv/")


def test_an_active_environment_on_path_when_bertlint_s_own_has_none(tmp_path, monkeypatch):
    """A pre-commit hook's environment has no transformers; the terminal's activated one does."""
    env = fake_environment(tmp_path / "elsewhere" / "venv", "4.37.1")
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: None if paths == tuple(sys.path) else REAL_INSTALLED_IN(paths, library))
    monkeypatch.setenv("PATH", f"{tmp_path / 'nothing'}{os.pathsep}{env / 'bin'}{os.pathsep}/usr/bin")
    version, source = target(write(tmp_path / "project" / "train.py", SCRIPT))
    assert version == (4, 37, 1) and source == f"the transformers installed in the active environment {env}"


def test_one_run_s_targets_are_each_file_s_own(tmp_path):
    """A run resolves each folder once (`Targets`): every file still gets what resolving it alone gives,
    whether its pin sits in its folder, above it, in its own text, or nowhere, and a file outside the
    project sees only its own folder's files (not the pin above the project)."""
    write(tmp_path / "requirements.txt", "transformers==4.30.2\n")
    project = tmp_path / "project"
    write(project / "bertlint.toml", "select = ['BL6']\n")
    write(project / "requirements.txt", "transformers==4.45.2\n")
    write(project / "exp" / "requirements.txt", "transformers==4.40.2\ndatasets==2.21.0\n")
    write(tmp_path / "elsewhere" / "requirements.txt", "peft~=0.9.0\n")
    names = ("project/train.py", "project/exp/a.py", "project/exp/deep/b.py", "project/other/c.py", "project/other/d.py", "elsewhere/e.py")
    scripts = [write(tmp_path / name, SCRIPT) for name in names]
    scripts.append(write(project / "pinned.py", INLINE + SCRIPT))
    (project / "other" / "link.py").symlink_to(scripts[2])
    scripts.append(project / "other" / "link.py")
    settings = load_settings(project, all_codes())
    run = stage.Targets(settings)
    for script in scripts + scripts:  # twice: the second time every folder is known
        text = script.read_text(encoding="utf-8")
        alone = stage.target_version(settings, script, text)
        assert run(script, text) == alone and repr(run(script, text)) == repr(alone), script
    assert [run(s)[0] for s in scripts] == [(4, 45, 2), (4, 40, 2), (4, 40, 2), (4, 45, 2), (4, 45, 2), versions.latest(), (4, 45, 2), (4, 40, 2)]
    assert run(scripts[6], scripts[6].read_text(encoding="utf-8"))[0] == (4, 40, 2)  # its own `# /// script` pin wins
    assert run(scripts[5]).of("peft") == ((0, 9, 0), f"the pin peft~=0.9.0 in {Path('elsewhere', 'requirements.txt')}")
    assert run(scripts[1]).of("datasets")[0] == (2, 21, 0) and run(scripts[0]).of("datasets")[1] == stage.LATEST


def test_a_run_s_targets_go_to_its_worker_processes_once_they_have_looked(tmp_path, monkeypatch):
    """A run's `Targets` is pickled for its pool after the target stage has resolved files (the environments searched,
    found once a run, among what it holds): it must still pickle, and answer the same on the other side."""
    monkeypatch.setattr(stage, "_installed_in", REAL_INSTALLED_IN)
    fake_environment(tmp_path / ".venv", "4.36.2")
    script = write(tmp_path / "train.py", SCRIPT)
    run = stage.Targets(load_settings(tmp_path, all_codes()))
    found = run(script)
    assert found[0] == (4, 36, 2)
    copy = pickle.loads(pickle.dumps(run))
    assert copy(script) == found and copy(write(tmp_path / "other.py", SCRIPT)) == found


def test_a_new_run_sees_a_pin_and_an_install_that_changed_in_the_same_process(tmp_path, monkeypatch):
    """The language server lints many times in one process: each lint resolves afresh (a run's memo dies
    with it), so an edited requirement file or a new install in the project's .venv counts at once."""
    monkeypatch.setattr(stage, "_installed_in", REAL_INSTALLED_IN)
    script = write(tmp_path / "train.py", SCRIPT)
    fake_environment(tmp_path / ".venv", "4.36.2")
    assert target(script) == ((4, 36, 2), "the transformers installed in the project's environment .venv/")
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "transformers-4.36.2.dist-info").rename(site / "transformers-4.38.1.dist-info")
    assert target(script)[0] == (4, 38, 1)
    write(tmp_path / "requirements.txt", "transformers==4.40.2\n")
    assert target(script)[0] == (4, 40, 2)


def test_the_summary_says_the_target_and_how_to_pin_the_latest(tmp_path):
    write(tmp_path / "train.py", SCRIPT)
    run = cli("--select", "BL601", "train.py", cwd=tmp_path)
    assert run.stdout.rstrip().splitlines()[-1] == f"Target: transformers {versions.show(versions.latest())} ({stage.LATEST}: {stage.HOW_TO_PIN})."
    write(tmp_path / "exp" / "requirements.txt", "transformers==4.46.3\n")
    write(tmp_path / "exp" / "train.py", SCRIPT)
    run = cli("--select", "BL601", "--format", "concise", ".", cwd=tmp_path)
    assert run.stdout.rstrip().splitlines()[-1] == (
        f"Targets: transformers 4.46.3 for 1 file (the pin transformers==4.46.3 in {Path('exp', 'requirements.txt')}); "
        f"transformers {versions.show(versions.latest())} for 1 file ({stage.LATEST}: {stage.HOW_TO_PIN}).")
