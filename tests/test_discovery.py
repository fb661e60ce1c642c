"""File discovery: excludes, .gitignore semantics, symlinks, unreadable paths, determinism."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bertlint import discovery
from bertlint.config import Settings
from bertlint.discovery import DiscoveryError, discover


def touch(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")


def rel(root: Path, files: list[Path]) -> list[str]:
    return [p.relative_to(root).as_posix() for p in files]


def run(root: Path, *paths: Path | str, **settings) -> tuple[list[str], list[tuple[Path, str]], list[tuple[Path, str]]]:
    s = Settings(project_root=root, **settings)
    files, problems, warnings = discover([Path(p) for p in (paths or (root,))], s)
    return rel(root, files), problems, warnings


needs_symlinks = pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")


def test_collects_python_and_notebooks_sorted(tmp_path):
    touch(tmp_path, "b.py", "a.py", "pkg/mod.py", "nb/explore.ipynb", "stub.pyi", "notes.txt", "pkg/data.json")
    files, problems, warnings = run(tmp_path)
    assert files == ["a.py", "b.py", "nb/explore.ipynb", "pkg/mod.py"] and problems == []


def test_default_excludes_skip_venvs_and_caches(tmp_path):
    touch(tmp_path, "train.py", ".venv/lib/x.py", "venv/y.py", "build/z.py", "pkg/__pycache__/m.py",
          "foo.egg-info/setup.py", "deep/node_modules/k.py", "lib/site-packages/torch/nn.py")
    assert run(tmp_path)[0] == ["train.py"]


def test_exclude_and_extend_exclude(tmp_path):
    touch(tmp_path, "train.py", "data/gen.py", "scripts/old_x.py", "scripts/new.py", "a/b/gen.py", "venv/v.py")
    # exclude replaces the defaults (venv is linted again); extend-exclude adds
    files, _, _ = run(tmp_path, exclude=("data",), extend_exclude=("scripts/old_*", "**/b/"))
    assert files == ["scripts/new.py", "train.py", "venv/v.py"]


def test_dir_only_pattern_does_not_exclude_files(tmp_path):
    touch(tmp_path, "logs.py", "logs/x.py")
    assert run(tmp_path, extend_exclude=("logs/",))[0] == ["logs.py"]
    assert run(tmp_path, extend_exclude=("logs*",))[0] == []


def test_explicit_excluded_file_is_still_linted(tmp_path):
    touch(tmp_path, "build/gen.py", "data/x.py")
    files, _, _ = run(tmp_path, tmp_path / "build" / "gen.py", tmp_path / "data" / "x.py", extend_exclude=("data",))
    assert files == ["build/gen.py", "data/x.py"]


def test_force_exclude_applies_the_exclusions_to_explicit_paths(tmp_path):
    """What pre-commit needs: it names every staged file, excluded ones included."""
    touch(tmp_path, "build/gen.py", "data/deep/x.py", "logs.py", "keep.py", "data.py")
    named = [tmp_path / "build" / "gen.py", tmp_path / "data" / "deep" / "x.py", tmp_path / "logs.py",
             tmp_path / "keep.py", tmp_path / "data.py", tmp_path / "data"]
    files, _, _ = run(tmp_path, *named, extend_exclude=("data/", "logs*"), force_exclude=True)
    assert files == ["data.py", "keep.py"]  # `data/` names folders only: the file data.py stays


def test_force_exclude_never_matches_above_the_project(tmp_path):
    """A pattern matching a folder that holds the project (`build` in /home/build/proj) excludes nothing."""
    project = tmp_path / "build" / "proj"
    touch(project, "train.py")
    assert run(project, project / "train.py", force_exclude=True)[0] == ["train.py"]


def test_explicit_file_with_any_suffix(tmp_path):
    touch(tmp_path, "script")
    assert run(tmp_path, tmp_path / "script")[0] == ["script"]


def test_explicit_excluded_directory_is_walked(tmp_path):
    touch(tmp_path, "build/gen.py", "build/__pycache__/c.py")
    assert run(tmp_path, tmp_path / "build")[0] == ["build/gen.py"]


def test_duplicates_count_once(tmp_path):
    touch(tmp_path, "a.py", "pkg/b.py")
    files, _, _ = run(tmp_path, tmp_path, tmp_path / "a.py", tmp_path / "pkg", tmp_path / "pkg" / "b.py")
    assert files == ["a.py", "pkg/b.py"]


def test_relative_paths_stay_relative(tmp_path, monkeypatch):
    touch(tmp_path, "src/a.py")
    monkeypatch.chdir(tmp_path)
    files, _, _ = discover([Path("src")], Settings(project_root=tmp_path))
    assert files == [Path("src/a.py")]


def test_missing_path_raises(tmp_path):
    with pytest.raises(DiscoveryError, match=r"nope\.py: No such file or directory"):
        discover([tmp_path / "nope.py"], Settings(project_root=tmp_path))


# --------------------------------------------------------------------------- .gitignore


def test_gitignore_nested_and_negation(tmp_path):
    touch(tmp_path, "train.py", "scratch.py", "gen/out.py", "keep/scratch.py",
          "sub/a.py", "sub/tmp_b.py", "sub/tmp_keep.py", "sub/inner/tmp_c.py")
    (tmp_path / ".gitignore").write_text("scratch.py\ngen/\n# comment\n!keep/scratch.py\n")
    (tmp_path / "sub" / ".gitignore").write_text("tmp_*.py\n!tmp_keep.py\n")
    files, _, _ = run(tmp_path)
    assert files == ["keep/scratch.py", "sub/a.py", "sub/tmp_keep.py", "train.py"]


def test_deeper_gitignore_can_reinclude(tmp_path):
    touch(tmp_path, "nb/a.ipynb", "nb/b.ipynb")
    (tmp_path / ".gitignore").write_text("*.ipynb\n")
    (tmp_path / "nb" / ".gitignore").write_text("!a.ipynb\n")
    assert run(tmp_path)[0] == ["nb/a.ipynb"]


def test_anchored_gitignore_pattern(tmp_path):
    touch(tmp_path, "top.py", "pkg/top.py")
    (tmp_path / ".gitignore").write_text("/top.py\n")
    assert run(tmp_path)[0] == ["pkg/top.py"]


def test_respect_gitignore_false(tmp_path):
    touch(tmp_path, "a.py")
    (tmp_path / ".gitignore").write_text("*.py\n")
    assert run(tmp_path)[0] == []
    assert run(tmp_path, respect_gitignore=False)[0] == ["a.py"]


def test_parent_gitignore_applies_up_to_git_root(tmp_path):
    repo = tmp_path / "repo"
    touch(repo, "src/pkg/a.py", "src/pkg/gen_b.py")
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("gen_*.py\n")
    (tmp_path / ".gitignore").write_text("a.py\n")  # above the git root: not ours
    files, _, _ = discover([repo / "src" / "pkg"], Settings(project_root=repo / "src"))
    assert rel(repo, files) == ["src/pkg/a.py"]


def test_parent_gitignore_up_to_project_root_without_git(tmp_path):
    touch(tmp_path, "src/a.py", "src/gen_b.py")
    (tmp_path / ".gitignore").write_text("gen_*.py\n")
    assert run(tmp_path, tmp_path / "src")[0] == ["src/a.py"]


def test_pathspec_is_imported_only_when_a_gitignore_exists(tmp_path):
    import subprocess

    touch(tmp_path, "a.py")
    code = (
        "import sys; from pathlib import Path; from bertlint.config import Settings; "
        "from bertlint.discovery import discover; "
        f"discover([Path({str(tmp_path)!r})], Settings(project_root=Path({str(tmp_path)!r}))); "
        "print('pathspec' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# --------------------------------------------------------------------------- symlinks and errors


@needs_symlinks
def test_symlink_loop_does_not_hang_and_is_a_warning(tmp_path):
    touch(tmp_path, "a/x.py")
    os.symlink(tmp_path, tmp_path / "a" / "up")
    os.symlink("self.py", tmp_path / "a" / "self.py")  # ELOOP
    files, problems, warnings = run(tmp_path)
    assert files == ["a/x.py"] and problems == []
    assert warnings == [(tmp_path / "a" / "self.py", "symbolic link loop; skipped"),
                        (tmp_path / "a" / "up", "symbolic link loop (points to an ancestor directory); not followed")]


@needs_symlinks
def test_symlinked_directory_is_followed_once(tmp_path):
    touch(tmp_path, "real/x.py", "outside/y.py")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    os.symlink(tmp_path / "outside", tmp_path / "real" / "ext")
    files, problems, warnings = run(tmp_path, tmp_path / "real", tmp_path / "alias")
    # x.py is reported under its physical path; outside/ is reached only through the link
    assert files == ["real/ext/y.py", "real/x.py"] and problems == warnings == []


@needs_symlinks
def test_broken_symlinked_source_is_a_warning(tmp_path):
    touch(tmp_path, "a.py")
    os.symlink(tmp_path / "gone.py", tmp_path / "b.py")
    os.symlink(tmp_path / "gone", tmp_path / "notes")  # not a source file: silently ignored
    files, problems, warnings = run(tmp_path)
    assert files == ["a.py"] and problems == [] and warnings == [(tmp_path / "b.py", "broken symbolic link; skipped")]


@needs_symlinks
def test_broken_symlink_named_on_the_command_line_is_an_error(tmp_path):
    os.symlink(tmp_path / "gone.py", tmp_path / "b.py")
    with pytest.raises(DiscoveryError, match=r"b\.py: No such file or directory"):
        run(tmp_path, tmp_path / "b.py")


def test_unreadable_directory_is_a_problem(tmp_path, monkeypatch):
    """Simulated here; for real, through the command line without root's powers, in test_safety.py."""
    touch(tmp_path, "ok/a.py", "locked/b.py")
    real_scandir = os.scandir

    def scandir(path):
        if Path(path) == tmp_path / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", scandir)
    files, problems, warnings = run(tmp_path)
    assert files == ["ok/a.py"] and problems == [(tmp_path / "locked", "Permission denied")]


def test_unreadable_gitignore_is_a_problem_not_a_crash(tmp_path, monkeypatch):
    touch(tmp_path, "a.py")
    (tmp_path / ".gitignore").write_text("*.py\n")
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).endswith(".gitignore"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", fake_open)
    files, problems, warnings = run(tmp_path)
    assert files == ["a.py"] and problems == [(tmp_path / ".gitignore", "Permission denied")]


def test_explicit_directory_inside_an_ignored_tree_is_walked(tmp_path):
    repo = tmp_path / "repo"
    touch(repo, "generated/pkg/a.py", "generated/pkg/skip_b.py")
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("/generated/\n")
    (repo / "generated" / "pkg" / ".gitignore").write_text("skip_*.py\n")
    assert run(repo)[0] == []
    files, _, _ = discover([repo / "generated" / "pkg"], Settings(project_root=repo))
    assert rel(repo, files) == ["generated/pkg/a.py"]
