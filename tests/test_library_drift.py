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
        "datasets": (2, 21, 0), "huggingface_hub": (0, 36, 0), "peft": (0, 9, 0), "accelerate": (0, 15, 0),
        "trl": (0, 11, 0),  # unpinned: the newest release whose own requirements admit transformers 4.40.2 and accelerate
        # 0.15.0 (data/admits.json: 0.12 requires accelerate>=0.34.0)
        **{library: versions.latest(library) for library in stage.OTHERS},  # unpinned: the newest (removed.json)
    }
    assert found.of("datasets")[1].endswith(f" in {name}")
    assert found.of("trl")[1].startswith("trl 0.11, the newest release whose own requirement") and f" in {name}" in found.of("trl")[1]


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


def test_library_versions_setting_pins_each_library_first(project):
    (project / "pyproject.toml").write_text('[tool.bertlint]\nlibrary-versions = { datasets = "2.19", Huggingface-Hub = "0.36.0" }\n')
    (project / "requirements.txt").write_text("datasets==4.0.0\ntrl==0.8.6\n")
    found = target(project / "train.py")
    assert found.of("datasets") == ((2, 19, 0), "library-versions in pyproject.toml")
    assert found.of("huggingface_hub") == ((0, 36, 0), "library-versions in pyproject.toml")
    assert found.of("trl")[1] == "the pin trl==0.8.6 in requirements.txt"  # not configured: found as before
    out = CliRunner().invoke(main, ["--show-settings", "train.py"]).stdout
    assert '"datasets" = "2.19 (library-versions in pyproject.toml)"' in out
    (project / "train.py").write_text("from datasets import load_dataset\nds = load_dataset('imdb', trust_remote_code=True)\n")
    assert run(project / "train.py") == []  # 2.19 takes the keyword, whatever requirements.txt says


@pytest.mark.parametrize(("value", "expected"), [
    ('{ torch = "2.1" }', "expected one of datasets, huggingface_hub, trl, peft, accelerate"),
    ('{ trl = 0.9 }', 'expected a quoted version string like "2.19"'),
    ('"2.19"', 'expected a table of library = "version"'),
])
def test_library_versions_setting_is_checked(project, value, expected):
    (project / "pyproject.toml").write_text(f"[tool.bertlint]\nlibrary-versions = {value}\n")
    (project / "train.py").write_text("import datasets\n")
    result = CliRunner().invoke(main, ["train.py"])
    assert result.exit_code == 2 and expected in result.output


# --------------------------------------------------------------------------- every row, both ways


def _rows():
    """(library, kind, name, lifecycle, error template) for every row of libraries.json, and for BL617's rows
    of versions.json (`is_pretokenized=`, `reduce_labels=`, `processor.feature_extractor`)."""
    for library in CODES:
        knowledge = versions.data(library)
        for group in knowledge.get("symbols", {}):
            entries, templates = versions.symbols(group, library)
            yield from ((library, "symbol", e.name, e, templates["import_error"]) for e in entries)
        for group, table in knowledge.get("keywords", {}).items():
            entries, error = versions.keywords(group, library)
            yield from ((library, e.extra.get("callables", table["callables"])[0], name, e, error) for name, e in entries.items())
    for group in ("image_processor", "image_processor_from_pretrained"):
        entries, error = versions.keywords(group)
        yield from (("transformers", versions.data()["keywords"][group]["callables"][0], name, e, error) for name, e in entries.items())
    entries, templates = versions.symbols("processor")
    yield from (("transformers", "processor", e.name, e, templates["attribute_error"]) for e in entries)
    entries, error = versions.keywords("tokenizer_call")
    yield from (("transformers", "tokenizer", name, e, error) for name, e in entries.items())


ROWS = list(_rows())


def _source(library: str, kind: str, name: str) -> str:
    if kind == "symbol":
        return f"from {library} import {name}\n"
    if kind == "tokenizer":
        return f"from transformers import AutoTokenizer\n\ntok = AutoTokenizer.from_pretrained('bert-base-cased')\nenc = tok(['a', 'b'], {name}=True)\n"
    if kind == "processor":
        return f"from transformers import CLIPProcessor\n\nprocessor = CLIPProcessor.from_pretrained('x')\nsize = processor.{name}.size\n"
    root, imported, *rest = kind.split(".")
    return f"from {root} import {imported}\nresult = {'.'.join([imported, *rest])}('x', {name}=True)\n"


