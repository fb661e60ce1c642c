"""A target per library (datasets, huggingface_hub, trl, peft, accelerate), found as transformers' is, and
the drift rules that read each library's table both ways (BL612 datasets, BL613 huggingface_hub, BL615
PEFT, BL616 accelerate): every row fires on a release without it and is silent on one with it, pinned the
way users pin (requirements.txt, a notebook's `!pip install` cell)."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from click.testing import CliRunner

from bertlint import cache, versions
from bertlint import target as stage

REAL_INSTALLED_IN = stage._installed_in  # the autouse fixture replaces it
from bertlint.cli import main
from bertlint.config import load_settings
from bertlint.rules import all_codes

CODES = {"datasets": "BL612", "huggingface_hub": "BL613", "trl": "BL614", "peft": "BL615", "accelerate": "BL616"}


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(stage, "_installed_in", lambda paths, library: None)
    return tmp_path


def target(path: Path) -> stage.Target:
    if not path.exists():
        path.write_text("import datasets\n")
    settings = load_settings(path.parent, all_codes())
    return stage.target_version(settings, path, path.read_text(encoding="utf-8"))


def run(path: Path, codes: str = "BL612,BL613,BL614,BL615,BL616") -> list[dict]:
    result = CliRunner().invoke(main, ["--format", "json", "--preview", "--no-cache", "--select", codes, path.name], catch_exceptions=False)
    return json.loads(result.stdout)


# --------------------------------------------------------------------------- the target of each library


@pytest.mark.parametrize(("name", "body"), [
    ("requirements.txt", "transformers==4.40.2\ndatasets==2.21.0\nhuggingface-hub<1.0\npeft~=0.9.0\naccelerate[torch]==0.15.0\n"),
    ("pyproject.toml", '[project]\ndependencies = ["transformers==4.40.2", "datasets==2.21.0", "huggingface_hub<1.0", "peft~=0.9.0", "accelerate==0.15.0"]\n'),
    ("Pipfile", '[packages]\ntransformers = "==4.40.2"\ndatasets = "==2.21.0"\nhuggingface-hub = {version = "<1.0"}\npeft = "~=0.9.0"\naccelerate = "==0.15.0"\n'),
    ("environment.yml", "dependencies:\n  - transformers=4.40.2\n  - datasets=2.21.0\n  - pip:\n    - huggingface_hub<1.0\n    - peft~=0.9.0\n    - accelerate==0.15.0\n"),
], ids=["requirements", "pyproject", "pipfile", "conda"])
def test_each_library_is_pinned_by_the_same_files(project, name, body):
    (project / name).write_text(body)
    found = target(Path(project / "train.py"))
    assert found[0] == (4, 40, 2) and found[1].endswith(f" in {name}")
    assert {lib: v for lib, (v, _) in found.libraries.items()} == {
        "datasets": (2, 21, 0), "huggingface_hub": (0, 36, 0), "peft": (0, 9, 0), "accelerate": (0, 15, 0), "trl": versions.latest("trl"),
    }
    assert found.of("datasets")[1].endswith(f" in {name}") and found.of("trl")[1] == stage.LATEST


def test_notebook_cell_and_inline_block_pin_libraries(project):
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["!pip install -q datasets==2.19.1 peft\n"]}
    notebook = project / "nb.ipynb"
    notebook.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    found = target(notebook)
    assert found.of("datasets") == ((2, 19, 1), "the pin datasets==2.19.1 in cell 1 (`pip install -q datasets==2.19.1 peft`)")
    assert found.of("peft") == (versions.latest("peft"), stage.LATEST)  # unpinned: not a pin
    script = project / "s.py"
    script.write_text('# /// script\n# dependencies = ["accelerate<0.16"]\n# ///\nimport accelerate\n')
    assert target(script).of("accelerate") == ((0, 15, 0), "the pin accelerate<0.16 in the script's `# /// script` block")


def test_installed_distribution_of_each_library(project, monkeypatch):
    site = project / ".venv" / "lib" / "python3.11" / "site-packages"
    for dist in ("huggingface_hub-0.36.0", "datasets-2.21.0", "transformers-4.46.3"):
        (site / f"{dist}.dist-info").mkdir(parents=True)
    (project / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.setattr(stage, "_installed_in", REAL_INSTALLED_IN)
    found = target(Path(project / "train.py"))
    assert found.of("huggingface_hub") == ((0, 36, 0), "the huggingface_hub installed in the project's environment .venv/")
    assert found.of("datasets")[0] == (2, 21, 0) and found[0] == (4, 46, 3)


def test_target_keeps_the_transformers_pair_and_keys_the_cache_with_every_library(project):
    (project / "requirements.txt").write_text("transformers==4.40.2\ndatasets==2.21.0\n")
    script = project / "train.py"
    script.write_text("import datasets\n")
    first = target(script)
    version, source = first
    assert (version, source) == ((4, 40, 2), "the pin transformers==4.40.2 in requirements.txt") == first
    assert pickle.loads(pickle.dumps(first)).libraries == first.libraries  # the parallel runner sends it to workers
    (project / "requirements.txt").write_text("transformers==4.40.2\ndatasets==3.0.0\n")
    second = target(script)
    assert second == first and cache.file_key(b"x", second) != cache.file_key(b"x", first)


def test_show_settings_lists_the_library_versions(project):
    (project / "requirements.txt").write_text("datasets==2.21.0\n")
    (project / "train.py").write_text("import datasets\n")
    out = CliRunner().invoke(main, ["--show-settings", "train.py"]).stdout
    assert '"datasets" = "2.21 (the pin datasets==2.21.0 in requirements.txt)"' in out
    assert f'"peft" = "{versions.show(versions.latest("peft"))} ({stage.LATEST})"' in out


# --------------------------------------------------------------------------- every row, both ways


def _rows():
    """(library, kind, name, lifecycle, error template) for every row of libraries.json."""
    for library in CODES:
        knowledge = versions.data(library)
        for group in knowledge.get("symbols", {}):
            entries, templates = versions.symbols(group, library)
            yield from ((library, "symbol", e.name, e, templates["import_error"]) for e in entries)
        for group, table in knowledge.get("keywords", {}).items():
            entries, error = versions.keywords(group, library)
            yield from ((library, table["callables"][0], name, e, error) for name, e in entries.items())


ROWS = list(_rows())


def _source(library: str, kind: str, name: str) -> str:
    if kind == "symbol":
        return f"from {library} import {name}\n"
    module, function = kind.rsplit(".", 1)
    return f"from {module} import {function}\nresult = {function}('x', {name}=True)\n"


def _spec(version: versions.Version) -> str:
    return f"=={versions.show(version)}.0" if len(versions.show(version).split(".")) == 2 else f"=={versions.show(version)}"


def _older(version: versions.Version, library: str) -> versions.Version:
    """The newest release before `version` (0.10 -> 0.9, 3.0 -> 2.21)."""
    major, minor = version[0], version[1]
    return (major, minor - 1, 0) if minor else (major - 1, versions.data(library)["releases"][str(major - 1)], 0)


@pytest.mark.parametrize(("library", "kind", "name", "entry", "error"), ROWS, ids=[f"{r[0]}.{r[2]}" for r in ROWS])
def test_every_row_fires_without_it_and_is_silent_with_it(project, library, kind, name, entry, error):
    script = project / "train.py"
    script.write_text(_source(library, kind, name))
    pip = library.replace("_", "-")
    if entry.removed:
        without, with_ = entry.removed, _older(entry.removed, library)
    else:
        without, with_ = _older(entry.added, library), entry.added
    (project / "requirements.txt").write_text(f"{pip}{_spec(without)}\n")
    [finding] = run(script)
    assert finding["code"] == CODES[library] and finding["severity"] == "error"
    assert f"{library} {versions.show(entry.removed or entry.added)}" in finding["message"]
    assert error.split(":")[0] in finding["message"]  # ImportError / TypeError / ValueError: what the user's version does
    (project / "requirements.txt").write_text(f"{pip}{_spec(with_)}\n")
    assert [f for f in run(script) if f["severity"] == "error"] == []


def test_a_notebook_install_cell_pins_the_library(project):
    def notebook(pin: str) -> str:
        cells = [
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": [f"%pip install transformers datasets=={pin}\n"]},
            {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": ["from datasets import load_metric\n", "metric = load_metric('accuracy')\n"]},
        ]
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})

    path = project / "nb.ipynb"
    path.write_text(notebook("3.0.0"))
    [finding] = run(path)
    assert finding["code"] == "BL612" and finding["cell"] == 2
    assert "target datasets 3.0 from the pin datasets==3.0.0 in cell 1" in finding["message"]
    path.write_text(notebook("2.21.0"))
    assert run(path) == []


def test_use_auth_token_fix_and_deprecation_warning(project):
    script = project / "train.py"
    script.write_text("from datasets import load_dataset\nds = load_dataset('imdb', use_auth_token=True)\n")
    (project / "requirements.txt").write_text("datasets==2.21.0\n")
    [finding] = run(script)
    assert finding["severity"] == "warning" and finding["message"].startswith(
        "`use_auth_token=` of `datasets.load_dataset` is deprecated since datasets 2.14 and removed in datasets 3.0")
    assert finding["fix"]["applicability"] == "safe"
    (project / "requirements.txt").write_text("datasets==3.2.0\n")
    CliRunner().invoke(main, ["--preview", "--no-cache", "--select", "BL612", "--fix", "train.py"])
    assert script.read_text() == "from datasets import load_dataset\nds = load_dataset('imdb', token=True)\n"
    (project / "requirements.txt").write_text("datasets==2.13.2\n")
    script.write_text("from datasets import load_dataset\nds = load_dataset('imdb', token=True)\n")
    CliRunner().invoke(main, ["--preview", "--no-cache", "--select", "BL612", "--fix", "train.py"])
    assert script.read_text() == "from datasets import load_dataset\nds = load_dataset('imdb', use_auth_token=True)\n"


def test_library_tables_are_consistent():
    for library, _kind, name, entry, error in ROWS:
        assert entry.source and (entry.removed or entry.added), (library, name)
        assert "{name}" in error
        if entry.deprecated and entry.removed:
            assert entry.deprecated < entry.removed
        assert versions.latest(library) >= (entry.removed or entry.added)
