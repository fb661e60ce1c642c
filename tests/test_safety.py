"""`--fix`, `--add-noqa` and `-o` against hostile trees, through the command line in a child process:
read-only files and folders, links, files changed or deleted while the run lints them, a report
folder that is missing or cannot be written.

The permission cases must hold when the suite runs as root, as CI does: root ignores permission
bits, so the child is run without root's powers. It keeps uid 0 but loses every capability
(its capability bounding set is emptied before it executes Python), so that the kernel checks
permissions on it as on any user, while the interpreter, wherever it is installed, stays readable.
(Switching to `nobody` instead needs an interpreter that `nobody` may run: not one installed under
root's 0700 home, as pyenv does.)"""

from __future__ import annotations

import ctypes
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import bertlint

SRC = str(Path(bertlint.__file__).resolve().parents[1])
BAD = "from transformers import TrainingArguments\nargs = TrainingArguments(output_dir='o', no_cuda=True)\n"
FIXED = BAD.replace("no_cuda", "use_cpu")
NOQA = BAD.replace("True)\n", "True)  # noqa: BL601\n")

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions, links and capabilities")


def _powerless() -> None:
    """In the child, before it executes Python: empty the capability bounding set, so that uid 0
    gets no capability at exec (prctl PR_CAPBSET_DROP)."""
    libc = ctypes.CDLL(None, use_errno=True)
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # 24: PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")