def _spec(version: versions.Version) -> str:
    return f"=={versions.show(version)}.0" if len(versions.show(version).split(".")) == 2 else f"=={versions.show(version)}"


def _older(version: versions.Version, library: str) -> versions.Version:
    """The newest release before `version` (0.10 -> 0.9, 3.0 -> 2.21)."""
    major, minor = version[0], version[1]
    return (major, minor - 1, 0) if minor else (major - 1, versions.data(library)["releases"][str(major - 1)], 0)


def _boundaries(entry: versions.Lifecycle, library: str) -> list[tuple[versions.Version, versions.Version]]:
    """(a release without the row's name, the nearest release with it), on each side the row has."""
    sides = [(entry.removed, _older(entry.removed, library))] if entry.removed else []
    return sides + ([(_older(entry.added, library), entry.added)] if entry.added else [])


def _pin(project: Path, script: Path, library: str, version: versions.Version, how: str) -> Path:
    """Pin `library` at `version` the way users do: a requirements.txt beside the script, or a notebook's
    `!pip install` cell above the script's code."""
    requirement = f"{library.replace('_', '-')}{_spec(version)}"
    if how == "requirements":
        (project / "requirements.txt").write_text(requirement + "\n")
        return script
    cells = [["!pip install -q " + requirement + "\n"], script.read_text().splitlines(keepends=True)]
    notebook = project / "train.ipynb"
    notebook.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return notebook


@pytest.mark.parametrize("how", ["requirements", "notebook"])
@pytest.mark.parametrize(("library", "kind", "name", "entry", "error"), ROWS, ids=[f"{r[0]}.{r[1].rsplit('.', 1)[-1]}.{r[2]}" for r in ROWS])
def test_every_row_fires_without_it_and_is_silent_with_it(project, library, kind, name, entry, error, how):
    script = project / "train.py"
    script.write_text(_source(library, kind, name))
    code = CODES.get(library, "BL617")
    for without, with_ in _boundaries(entry, library):
        removed = entry.removed is not None and without >= entry.removed
        [finding] = run(_pin(project, script, library, without, how), code)
        assert finding["code"] == code
        not_read = "warning" if kind == "tokenizer" else "error"  # a tokenizer keyword newer than the target is only not read
        assert finding["severity"] == (entry.extra.get("severity", "error") if removed else not_read)
        boundary = versions.show(entry.removed if removed else entry.added)
        assert (boundary if kind == "tokenizer" else f"{library} {boundary}") in finding["message"]
        what = entry.extra.get("effect") if removed and "effect" in entry.extra else error.split(":")[0] if removed or kind != "tokenizer" else "does not read it"
        assert what in finding["message"]  # ImportError / TypeError / ValueError, or what the user's version does instead
        assert [f for f in run(_pin(project, script, library, with_, how), code) if f["severity"] == "error"] == []


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


@pytest.mark.parametrize("how", ["requirements", "notebook"])
def test_a_loading_script_path_fails_from_datasets_4(project, how):
    script = project / "train.py"
    script.write_text("from datasets import load_dataset\nds = load_dataset('loaders/squad_local.py', split='train')\n")
    scripts = versions.data("datasets")["scripts"]
    removed = versions.parse_version(scripts["removed"])
    [finding] = run(_pin(project, script, "datasets", removed, how), "BL612")
    assert finding["severity"] == "error"
    assert "RuntimeError: Dataset scripts are no longer supported, but found squad_local.py" in finding["message"]
    assert run(_pin(project, script, "datasets", _older(removed, "datasets"), how), "BL612") == []


