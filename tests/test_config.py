"""Config discovery, strict validation with useful messages, and ruff-like rule selection."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from bertlint.config import (
    DEFAULT_EXCLUDE,
    ConfigError,
    Settings,
    find_config,
    load_settings,
    parse_codes,
    parse_gpu_memory,
)

ALL = ["BL101", "BL102", "BL201", "BL202", "BL301", "BL401", "BL501", "BL502", "BL901", "BL902"]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def pyproject(tmp_path: Path, body: str) -> Path:
    return write(tmp_path / "pyproject.toml", "[tool.bertlint]\n" + textwrap.dedent(body))


def load(tmp_path: Path, **kw) -> Settings:
    return load_settings(tmp_path, ALL, **kw)


def error(tmp_path: Path, body: str, **kw) -> str:
    pyproject(tmp_path, body)
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, **kw)
    return str(exc.value)


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # error messages show paths relative to the cwd


# --------------------------------------------------------------------------- discovery


def test_no_config_uses_defaults(tmp_path):
    s = load(tmp_path)
    assert s.select == frozenset(ALL)
    assert s.exclude == DEFAULT_EXCLUDE
    assert s.config_path is None and s.project_root == tmp_path
    assert (s.gpu_memory_gib, s.imbalance_ratio, s.transformers_version) == (16.0, 3.0, None)
    assert s.respect_gitignore and s.lr_ranges == {} and s.per_file_ignores == ()


def test_default_codes_are_the_base(tmp_path):
    assert load(tmp_path, default_codes=["BL101"]).select == {"BL101"}


def test_nearest_config_wins(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n')
    sub = tmp_path / "a" / "b"
    write(sub / "pyproject.toml", '[tool.bertlint]\nselect = ["BL2"]\n')
    (sub / "c").mkdir()
    s = load_settings(sub / "c", ALL)
    assert s.select == {"BL201", "BL202"}
    assert s.project_root == sub and s.config_path == sub / "pyproject.toml"


def test_pyproject_without_table_is_skipped(tmp_path):
    pyproject(tmp_path, 'select = ["BL9"]\n')
    sub = tmp_path / "pkg"
    write(sub / "pyproject.toml", '[project]\nname = "x"\n[tool.ruff]\nline-length = 100\n')
    s = load_settings(sub, ALL)
    assert s.config_path == tmp_path / "pyproject.toml" and s.project_root == tmp_path
    assert s.select == {"BL901", "BL902"}


def test_broken_pyproject_that_never_mentions_us_is_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", "[project\n")
    assert find_config(tmp_path) is None


def test_bertlint_toml_uses_top_level_keys_and_beats_pyproject(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n')
    write(tmp_path / "bertlint.toml", 'select = ["BL3"]\n')
    s = load(tmp_path)
    assert s.config_path == tmp_path / "bertlint.toml" and s.select == {"BL301"}


def test_start_may_be_a_file(tmp_path):
    pyproject(tmp_path, 'select = ["BL4"]\n')
    script = write(tmp_path / "train.py", "")
    assert load_settings(script, ALL).select == {"BL401"}


def test_config_flag_wins(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n')
    other = write(tmp_path / "conf" / "strict.toml", 'select = ["BL5"]\n')
    s = load(tmp_path, config_file=other)
    assert s.select == {"BL501", "BL502"} and s.project_root == tmp_path / "conf"


def test_config_flag_missing_file(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.toml: No such file"):
        load(tmp_path, config_file=tmp_path / "nope.toml")


def test_config_flag_pyproject_without_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    with pytest.raises(ConfigError, match=r"pyproject\.toml: no \[tool\.bertlint\] table"):
        load(tmp_path, config_file=tmp_path / "pyproject.toml")


def test_isolated_ignores_config(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n')
    s = load(tmp_path, isolated=True)
    assert s.select == frozenset(ALL) and s.config_path is None


def test_toml_syntax_error_names_file_and_line(tmp_path):
    msg = error(tmp_path, 'select = ["BL1"]\ngpu-memory = \n')
    assert msg.startswith("pyproject.toml: invalid TOML") and "line 3" in msg


# --------------------------------------------------------------------------- keys


def test_unknown_key_with_suggestion(tmp_path):
    msg = error(tmp_path, 'selct = ["BL1"]\n')
    assert msg.startswith("pyproject.toml: unknown key 'selct' in [tool.bertlint]; did you mean 'select'?")
    assert "allowed: select, ignore, extend-select, per-file-ignores" in msg


def test_unknown_key_without_close_match(tmp_path):
    msg = error(tmp_path, "zzz = 1\n")
    assert "did you mean" not in msg and "allowed: select" in msg


def test_snake_case_key_is_rejected_with_kebab_hint(tmp_path):
    msg = error(tmp_path, 'extend_select = ["BL1"]\n')
    assert "unknown key 'extend_select'" in msg
    assert "did you mean 'extend-select'? (keys are kebab-case)" in msg


def test_unknown_key_in_bertlint_toml(tmp_path):
    write(tmp_path / "bertlint.toml", "verify = {}\n")
    with pytest.raises(ConfigError, match=r"^bertlint\.toml: unknown key 'verify'; allowed: select"):
        load(tmp_path)


def test_tool_bertlint_not_a_table(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool]\nbertlint = "yes"\n')
    with pytest.raises(ConfigError, match="'tool.bertlint' must be a table"):
        load(tmp_path, config_file=tmp_path / "pyproject.toml")


@pytest.mark.parametrize(
    ("body", "key", "expected"),
    [
        ('select = "BL1"\n', "select", "a list of strings"),
        ("exclude = [1]\n", "exclude", "a list of strings"),
        ('respect-gitignore = "no"\n', "respect-gitignore", "true or false"),
        ("gpu-memory = 0\n", "gpu-memory", "a number of GiB greater than 0"),
        ('gpu-memory = "lots"\n', "gpu-memory", 'a string like "24GiB"'),
        ("gpu-memory = true\n", "gpu-memory", "greater than 0"),
        ("imbalance-ratio = 1\n", "imbalance-ratio", "a number greater than 1"),
        ('imbalance-ratio = "3"\n', "imbalance-ratio", "a number greater than 1"),
        ("transformers-version = 4.40\n", "transformers-version", 'a quoted version string like "4.40"'),
        ('transformers-version = "2.1"\n', "transformers-version", "major version 3 to 6"),
        ('transformers-version = "4.40.1.2"\n', "transformers-version", "major version 3 to 6"),
        ('transformers-version = "v4"\n', "transformers-version", "major version 3 to 6"),
        ('per-file-ignores = ["tests"]\n', "per-file-ignores", "a table of glob pattern"),
        ("learning-rate = [1e-5, 1e-4]\n", "learning-rate", "a table of model family"),
        ("learning-rate = {bert-base = [1e-4, 1e-5]}\n", "learning-rate.bert-base", "0 < low < high"),
        ("learning-rate = {bert-base = [0, 1e-5]}\n", "learning-rate.bert-base", "0 < low < high"),
        ("learning-rate = {bert-base = [1e-5]}\n", "learning-rate.bert-base", "[low, high]"),
        ('learning-rate = {bert-base = ["a", "b"]}\n', "learning-rate.bert-base", "[low, high]"),
        ("learning-rate = {bert-base = {adamw = [1, 0.5]}}\n", "learning-rate.bert-base.adamw", "0 < low < high"),
        ("learning-rate = {bert-base = {}}\n", "learning-rate.bert-base", "adamw, adafactor, sgd"),
    ],
)
def test_bad_values_name_file_key_value_and_allowed(tmp_path, body, key, expected):
    msg = error(tmp_path, body)
    assert msg.startswith(f"pyproject.toml: '{key}' in [tool.bertlint]: invalid value ")
    assert expected in msg.split("; expected ", 1)[1]


def test_bad_value_is_quoted_back(tmp_path):
    assert error(tmp_path, "imbalance-ratio = 0.5\n") == (
        "pyproject.toml: 'imbalance-ratio' in [tool.bertlint]: invalid value 0.5; expected a number greater than 1"
    )
    assert 'invalid value "lots";' in error(tmp_path, 'gpu-memory = "lots"\n')
    assert "invalid value [0, 1e-05];" in error(tmp_path, "learning-rate = {bert-base = [0, 1e-5]}\n")


def test_bad_learning_rate_optimizer(tmp_path):
    msg = error(tmp_path, "[tool.bertlint.learning-rate.bert-base]\nadam = [1e-5, 5e-5]\n")
    assert "unknown key 'adam' in [tool.bertlint.learning-rate.bert-base]" in msg
    assert "did you mean 'adamw'?" in msg and "allowed: adamw, adafactor, sgd" in msg


@pytest.mark.parametrize(("key", "hint"), [
    ("bert", "did you mean 'bert-base'?"),  # a model type, not a family: BL301 never looked it up
    ("robrta-base", "did you mean 'roberta-base'?"),
    ("from_scratchh", "did you mean 'from-scratch'?"),
    ("my-fine-tune", ""),
])
def test_unknown_learning_rate_family_is_an_error(tmp_path, key, hint):
    msg = error(tmp_path, f"[tool.bertlint.learning-rate]\n{key} = [1e-5, 5e-5]\n")
    assert f"pyproject.toml: 'learning-rate.{key}' in [tool.bertlint]: unknown model family or checkpoint {key!r}; {hint}" in msg
    assert "allowed: albert, bart, bert-base, default, electra, encoder-large, from-scratch, gpt2, llm, lora, peft, roberta-base, t5," in msg
    assert "or any checkpoint with its organisation (org/name)" in msg


def test_learning_rate_keys_bl301_looks_up_are_accepted(tmp_path):
    pyproject(tmp_path, "[tool.bertlint.learning-rate]\nBERT-BASE = [1e-5, 5e-5]\nfrom_scratch = [1e-4, 1e-3]\npeft = [1e-5, 1e-3]\n"
                        '"roberta-large" = [1e-6, 1e-4]\n"FacebookAI/roberta-large" = [1e-6, 1e-4]\n"my-org/my-bert" = [1e-5, 1e-4]\n')
    assert set(load(tmp_path).lr_ranges) == {"BERT-BASE", "from_scratch", "peft", "roberta-large", "FacebookAI/roberta-large", "my-org/my-bert"}


def test_unknown_learning_rate_family_through_the_command_line(tmp_path):
    """The real entry point: exit 2, the key and what is allowed on stderr, nothing linted."""
    import subprocess

    pyproject(tmp_path, "[tool.bertlint.learning-rate]\nbert = [1e-5, 5e-5]\n")
    (tmp_path / "train.py").write_text("x = 1\n")
    run = subprocess.run([sys.executable, "-m", "bertlint", "train.py"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("bertlint: error: pyproject.toml: 'learning-rate.bert' in [tool.bertlint]: unknown model family or checkpoint 'bert'; did you mean 'bert-base'?")


def test_bad_family_name(tmp_path):
    msg = error(tmp_path, '[tool.bertlint.learning-rate]\n"my model" = [1e-5, 5e-5]\n')
    assert "'learning-rate.my model'" in msg and "invalid model family name" in msg
    assert "a checkpoint id" in msg


def test_good_values(tmp_path):
    pyproject(
        tmp_path,
        """
        exclude = ["data"]
        extend-exclude = ["legacy/"]
        respect-gitignore = false
        gpu-memory = "24GiB"
        imbalance-ratio = 5
        transformers-version = "4.40.2"
        [tool.bertlint.learning-rate]
        default = [1e-6, 1e-3]
        BERT-base = [1e-5, 5e-5]
        t5 = {adafactor = [1e-4, 1e-2], adamw = [1e-5, 1e-3]}
        "google/flan-t5-base" = [1e-4, 1e-3]
        """,
    )
    s = load(tmp_path)
    assert s.exclude == ("data",) and s.extend_exclude == ("legacy/",)
    assert s.respect_gitignore is False
    assert s.gpu_memory_gib == 24.0 and s.imbalance_ratio == 5.0 and s.transformers_version == "4.40.2"
    assert s.lr_ranges == {
        "default": (1e-6, 1e-3),
        "BERT-base": (1e-5, 5e-5),
        "t5": {"adafactor": (1e-4, 1e-2), "adamw": (1e-5, 1e-3)},
        "google/flan-t5-base": (1e-4, 1e-3),
    }


@pytest.mark.parametrize("version", ["4", "4.40", "4.40.2", "5.0", "3.5.1", "6.0"])
def test_transformers_versions_accepted(tmp_path, version):
    pyproject(tmp_path, f'transformers-version = "{version}"\n')
    assert load(tmp_path).transformers_version == version


@pytest.mark.parametrize(
    ("value", "gib"),
    [(24, 24.0), (7.5, 7.5), ("24GiB", 24.0), ("24GB", 24.0), ("80 GiB", 80.0), ("16g", 16.0),
     ("40", 40.0), ("512MiB", 0.5), ("1TiB", 1024.0)],
)
def test_gpu_memory_forms(value, gib):
    assert parse_gpu_memory(value) == gib


@pytest.mark.parametrize("value", ["", "GiB", "-4GiB", "24 PB", "0GB", float("inf"), False, [24]])
def test_gpu_memory_rejects(value):
    with pytest.raises(ValueError):
        parse_gpu_memory(value)


# --------------------------------------------------------------------------- rule codes


@pytest.mark.parametrize(
    ("select", "expected"),
    [
        (["ALL"], ALL),
        (["BL1"], ["BL101", "BL102"]),
        (["BL10"], ["BL101", "BL102"]),
        (["BL"], ALL),
        (["bl5"], ["BL501", "BL502"]),
        (["BL202", "BL9"], ["BL202", "BL901", "BL902"]),
        ([], []),
    ],
)
def test_select_prefixes(tmp_path, select, expected):
    pyproject(tmp_path, f"select = {select!r}\n".replace("'", '"'))
    assert load(tmp_path).select == frozenset(expected)


def test_extend_select_and_ignore(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\nextend-select = ["BL2"]\nignore = ["BL202", "BL102"]\n')
    assert load(tmp_path).select == {"BL101", "BL201"}


def test_ignore_alone_removes_from_default(tmp_path):
    pyproject(tmp_path, 'ignore = ["BL9", "BL5"]\n')
    assert load(tmp_path).select == {"BL101", "BL102", "BL201", "BL202", "BL301", "BL401"}


def test_more_specific_selector_wins(tmp_path):
    pyproject(tmp_path, 'select = ["BL101"]\nignore = ["BL1"]\n')
    assert load(tmp_path).select == {"BL101"}
    pyproject(tmp_path, 'select = ["BL1"]\nignore = ["BL1"]\n')  # ties: ignore wins
    assert load(tmp_path).select == frozenset()


@pytest.mark.parametrize("bad", ["BL999", "BL3x", "XX1", "B", "BL1011", "L1"])
def test_bad_code_in_file(tmp_path, bad):
    msg = error(tmp_path, f'extend-select = ["BL1", "{bad}"]\n')
    assert msg.startswith(f"pyproject.toml: 'extend-select' in [tool.bertlint]: unknown rule code '{bad}'")
    assert "expected a rule code (e.g. BL101), a prefix (e.g. BL1) or ALL" in msg


def test_bad_code_suggests_close_code(tmp_path):
    assert "did you mean 'BL101'?" in error(tmp_path, 'ignore = ["BL1O1"]\n')


def test_parse_codes():
    assert parse_codes("BL1, BL901", ALL) == {"BL101", "BL102", "BL901"}
    assert parse_codes(["ALL"], ALL) == frozenset(ALL)
    with pytest.raises(ConfigError, match="^unknown rule code 'BL7'"):
        parse_codes("BL7", ALL)


# --------------------------------------------------------------------------- per-file ignores


def test_per_file_ignores(tmp_path):
    pyproject(
        tmp_path,
        """
        [tool.bertlint.per-file-ignores]
        "tests/*.py" = ["BL1"]
        "**/notebooks/*" = ["BL9"]
        "conftest.py" = ["BL201"]
        "legacy/" = ["ALL"]
        """,
    )
    s = load(tmp_path)
    assert s.per_file_ignores[0] == ("tests/*.py", frozenset({"BL101", "BL102"}))
    assert s.codes_for(tmp_path / "tests" / "test_x.py") == s.select - {"BL101", "BL102"}
    assert s.codes_for(Path("tests/test_x.py")) == s.select - {"BL101", "BL102"}  # relative to cwd == root
    assert s.codes_for(tmp_path / "src" / "tests" / "x.py") == s.select  # anchored at the project root
    assert s.codes_for(tmp_path / "notebooks" / "a.ipynb") == s.select - {"BL901", "BL902"}
    assert s.codes_for(tmp_path / "x" / "notebooks" / "a.ipynb") == s.select - {"BL901", "BL902"}
    assert s.codes_for(tmp_path / "pkg" / "conftest.py") == s.select - {"BL201"}  # basename
    assert s.codes_for(tmp_path / "legacy" / "deep" / "old.py") == frozenset()  # directory pattern
    assert s.codes_for(tmp_path / "train.py") == s.select


def test_per_file_ignores_bad_code(tmp_path):
    msg = error(tmp_path, '[tool.bertlint.per-file-ignores]\n"tests/*" = ["BL0"]\n')
    assert msg.startswith("pyproject.toml: 'per-file-ignores.\"tests/*\"' in [tool.bertlint]: unknown rule code 'BL0'")


# --------------------------------------------------------------------------- overrides


def test_overrides_beat_the_file(tmp_path):
    pyproject(
        tmp_path,
        """
        select = ["BL1", "BL2"]
        exclude = ["data"]
        extend-exclude = ["a"]
        gpu-memory = 24
        imbalance-ratio = 4
        transformers-version = "4.30"
        per-file-ignores = {"tests/*" = ["BL1"]}
        """,
    )
    s = load(
        tmp_path,
        overrides={
            "select": ["BL9"], "extend_select": "BL501", "ignore": ["BL902"],
            "exclude": ["other"], "extend_exclude": ["b"], "gpu_memory": "80GB",
            "imbalance_ratio": "10", "transformers_version": "5.0",
            "per_file_ignores": ["scripts/*.py:BL5,BL901"], "respect_gitignore": False,
        },
    )
    assert s.select == {"BL901", "BL501"}
    assert s.exclude == ("other",) and s.extend_exclude == ("a", "b")
    assert (s.gpu_memory_gib, s.imbalance_ratio, s.transformers_version) == (80.0, 10.0, "5.0")
    assert s.per_file_ignores == (("scripts/*.py", frozenset({"BL501", "BL502", "BL901"})),)
    assert s.respect_gitignore is False


def test_cli_select_drops_file_selection_but_file_ignore_alone_carries_over(tmp_path):
    pyproject(tmp_path, 'ignore = ["BL101"]\n')
    assert load(tmp_path, overrides={"select": ["BL1"]}).select == {"BL102"}
    pyproject(tmp_path, 'select = ["BL1"]\nextend-select = ["BL9"]\n')
    assert load(tmp_path, overrides={"extend_select": ["BL2"], "ignore": ["BL102"]}).select == {
        "BL101", "BL201", "BL202", "BL901", "BL902"}


def test_unset_overrides_are_ignored(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n')
    s = load(tmp_path, overrides={"select": None, "ignore": (), "gpu_memory": None})
    assert s.select == {"BL101", "BL102"} and s.gpu_memory_gib == 16.0


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"select": ["BL999"]}, "--select: unknown rule code 'BL999'"),
        ({"extend_select": "BL1,ZZ"}, "--extend-select: unknown rule code 'ZZ'"),
        ({"gpu_memory": "big"}, '--gpu-memory: invalid value "big"; expected a number of GiB'),
        ({"imbalance_ratio": 0.5}, "--imbalance-ratio: invalid value 0.5; expected a number greater than 1"),
        ({"transformers_version": "7.0"}, '--transformers-version: invalid value "7.0"'),
        ({"per_file_ignores": ["tests"]}, '--per-file-ignores: invalid value "tests"; expected PATTERN:CODES'),
        ({"per_file_ignores": ["tests/*:BL0"]}, "--per-file-ignores: unknown rule code 'BL0'"),
    ],
)
def test_bad_overrides_name_the_flag(tmp_path, overrides, message):
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, overrides=overrides)
    assert str(exc.value).startswith(message)


def test_bad_editor_settings_name_the_setting_not_a_flag(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load(tmp_path, overrides={"gpu_memory": "big"}, overrides_from="the editor settings")
    assert str(exc.value).startswith("'gpu-memory' in the editor settings: invalid value \"big\"")


def test_unknown_override_is_a_programming_error(tmp_path):
    with pytest.raises(TypeError, match="learning_rate"):
        load(tmp_path, overrides={"learning_rate": {}})


# --------------------------------------------------------------------------- cache key


def test_cache_key_is_stable_and_sensitive(tmp_path):
    pyproject(tmp_path, 'select = ["BL1"]\n[tool.bertlint.learning-rate]\nbert-base = [1e-5, 5e-5]\n')
    a, b = load(tmp_path), load(tmp_path)
    assert a.cache_key() == b.cache_key() and a == b
    assert load(tmp_path, overrides={"gpu_memory": 40}).cache_key() != a.cache_key()
    assert load(tmp_path, overrides={"select": ["BL2"]}).cache_key() != a.cache_key()


def test_settings_is_frozen_and_hashable():
    s = Settings()
    with pytest.raises(AttributeError):
        s.select = frozenset()  # type: ignore[misc]
    assert hash(s) == hash(Settings(project_root=s.project_root))


def test_importing_config_stays_light():
    import subprocess

    code = "import sys, bertlint.config; print(sorted(m for m in ('tomllib', 'tomli', 'pathspec', 'libcst', 'rich') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