def bertlint_cli(*args: str | Path, cwd: Path, privileged: bool = False, before_write: str | None = None) -> subprocess.CompletedProcess:
    """`python -m bertlint --isolated --no-cache ARGS` in `cwd`, without root's powers unless `privileged`.
    `before_write`: Python run with `path` (the file) bound just before the fixed bytes are written,
    as another program would act at that moment (an editor saving, a `git checkout` deleting)."""
    command = [sys.executable, "-m", "bertlint"]
    if before_write is not None:
        command = [sys.executable, "-c", (
            "import sys\nfrom bertlint import fixer\nfrom bertlint.cli import main\nreal = fixer.write_in_place\n"
            "def write_in_place(path, before, after):\n"
            + "".join(f"    {line}\n" for line in before_write.splitlines())
            + "    return real(path, before, after)\n"
            "fixer.write_in_place = write_in_place\nsys.argv[0] = 'bertlint'\nmain()\n"
        )]
    env = {**os.environ, "PYTHONPATH": SRC, "NO_COLOR": "1"}
    drop = os.geteuid() == 0 and not privileged
    return subprocess.run([*command, "--isolated", "--no-cache", "--transformers-version", "5.0", *map(str, args)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=120, preexec_fn=_powerless if drop else None)


def write(path: Path, text: str, mode: int | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


@pytest.fixture
def unlock(tmp_path):
    """Folders locked by a test, writable again afterwards so that pytest can remove them."""
    locked: list[Path] = []
    yield locked.append
    for folder in locked:
        folder.chmod(0o755)


def test_the_child_really_has_no_powers(tmp_path):
    """What the other tests rely on: in the child, a mode-444 file cannot be opened for writing."""
    target = write(tmp_path / "ro.txt", "x", 0o444)
    probe = subprocess.run([sys.executable, "-c", f"open({str(target)!r}, 'w')"], capture_output=True, text=True,
                           preexec_fn=_powerless if os.geteuid() == 0 else None)
    assert probe.returncode == 1 and "PermissionError" in probe.stderr


@pytest.mark.parametrize("privileged", [False, True], ids=["user", "root-if-root"])
def test_read_only_file_is_an_error_and_the_others_are_fixed(tmp_path, privileged):
    """A mode-444 file is never written, not even by root: its findings are printed, the run goes on
    with the other files and exits 2."""
    locked = write(tmp_path / "a_locked.py", BAD, 0o444)
    other = write(tmp_path / "b_other.py", BAD)
    run = bertlint_cli("--fix", ".", cwd=tmp_path, privileged=privileged)
    assert run.returncode == 2, run.stderr
    assert "bertlint: error: a_locked.py: read-only: not fixed" in run.stderr
    assert "Traceback" not in run.stderr
    assert "a_locked.py:2:42: BL601 [*]" in run.stdout and "b_other.py" not in run.stdout
    assert "Found 2 findings (1 fixed; 1 error remaining)." in run.stdout
    assert locked.read_text(encoding="utf-8") == BAD and stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert other.read_text(encoding="utf-8") == FIXED


def test_read_only_folder(tmp_path, unlock):
    """A folder that allows no new names: its writable files are fixed in place (no temporary file is
    needed), its read-only ones are reported; a file in a writable folder is fixed as usual."""
    folder = tmp_path / "vendored"
    writable = write(folder / "a.py", BAD)
    locked = write(folder / "b.py", BAD, 0o444)
    outside = write(tmp_path / "c.py", BAD)
    folder.chmod(0o555)
    unlock(folder)
    run = bertlint_cli("--fix", ".", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [f"bertlint: error: {Path('vendored', 'b.py')}: read-only: not fixed"]
    assert (writable.read_text(encoding="utf-8"), locked.read_text(encoding="utf-8"), outside.read_text(encoding="utf-8")) == (FIXED, BAD, FIXED)
    assert sorted(p.name for p in folder.iterdir()) == ["a.py", "b.py"]


def test_add_noqa_on_a_read_only_file(tmp_path):
    locked = write(tmp_path / "a.py", BAD, 0o444)
    other = write(tmp_path / "b.py", BAD)
    run = bertlint_cli("--add-noqa", ".", cwd=tmp_path)
    assert run.returncode == 2 and "bertlint: error: a.py: read-only: not fixed" in run.stderr
    assert "a.py:2:42: BL601" in run.stdout and "Added 1 noqa directive." in run.stdout
    assert (locked.read_text(encoding="utf-8"), other.read_text(encoding="utf-8")) == (BAD, NOQA)


def test_symbolic_link_is_written_through_and_kept(tmp_path):
    target = write(tmp_path / "src" / "train.py", BAD)
    link = tmp_path / "train.py"
    link.symlink_to(Path("src", "train.py"))
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert link.is_symlink() and os.readlink(link) == str(Path("src", "train.py"))
    assert target.read_text(encoding="utf-8") == FIXED


def test_symbolic_link_to_a_read_only_file_is_reported_not_replaced(tmp_path, unlock):
    """The link's folder is writable, its target is not: nothing may replace the link by a fixed copy."""
    target = write(tmp_path / "shared" / "train.py", BAD, 0o444)
    (tmp_path / "shared").chmod(0o555)
    unlock(tmp_path / "shared")
    link = tmp_path / "train.py"
    link.symlink_to(target)
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path)
    assert run.returncode == 2 and "bertlint: error: train.py: read-only: not fixed" in run.stderr
    assert link.is_symlink() and target.read_text(encoding="utf-8") == BAD


def test_hard_links_mode_and_owner_are_kept(tmp_path):
    script = write(tmp_path / "train.py", BAD, 0o640)
    twin = tmp_path / "twin.py"
    os.link(script, twin)
    if os.geteuid() == 0:  # root fixing another user's file (a shared checkout): the owner stays
        os.chown(script, 65534, 65534)
    before = script.stat()
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path, privileged=True)
    assert run.returncode == 0, run.stdout + run.stderr
    after = script.stat()
    assert twin.read_text(encoding="utf-8") == FIXED and after.st_nlink == 2
    assert (after.st_ino, after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (before.st_ino, before.st_uid, before.st_gid, 0o640)


def test_file_saved_by_an_editor_while_linted_is_not_overwritten(tmp_path):
    script = write(tmp_path / "train.py", BAD)
    edit = "text = open(path, encoding='utf-8').read()\nopen(path, 'w', encoding='utf-8').write(\"# the user's edit\\n\" + text)"
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path, before_write=edit)
    assert run.returncode == 2
    assert "bertlint: error: train.py: changed since it was read: not fixed" in run.stderr
    assert script.read_text(encoding="utf-8") == "# the user's edit\n" + BAD
    assert "Found 1 error (1 fixable with `--fix`)." in run.stdout


def test_file_deleted_while_linted_stays_deleted(tmp_path):
    script = write(tmp_path / "train.py", BAD)
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path, before_write="import os\nos.unlink(path)")
    assert run.returncode == 2
    assert "bertlint: error: train.py: deleted since it was read: not fixed" in run.stderr
    assert not script.exists() and list(tmp_path.iterdir()) == []