def test_summary_names_the_library_targets_findings_depend_on(project):
    (project / "requirements.txt").write_text("datasets==3.0.0\n")
    (project / "train.py").write_text("from datasets import load_metric\n")
    (project / "other.py").write_text("import datasets\n")
    out = CliRunner().invoke(main, ["--preview", "--no-cache", "--select", "BL612", "."]).stdout
    assert out.rstrip().endswith("Library targets: datasets 3.0 (the pin datasets==3.0.0 in requirements.txt).")
    (project / "sub").mkdir()
    (project / "sub" / "requirements.txt").write_text("datasets==3.6.0\n")
    (project / "sub" / "eval.py").write_text("from datasets import load_metric\n")
    out = CliRunner().invoke(main, ["--preview", "--no-cache", "--select", "BL612", "."]).stdout
    assert ("Library targets: datasets 3.0 for 1 file (the pin datasets==3.0.0 in requirements.txt); "
            "datasets 3.6 for 1 file (the pin datasets==3.6.0 in sub/requirements.txt).") in out
    (project / "train.py").write_text("import datasets\n")
    (project / "sub" / "eval.py").write_text("import datasets\n")
    assert "Library targets" not in CliRunner().invoke(main, ["--preview", "--no-cache", "--select", "BL612", "."]).stdout


def test_each_library_group_names_the_rule_that_reads_it():
    from bertlint.rules import all_rules

    readers = {rule.library: code for code, rule in all_rules().items() if getattr(rule, "library", "transformers") != "transformers"}
    assert readers == {library: versions.data(library)["code"] for library in stage.AROUND}


@pytest.mark.parametrize(("body", "help"), [
    ("from datasets import load_metric\nm = load_metric('glue', 'mrpc')\nw = load_metric(\"wer\")\nc = load_metric(\"wer\")\n",
     "`pip install evaluate`, then `import evaluate` and call `evaluate.load('glue', 'mrpc')`, `evaluate.load(\"wer\")` in place of `load_metric`"),
    ("import datasets\nname = 'seqeval'\nm = datasets.load_metric(name)\n",
     "`pip install evaluate`, then `import evaluate` and call `evaluate.load(name)` in place of `load_metric`"),
    # a third positional argument is `process_id` for load_metric and `module_type` for evaluate.load: not rewritten
    ("from datasets import load_metric\nm = load_metric('glue', 'mrpc', 0)\n",
     "`pip install evaluate`, then `import evaluate` and call `evaluate.load` with the same path and configuration name "
     "(its third parameter is `module_type`) in place of `load_metric`"),
    ("from datasets import load_dataset, load_metric\nimport evaluate\nm = evaluate.load('rouge')\n",
     "drop `load_metric` from the import: the script never uses it"),
    # bound anew before every read: the import's binding is never read
    ("from datasets import load_metric\nimport evaluate\nload_metric = evaluate.load\nm = load_metric('rouge')\n",
     "delete the import: the script never reads it (`load_metric = evaluate.load` binds `load_metric` anew before every read)"),
], ids=["own-calls", "a-name", "third-positional", "unused-import", "rebound-import"])
def test_load_metric_help_names_the_files_own_metric(project, body, help):
    (project / "requirements.txt").write_text("datasets==3.0.0\n")
    (project / "train.py").write_text(body)
    [finding] = run(project / "train.py", "BL612")
    assert finding["help"] == help


SFT = "from transformers import TrainingArguments\nfrom trl import SFTTrainer, SFTConfig, DPOTrainer, DPOConfig\n"


