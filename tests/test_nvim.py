"""The README's Neovim 0.7 configuration, run as printed in a real headless Neovim against `bertlint server`.

Neovim opens a script with a finding, the configuration starts the server and attaches the buffer,
and a few lines of Lua wait for the diagnostics (`vim.wait`) and write what `vim.diagnostic.get`
holds to a file. `.ci/run` installs Debian's `neovim` (0.7.2) where it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checkout import readme_block

NVIM = shutil.which("nvim")
pytestmark = pytest.mark.skipif(NVIM is None, reason="nvim is not installed (`.ci/run` installs Debian's neovim with apt-get)")

SCRIPT = '''\
from transformers import AutoTokenizer, TrainingArguments

tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "bb"], padding="max_length")
args = TrainingArguments("out", evaluation_strategy="epoch")
'''
# Waits up to 60 s for the first diagnostics of the buffer, writes them one a line, and quits.
HARNESS = '''\
vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(lines, string.format("%s %s %d:%d", d.source, d.code, d.lnum + 1, d.col + 1))
end
vim.fn.writefile(lines, os.getenv("BERTLINT_NVIM_OUT"))
vim.cmd("qa!")
'''


def test_readme_neovim_07_config_shows_bertlint_diagnostics(tmp_path: Path):
    config = tmp_path / "init.lua"
    config.write_text(readme_block("in Neovim 0.7", "lua"))
    (tmp_path / "harness.lua").write_text(HARNESS)
    project = tmp_path / "project"
    project.mkdir()
    (project / "bertlint.toml").write_text('transformers-version = "5.0"\npreview = true\n')  # BL106 is a preview rule
    (project / "train.py").write_text(SCRIPT)
    out = tmp_path / "diagnostics.txt"
    bindir = str(Path(sys.executable).parent)  # where `bertlint` is installed beside this Python
    env = {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "BERTLINT_NVIM_OUT": str(out)}
    for xdg in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[xdg] = str(tmp_path / "xdg")  # no user config, and Neovim's logs stay in the temporary folder
    result = subprocess.run(
        [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(config), "train.py", "-c", f"luafile {tmp_path / 'harness.lua'}"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # BL601 on line 5; BL106 on line 4 is what the config's `init_options = { ignore = { "BL106" } }` removes.
    logs = "".join(log.read_text() for log in (tmp_path / "xdg").glob("**/lsp.log"))
    assert out.read_text().splitlines() == ["bertlint BL601 5:33"], logs
    terminal = subprocess.run([sys.executable, "-m", "bertlint", "--no-cache", "--format", "concise", "train.py"],
                              cwd=project, capture_output=True, text=True)
    assert "train.py:4:24: BL106" in terminal.stdout and "train.py:5:33: BL601" in terminal.stdout