def test_file_replaced_by_the_same_bytes_is_fixed(tmp_path):
    """An editor that saves by renaming a new file over the old one, without changing a byte: nothing
    to lose, so the fix goes in (the content is compared, not the inode)."""
    script = write(tmp_path / "train.py", BAD)
    resave = "import os\nopen(str(path) + '.new', 'w').write(open(path).read())\nos.replace(str(path) + '.new', path)"
    run = bertlint_cli("--fix", "train.py", cwd=tmp_path, before_write=resave)
    assert run.returncode == 0, run.stderr
    assert script.read_text(encoding="utf-8") == FIXED


def test_output_file_creates_its_folders(tmp_path):
    write(tmp_path / "train.py", BAD)
    run = bertlint_cli("--format", "sarif", "-o", Path("reports", "ci", "x.sarif"), "train.py", cwd=tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (1, "", "")
    assert '"ruleId": "BL601"' in (tmp_path / "reports" / "ci" / "x.sarif").read_text(encoding="utf-8")


@pytest.mark.parametrize("where", ["locked/x.json", "file.py/x.json", "locked/sub/x.json"])
def test_output_file_that_cannot_be_written_is_a_clear_error(tmp_path, unlock, where):
    write(tmp_path / "file.py", BAD)
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o555)
    unlock(tmp_path / "locked")
    run = bertlint_cli("--format", "json", "-o", where, "file.py", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    reason = "file.py is a file, not a folder" if where.startswith("file.py") else "Permission denied"
    assert run.stderr == f"bertlint: error: cannot write the report to {Path(where)}: {reason}\n"


def test_broken_links_and_loops_in_a_walked_tree_are_warnings(tmp_path):
    """They lead to no file: every real file is linted, so the exit code is the findings' (0 here)."""
    write(tmp_path / "pkg" / "clean.py", "x = 1\n")
    (tmp_path / "pkg" / "gone.py").symlink_to("nowhere.py")
    (tmp_path / "pkg" / "self.py").symlink_to("self.py")
    (tmp_path / "pkg" / "up").symlink_to("..")
    run = bertlint_cli(".", cwd=tmp_path)
    assert (run.returncode, run.stdout.splitlines()[0]) == (0, "All checks passed!")
    assert run.stderr.splitlines() == [
        f"bertlint: warning: {Path('pkg', 'gone.py')}: broken symbolic link; skipped",
        f"bertlint: warning: {Path('pkg', 'self.py')}: symbolic link loop; skipped",
        f"bertlint: warning: {Path('pkg', 'up')}: symbolic link loop (points to an ancestor directory); not followed",
    ]
    named = bertlint_cli(Path("pkg", "gone.py"), cwd=tmp_path)
    assert named.returncode == 2 and "bertlint: error: pkg/gone.py: No such file or directory" in named.stderr


def test_unreadable_folder_and_file_are_errors_the_rest_is_linted(tmp_path, unlock):
    write(tmp_path / "ok.py", BAD)
    write(tmp_path / "locked" / "b.py", BAD)
    (tmp_path / "locked").chmod(0)
    unlock(tmp_path / "locked")
    write(tmp_path / "secret.py", BAD, 0)
    run = bertlint_cli(".", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.splitlines() == ["bertlint: error: locked: Permission denied", "bertlint: error: secret.py: Permission denied"]
    assert "ok.py:2:42: BL601" in run.stdout and "Found 1 error" in run.stdout