@pytest.mark.parametrize(("trl", "call", "help"), [
    ("1.16.0", "SFTTrainer(m, args=TrainingArguments(output_dir='o'), dataset_text_field='content')",
     "pass `args=SFTConfig(..., dataset_text_field=...)` in place of the `TrainingArguments`, which has no such field (`SFTConfig` takes all of its fields)"),
    ("1.16.0", "SFTTrainer(m, TrainingArguments(output_dir='o'), neftune_noise_alpha=5)",
     "set `neftune_noise_alpha=` on the `TrainingArguments` passed as `args=`"),  # a TrainingArguments field
    ("1.16.0", "SFTTrainer(m, train_dataset=d, dataset_text_field='text')", "drop `dataset_text_field=`: 'text' is `SFTConfig`'s default"),
    ("1.16.0", "SFTTrainer(m, train_dataset=d, packing=True)", "pass `args=SFTConfig(..., packing=...)`: the trainer reads it from its config"),
    ("1.16.0", "SFTTrainer(m, args=SFTConfig(output_dir='o'), max_seq_length=512)",
     "set `max_length=` on the `SFTConfig` passed as `args=`; `SFTConfig` renamed `max_seq_length` to `max_length` in trl 0.20"),
    ("0.19.0", "SFTTrainer(m, args=SFTConfig(output_dir='o'), max_seq_length=512)", "set `max_seq_length=` on the `SFTConfig` passed as `args=`"),
    ("0.18.0", "SFTTrainer(m, args=SFTConfig(output_dir='o'), dataset_batch_size=8)",
     "drop `dataset_batch_size=`: `SFTConfig` has no such field either, from trl 0.18 on"),
    ("0.17.0", "SFTTrainer(m, args=SFTConfig(output_dir='o'), dataset_batch_size=8)", "set `dataset_batch_size=` on the `SFTConfig` passed as `args=`"),
    ("1.16.0", "SFTTrainer(m, args=SFTConfig(output_dir='o'), infinite=True)", "drop `infinite=`: no release's `SFTConfig` has such a field"),
    ("1.16.0", "DPOTrainer(m, None, DPOConfig(output_dir='o'), beta=0.1)", "set `beta=` on the `DPOConfig` passed as `args=`"),  # args is DPOTrainer's third
    ("1.16.0", "DPOTrainer(m, r, args=DPOConfig(output_dir='o'), max_prompt_length=128)",
     "drop `max_prompt_length=`: `DPOConfig` has no such field either, from trl 0.29 on"),
    ("0.28.0", "DPOTrainer(m, r, args=DPOConfig(output_dir='o'), max_prompt_length=128)", "set `max_prompt_length=` on the `DPOConfig` passed as `args=`"),
    ("1.16.0", "SFTTrainer(m, args=make(), dataset_text_field='content')", "set `dataset_text_field=` on the `SFTConfig` passed as `args=`"),
], ids=["plain-training-arguments", "training-arguments-field", "default", "no-args", "renamed-in-config", "before-the-rename",
        "config-dropped-it", "before-the-config-dropped-it", "never-a-config-field", "dpo-positional-args", "dpo-config-dropped-it",
        "dpo-before", "unknown-args"])
def test_trl_keyword_help_follows_the_args_the_call_passes(project, trl, call, help):
    (project / "requirements.txt").write_text(f"trl=={trl}\n")
    (project / "train.py").write_text(SFT + f"trainer = {call}\n")
    [finding] = run(project / "train.py", "BL614")
    assert finding["help"] == help


def test_a_call_raises_on_the_first_keyword_it_refuses(project):
    """Python stops a call at the first keyword it does not take: a later refused keyword's finding says so."""
    (project / "requirements.txt").write_text("trl==0.24.0\n")
    (project / "train.py").write_text(SFT + "trainer = SFTTrainer(m, dataset_text_field='t', max_seq_length=512)\n")
    first, second = run(project / "train.py", "BL614")
    assert first["message"].endswith("unexpected keyword argument 'dataset_text_field'")
    assert second["message"].endswith("unexpected keyword argument 'dataset_text_field' (`dataset_text_field`, passed before `max_seq_length`, is refused too)")
    (project / "train.py").write_text(SFT + "trainer = SFTTrainer(m, max_seq_length=512)\n")
    [alone] = run(project / "train.py", "BL614")
    assert alone["message"].endswith("unexpected keyword argument 'max_seq_length'")


def test_a_group_with_config_rows_says_where_its_callables_take_args():
    for library in CODES:
        for group, table in versions.data(library).get("keywords", {}).items():
            if any("config" in row for row in table["arguments"].values()):
                assert isinstance(table.get("args"), int), (library, group)


def test_trl_default_counts_only_where_the_config_has_it():
    # SFTConfig's dataset_text_field defaults to None in 0.9.6-0.11: dropping "text" there would lose it
    (Path("train.py")).write_text(SFT + "trainer = SFTTrainer(m, train_dataset=d, dataset_text_field='text')\n")
    Path("requirements.txt").write_text("trl==0.11.4\n")
    [old] = run(Path("train.py"), "BL614")
    assert old["severity"] == "warning" and old["help"] == "pass `args=SFTConfig(..., dataset_text_field=...)`: the trainer reads it from its config"
    Path("requirements.txt").write_text("trl==0.12.0\n")
    [new] = run(Path("train.py"), "BL614")
    assert new["help"] == "drop `dataset_text_field=`: 'text' is `SFTConfig`'s default"
