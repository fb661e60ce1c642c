"""A notebook cell read as IPython reads it, without importing IPython.

`mask` turns a cell into the Python that IPython's input transformers would hand to the compiler,
with every piece of IPython syntax replaced by a placeholder of the same length, so positions never
shift: `!cmd` and `%magic` at the start of a logical line, `x = !cmd` / `x = %magic`, `obj?` help,
the `,f a` / `;f a` / `/f a` autocall escapes, `%%magic` cells, and the automagic one-line cell
(`pip install -q transformers`) that IPython's prefilter runs as `%pip`. `explain` says what a cell
that does not parse holds instead of Python (shell commands, a magic without `%` in a cell of
several lines, text), and `install_requirements` reads the requirements of an install command.

Every rule here is IPython's, read from its source (IPython 9.18, `IPython/core/inputtransformer2.py`
for the static transformers, `prefilter.py` and `splitinput.py` for automagic) and checked against a
real IPython by tests/test_ipython.py and, over every cell of the precision corpora's notebooks, by
benchmarks/ipython_cells.py.
"""

from __future__ import annotations

import ast
import builtins
import keyword
import re
import shlex
import warnings
from dataclasses import dataclass
from typing import Collection, Mapping

from bertlint.patterns import Lazy

# Line magics and aliases that automagic runs without `%`: `InteractiveShell().magics_manager.magics["line"]`
# of IPython 9.18 (its aliases `ls`, `cat`, `mkdir`... included), plus ipykernel 7.4's KernelMagics
# (`ipykernel/zmqshell.py`: clear, less, more, man, connect_info, qtconsole, autosave, subshell).
LINE_MAGICS = frozenset("""
alias alias_magic autoawait autocall automagic bookmark cat cd code_wrap colors conda config cp debug
dhist dirs doctest_mode ed edit env gui hist history killbgscripts ldir lf lk ll load load_ext loadpy
logoff logon logstart logstate logstop ls lsmagic lx macro magic mamba matplotlib micromamba mkdir mv
notebook page pastebin pdb pdef pdoc pfile pinfo pinfo2 pip popd pprint precision prun psearch psource
pushd pwd pycat pylab quickref recall rehashx reload_ext rep rerun reset reset_selective rm rmdir run
save sc set_env sx system tb time timeit unalias unload_ext uv who who_ls whos xdel xmode
clear less more man connect_info qtconsole autosave subshell
store
""".split())  # `store`: storemagic, which IPython's kernel and terminal apps load by default (shellapp.default_extensions)

# The line magics an extension of IPython's own adds when `%load_ext` loads it (IPython 9.18, checked by a test).
EXTENSION_MAGICS = {"autoreload": frozenset({"autoreload", "aimport"}), "storemagic": frozenset({"store"})}

# Cell magics whose body is Python run in the kernel (`%%time`); any other cell magic (`%%bash`) makes
# the cell opaque. As line magics, the same names take a statement as argument, which `%time`, `%timeit` and
# `%prun` hand to `transform_cell` as a cell of its own (`%time model.fit(x)`, `%time !python train.py`).
PYTHON_MAGICS = frozenset({"time", "timeit", "prun", "capture"})

# Commands pasted from a terminal into a code cell: the first word of a line that is no Python.
SHELL_COMMANDS = frozenset("""
pip pip3 python python3 conda mamba micromamba uv poetry apt apt-get sudo curl wget git git-lfs gcloud gsutil
aws az kaggle huggingface-cli hf accelerate torchrun deepspeed nvidia-smi nvcc unzip tar gzip gunzip zip
cp mv rm mkdir ls cd cat echo export source chmod bash sh make cmake npm yarn docker ssh scp head tail grep
find touch jupyter tensorboard brew yum dnf nohup kill ps which df du free nproc wandb ln rsync
""".split())

_COMMANDS = SHELL_COMMANDS | LINE_MAGICS
_BUILTINS = frozenset(dir(builtins))
LINES = Lazy(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")  # lines as libcst counts them
_CELL_MAGIC = Lazy(r"%%(\w+)")
_WRITES_FILE = Lazy(r"\s*%%writefile[ \t]+(?!-)(\S+)[ \t]*(?:\r\n|\r|\n|$)")
_WRITES_SCRIPT = Lazy(r"\s*%%writefile[ \t]+(?!-)\S+\.py[ \t]*(?:\r\n|\r|\n|$)")  # a whole script, not `-a` a part
_PYTHON_MAGIC = Lazy(r"%(\w+)[ \t]+(?=[^\s-])")  # `%time ` followed by a statement, not an option
_COMPOUND = Lazy(r"(?:async[ \t]+)?(?:for|while|if|with|try|def|class)\b")  # `0; for ...` would not parse
# splitinput.line_split: leading space, an escape, the "function part", the rest.
_SPLIT = Lazy(r"(\s*)([,;/%]|!!?|\?\??)?\s*(%{0,2}[\w.*]*)(.*)", re.DOTALL)
# inputtransformer2._help_end_re: what `obj?` / `obj.attr??` / `%magic?` / `obj[0]?` may ask about.
_HELP_END = Lazy(r"(%{0,2}(?!\d)[\w*]+(\.(?!\d)[\w*]+|\[-?[0-9]+\])*)(\?\??)$")
_CLASSIC_INITIAL = Lazy(r">>>(?: |$)", re.MULTILINE)
_CLASSIC_SECOND = Lazy(r"(?:>>>|\.\.\.)(?: |$)", re.MULTILINE)
_CLASSIC_PROMPT = Lazy(r"[ \t]*(?:>>>|\.\.\.)[ \t]?")
_DOCTEST = Lazy(r"\s*>>>")
_IPYTHON_PROMPT = Lazy(r"(?:(?:\[nav\]|\[ins\])? )?In \[\d+\]: |\s*\.{3,}: ?")
_CODE = Lazy(r"'''|\"\"\"|['\"#\[\](){}]")
_CLOSING = {q: Lazy(r"\\.|" + re.escape(q), re.DOTALL) for q in ("'''", '"""', "'", '"')}
_ASSIGN = Lazy(r"'''|\"\"\"|['\"#\[\](){}]|[=!<>+\-*/%&|^:@]?=|->")  # `=` and the operators that contain one
_SHELL_LINE = Lazy(r"[ \t]*(?:\$[ \t]+)?(?P<command>[A-Za-z][\w.+-]*|\.{0,2}/[\w./-]+\.sh)(?:[ \t]+(?![=+\-*/%&|^<>!]?=[^=])\S.*)?")
_KEYWORDS = "|".join(keyword.kwlist + ["print", "exec"])
_PROSE = Lazy(rf"[ \t]*(?!(?:{_KEYWORDS})\b)[A-Za-z][a-z'’-]*[ \t]+[A-Za-z][\w'’-]*(?:[ \t]+[^\s=\[\]{{}}\"#]+)+[ \t]*")
_CELL_MARKER = re.compile(r"#[ \t]*%%|# In\[[\d ]*\]:")  # `# %%`, `#%% [markdown]`, `# In[3]:`
_CELL_SCRIPT = re.compile(rf"^(?:{_CELL_MARKER.pattern}|Automatically generated by Colab|# It is defined by the kaggle/python Docker image)",
                          re.MULTILINE)
_BLANK = Lazy(r"[^\r\n]")
# a line that starts with a shell or magic escape, or assigns its output (IPython's SystemAssign and MagicAssign: `files = !ls`)
_ESCAPE_START = re.compile(r"^[ \t]*(?:[\w.]+[ \t]*(?:,[ \t]*[\w.]+[ \t]*)*=[ \t]*)?[!%]", re.MULTILINE)
# What any of IPython's static input transformers acts on (`untransformed`): an escape at the start of a line, an escape
# after `=` (MagicAssign, SystemAssign), a `?` (HelpEnd).
_TRANSFORMED = Lazy(r"^[ \t]*[!%?,;/]|=[ \t]*[!%]|\?", re.MULTILINE)
_TIMED = Lazy(r"[ \t]*%%(?:time|timeit|prun)(?:[ \t]+-[^\r\n]*)?[ \t]*(?:\r\n|\r|\n|$)")  # see `untransformed`
_ESCAPE = Lazy(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.DOTALL)  # one escape of a string literal
_PIP = Lazy(r"pip[\d.]*")
_PYTHON = Lazy(r"python[\d.]*|\{sys\.executable\}|\$\{?\w+\}?")  # IPython expands `{sys.executable}` in `!` lines
PIP_OPTIONS_WITH_VALUE = frozenset({
    "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint", "-r", "--requirement",
    "-e", "--editable", "-t", "--target", "--prefix", "--root", "--src", "--progress-bar", "--platform",
    "--python-version", "--implementation", "--abi", "--trusted-host", "--cache-dir", "--log", "--proxy",
    "--timeout", "--retries", "--upgrade-strategy", "--only-binary", "--no-binary", "--config-settings", "-C",
    "--python", "-p", "--channel", "-n", "--name",
})


def written_file(source: str) -> tuple[str, str] | None:
    """(name, content) of the file a `%%writefile NAME` cell writes whole (`-a` appends: None)."""
    match = _WRITES_FILE.match(source)
    return (match.group(1), source[match.end():]) if match else None


def writes_script(source: str) -> bool:
    """`%%writefile train.py`: the cell is a whole script of its own, written to disk (and run with
    `!python train.py`), not code of the notebook."""
    return _WRITES_SCRIPT.match(source) is not None


def cell_magic(source: str) -> str | None:
    """The name of the cell magic a cell starts with (IPython drops leading blank lines and the
    first line's indent before it looks for `%%`)."""
    lines = LINES.findall(source)
    return _cell_magic(lines, _first(lines))


def _first(lines: list[str]) -> int:
    """The first line that is not blank (IPython drops the ones before it), or len(lines)."""
    return next((n for n, line in enumerate(lines) if line.strip()), len(lines))


def _cell_magic(lines: list[str], first: int) -> str | None:
    match = _CELL_MAGIC.match(lines[first].lstrip(" \t")) if first < len(lines) else None
    return match.group(1) if match is not None else None


def automagic(source: str, bound: Collection[str] = (), magics: Collection[str] | None = LINE_MAGICS) -> str | None:
    """The magic a cell of one line runs without `%` (`pip install x`, `cd data`, `ls`), or None.

    IPython's `transform_cell` hands a cell that is one line after its static transformers to the
    prefilter, whose AutoMagicChecker runs a line magic or alias named by the line's first word unless
    the rest starts with `=` or `,` (AssignmentChecker: `ls = 1`) or a name of the user's namespace, a
    builtin or a keyword shadows it (`is_shadowed`): `bound` holds the names the cells before bind.
    `magics`: the line magics there are (more after `%load_ext`); None when an extension bertlint does
    not know was loaded: any name that is no builtin or keyword may be one of its magics."""
    lines = LINES.findall(source)
    return _automagic(lines, _first(lines), bound, magics)


def _automagic(lines: list[str], first: int, bound: Collection[str], magics: Collection[str] | None) -> str | None:
    if len(lines) - first != 1:
        return None
    _, escape, name, tail = _SPLIT.match(lines[first].rstrip("\r\n")).groups()
    known = name in magics if magics is not None else name.isidentifier() and not keyword.iskeyword(name) and name not in _BUILTINS
    if escape or not known or name in bound or tail.lstrip()[:1] in ("=", ","):
        return None
    return name


def untransformed(source: str, bound: Collection[str] = (), magics: Collection[str] | None = LINE_MAGICS,
                  autocall: bool = False) -> bool:
    """IPython certainly compiles the cell `source` (its `cleanup` done) as it stands, so a SyntaxError of Python's is
    one of IPython's too: no line starts with an escape (`!`, `%`, `?`, the autocall escapes `,` `;` `/`), no `=`
    precedes `!` or `%` (`x = !ls`), no `?` asks for help anywhere (the static transformers' every trigger, read
    without bertlint's own reading of strings and brackets); and a cell of one line, which the prefilter reads next,
    starts with no name it may run otherwise: a line magic (any, where `magics` is None), a name an earlier cell binds
    (`bound`: a `Macro` or an `IPyAutocall` object), `exit`/`quit` (IPyAutocall objects of every kernel), or any name
    where `autocall` (an earlier cell may have turned IPython's autocall on). A `%%time`, `%%timeit` or `%%prun` cell
    (no statement after the magic's name, options only) is its body: the magic compiles it through `transform_cell`,
    and its SyntaxError is the cell's (checked with a kernel: Run All stops there; not `%%capture`'s, which
    `run_cell` shows and Run All goes on)."""
    lines = LINES.findall(source)
    first = _first(lines)
    if first < len(lines) and _TIMED.match(lines[first]):  # the body, read as a cell of its own
        source = "".join(lines[first + 1:])
        lines = LINES.findall(source)
        first = _first(lines)
    if _TRANSFORMED.search(source):
        return False
    if len(lines) - first != 1:
        return True
    name = _SPLIT.match(lines[first].rstrip("\r\n")).group(3).split(".")[0]
    if not name.isidentifier():
        return True
    return not (autocall or magics is None or name in magics or name in bound or name in ("exit", "quit"))


def loaded_magics(source: str, bound: Collection[str] = ()) -> frozenset[str] | None:
    """The line magics the cell's `%load_ext` commands add (`EXTENSION_MAGICS`); None when one of them
    loads an extension bertlint does not know, whose magics may then be any name."""
    found: set[str] = set()
    for command in commands(source, bound):
        words = command.split()
        for extension in words[1:] if words[:1] == ["load_ext"] else ():
            if extension not in EXTENSION_MAGICS:
                return None
            found |= EXTENSION_MAGICS[extension]
    return frozenset(found)


def cleanup(source: str) -> tuple[str, dict[int, int]]:
    """IPython's cleanup transformers, the ones that move text: `leading_indent` (a cell whose first line
    is indented loses that indent from every line that starts with it: IPython 7-8's rule, which Colab
    runs; IPython 9 removes the indent common to all lines, which parses in fewer cells), then the
    `>>> `/`... ` prompts of a pasted doctest (`classic_prompt`: IPython 7-8 when line 1 or 2 has one,
    IPython 9 when any line outside a string has `>>>`) and the `In [1]: `/`...: ` prompts of a pasted
    IPython session (`ipython_prompt`, when line 1 or 2 has one). A cell that either version runs
    parses here. -> (the text, {1-based line: columns removed from its start})."""
    lines = LINES.findall(source)
    first = _first(lines)
    removed: dict[int, int] = {}
    if first == len(lines):
        return source, removed
    prefix = lines[first][: len(lines[first]) - len(lines[first].lstrip(" \t"))]
    for number, line in enumerate(lines if prefix else ()):
        if line.startswith(prefix):
            lines[number], removed[number + 1] = line[len(prefix):], len(prefix)
    if _cell_magic(lines, first) in PYTHON_MAGICS:  # `%%time` runs its body through transform_cell: cleaned on its own
        body, shifts = cleanup("".join(lines[first + 1:]))
        for number, width in shifts.items():
            removed[first + 1 + number] = removed.get(first + 1 + number, 0) + width
        return "".join(lines[:first + 1]) + body, removed
    second = lines[first + 1] if first + 1 < len(lines) else ""
    classic = _CLASSIC_INITIAL.match(lines[first]) or _CLASSIC_SECOND.match(second)
    inside = _inside_strings(lines) if classic or ">>>" in source else []  # their `>>>` is text
    for prompt, strip in (
        (classic or any(_DOCTEST.match(line) and not within for line, within in zip(lines, inside)), _CLASSIC_PROMPT),
        (_IPYTHON_PROMPT.match(lines[first]) or _IPYTHON_PROMPT.match(second), _IPYTHON_PROMPT),
    ):
        for number, line in enumerate(lines if prompt else ()):
            match = strip.match(line)
            if match is not None and not (inside and inside[number]):
                lines[number] = line[match.end():]
                removed[number + 1] = removed.get(number + 1, 0) + match.end()
    return "".join(lines), removed


def _inside_strings(lines: list[str]) -> list[bool]:
    """Which lines begin inside a (triple-quoted) string."""
    quote, depth, inside = None, 0, []
    for line in lines:
        inside.append(quote is not None)
        quote, depth, _, _ = _scan(line, quote, depth)
    return inside


def mask(source: str, bound: Collection[str] = (), magics: Collection[str] | None = LINE_MAGICS) -> str | None:
    """`source` as Python, every IPython escape replaced by a same-length placeholder; None when a
    cell magic runs another language (`%%bash`, `%%html`): such a cell is not Python at all.
    `bound`, `magics`: the names earlier cells bind and the line magics there are (see `automagic`)."""
    lines = LINES.findall(source)
    first = _first(lines)
    name = _cell_magic(lines, first)
    if name is not None:
        if name not in PYTHON_MAGICS and not writes_script(source):
            return None
        lines[first] = _placeholder(lines[first], len(lines[first]) - len(lines[first].lstrip(" \t")))
    elif _automagic(lines, first, bound, magics):
        lines[first] = _placeholder(lines[first], len(lines[first]) - len(lines[first].lstrip(" \t")))
        return "".join(lines)
    quote, depth, continued, escaped = None, 0, False, False
    for number, line in enumerate(lines):
        if escaped:  # a backslash continues an escape (`!pip install \`) onto this line: all of it is the escape's
            escaped = _continues(line)
            lines[number] = _placeholder(line, 0, "")
            continue
        if quote is None and depth == 0 and not continued:
            logical = _assembled(lines, number) if _continues(line) else line.rstrip("\r\n")
            lines[number] = masked = _mask_line(line, logical, bound, magics)
            escaped = _continues(line) and not _continues(masked)  # the escape's backslash went with it
            line = masked
        quote, depth, continued, _ = _scan(line, quote, depth)
    return "".join(lines)


def mask_script(source: str) -> str | None:
    """A `.py` file that shows in itself that it is a notebook run cell by cell in IPython (a `# %%` / `#%%` cell
    marker of VS Code, Spyder or jupytext, a `# In[ ]:` marker or the header of a Colab or Kaggle export) with
    each cell's IPython syntax masked as `mask` does (same length: lines and columns keep their place; a cell
    in another language blanked). A file without markers whose only lines Python cannot compile are IPython escapes
    is a notebook exported as it stood (`escaped_export`). None for a file without such evidence."""
    if not _CELL_SCRIPT.search(source):
        return escaped_export(source)
    out, cell = [], []
    for line in LINES.findall(source) + [""]:
        if line and not _CELL_MARKER.match(line):
            cell.append(line)
            continue
        masked = mask("".join(cell))
        out += [masked if masked is not None else _BLANK.sub(" ", "".join(cell)), line]
        cell = []
    return "".join(out)


def escaped_export(source: str) -> str | None:
    """A `.py` export of a notebook without cell markers (`!pip install ...`, `%matplotlib inline` at the start of its
    lines, as a notebook's text pasted or downloaded whole): the file masked as one cell, where the only lines the mask
    changes start with `!` or `%` or assign a command's output (`files = !ls`, `out = %pwd`), with the lines their
    backslashes continue, and the masked text compiles; None
    otherwise. A plain script holds no such line: Python refuses it, so these lines are the evidence of IPython."""
    if not _ESCAPE_START.search(source):
        return None
    masked = mask(source)
    if masked is None or masked == source:
        return None
    continued = False
    for line, other in zip(LINES.findall(source), LINES.findall(masked)):
        if line != other and not continued and not _ESCAPE_START.match(line):
            return None  # `obj?`, an autocall or an automagic line: not the plain escapes this recognition rests on
        continued = line != other and _continues(line)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(masked, "<export>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
    return masked


# The cell magics an export's `get_ipython().run_cell_magic(NAME, LINE, BODY)` runs BODY of as the cell's own code: in
# the user namespace, once, its exception the cell's (Run All stops there). IPython 9.18 `core/magics/execution.py`:
# `time` and `prun` transform_cell the body and exec it in `user_ns` (checked with a kernel: a raise in the body stops
# Run All, its names persist). Not `timeit` (its names do not persist, the body runs many times) nor `capture`
# (`shell.run_cell(cell)` shows the body's exception and Run All goes on).
EXPORTED_BODIES = frozenset({"time", "prun"})


@dataclass(frozen=True, repr=False)
class Expansion:
    """A notebook's export with each top-level `get_ipython().run_cell_magic("time", "", BODY)` line replaced by BODY's
    lines (masked), and the way back: `spans` holds per expanded call (its line in the export, the source column of
    each character of each line of BODY)."""
    text: str
    spans: tuple[tuple[int, tuple[tuple[int, ...], ...]], ...]

    def place(self, line: int, column: int) -> tuple[int, int, bool]:
        """(line, column) of the export's text for (line, column) of `text`, and whether it lies in a BODY."""
        shift = 0
        for start, columns in self.spans:
            if line < start + shift:
                break
            if line < start + shift + len(columns):
                row = columns[line - start - shift]
                return start, (row[column - 1] if 0 < column <= len(row) else row[-1] + 1) + 1, True
            shift += len(columns) - 1
        return line - shift, column, False


def expand_cell_magics(source: str) -> Expansion | None:
    """`source` (Python that libcst parses) with the body of each top-level one-line `get_ipython().run_cell_magic(NAME, LINE,
    BODY)` of `EXPORTED_BODIES` (Jupyter's export of a `%%time` cell) in its place as code, masked; None where there is
    none. A body that is no plain one-line string literal, or whose masked text does not compile, is left as it is."""
    if "run_cell_magic" not in source:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return None  # what libcst parses and CPython does not (a non-printable character): nothing to expand
    lines = LINES.findall(source)
    spans, out, previous = [], [], 0
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "run_cell_magic"
                and isinstance(call.func.value, ast.Call) and isinstance(call.func.value.func, ast.Name)
                and call.func.value.func.id == "get_ipython" and len(call.args) == 3 and not call.keywords
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)
                and call.args[0].value in EXPORTED_BODIES and stmt.col_offset == 0 and stmt.lineno == stmt.end_lineno):
            continue
        line = lines[stmt.lineno - 1]
        encoded = line.encode()
        start = len(encoded[:call.args[2].col_offset].decode())
        end = len(encoded[:call.args[2].end_col_offset].decode())
        columns = _literal_columns(line[start:end], call.args[2].value)
        body = mask(call.args[2].value) if columns is not None else None
        if body is None or not _parses(body):
            continue
        rows, at = [], 0
        for text in LINES.findall(body) or [""]:
            rows.append(tuple(start + c for c in columns[at:at + len(text)]) or (start,))
            at += len(text)
        spans.append((stmt.lineno, tuple(rows)))
        out += lines[previous:stmt.lineno - 1]
        out.append(body if body.endswith(("\n", "\r")) else body + "\n")
        previous = stmt.lineno
    if not spans:
        return None
    return Expansion("".join(out + lines[previous:]), tuple(spans))


def _literal_columns(literal: str, value: str) -> tuple[int, ...] | None:
    """The column in `literal` (a plain string literal: no prefix but `u`, one line) of each character of its `value`,
    None where it is anything else."""
    if literal[:1] in "uU":
        literal, offset = literal[1:], 1
    else:
        offset = 0
    quote = literal[:1]
    if quote not in ("'", '"') or literal[:3] == quote * 3 or len(literal) < 2 or literal[-1] != quote:
        return None
    columns: list[int] = []
    chars: list[str] = []
    pos = 1
    while pos < len(literal) - 1:
        match = _ESCAPE.match(literal, pos) if literal[pos] == "\\" else None
        text = literal[pos:match.end()] if match is not None else literal[pos]
        try:
            decoded = ast.literal_eval(quote + text + quote) if match is not None else text
        except (SyntaxError, ValueError):
            return None
        chars.append(decoded)
        columns += [offset + pos] * len(decoded)
        pos += len(text)
    return tuple(columns) if "".join(chars) == value else None


def _mask_line(line: str, logical: str, bound: Collection[str], magics: Collection[str] | None) -> str:
    """The first physical line of a logical line with its IPython syntax made Python: `%time stmt`
    keeps `stmt` as IPython's `%time` reads it, a cell of its own (`%time !cmd` runs a shell command;
    a one-line `for`/`with`/... cannot follow `0;`, so it is masked whole), the rest becomes `0`.
    `logical`: the whole logical line as IPython assembles backslash continuations."""
    body = line.rstrip("\r\n")
    indent = len(line) - len(line.lstrip(" \t"))
    if logical.endswith("?") and _help_end(logical, indent):
        return _placeholder(line, indent)  # HelpEnd (priority 5) first: `%time obj?` asks about `obj`
    python = _PYTHON_MAGIC.match(line, indent)
    if python is not None and python.group(1) in PYTHON_MAGICS:
        # `%time`, `%timeit`, `%prun` hand their statement to `transform_cell` (IPython/core/magics/execution.py)
        statement = mask(line[python.end():], bound, magics)
        whole = mask(logical[python.end():], bound, magics)  # all the magic gets: its backslash-continued lines
        if statement is None or whole is None or (_COMPOUND.match(statement) and _parses(statement.rstrip("\r\n"))):
            return _placeholder(line, indent)  # a cell magic (`%time %%bash`), or a statement `0;` cannot precede
        quote, depth, _, _ = _scan(whole, None, 0)
        if quote is not None or depth:  # `%time f("""a` + `b""")`: the magic gets a statement that does not compile
            return line  # left as it is, no Python either
        width = python.end() - indent
        return line[:indent] + "0;" + " " * (width - 2) + statement
    if body[indent:indent + 1] in ("!", "%", "?") or (body[indent:indent + 1] in (",", ";", "/") and _autocall(logical[indent:])):
        return _placeholder(line, indent)  # EscapedCommand
    assigned = _assigned_escape(body) if "!" in body or "%" in body else None
    if assigned is not None:  # MagicAssign / SystemAssign
        return _placeholder(line, assigned)
    return line


def _help_end(logical: str, indent: int) -> bool:
    """IPython's HelpEnd, which reads tokens: the logical line's last token is `?` (not a `?` that ends
    a line of a string, such as a prompt's question in a triple-quoted string opened with a backslash,
    nor one in a comment), and what it asks about is a name."""
    quote, _, _, end = _scan(logical, None, 0)
    return quote is None and end == len(logical) and _HELP_END.search(logical, indent) is not None


def _assembled(lines: list[str], number: int) -> str:
    """IPython's `assemble_continued_line`: the line at `number` and the ones its backslashes continue
    it onto, joined with spaces, backslashes and line breaks dropped."""
    end = number
    while end + 1 < len(lines) and _continues(lines[end]):
        end += 1
    parts = lines[number:end + 1]
    return " ".join([part.rstrip()[:-1] for part in parts[:-1]] + [parts[-1].rstrip("\r\n")])  # a trailing space stays: it fails `obj? `


def _autocall(line: str) -> bool:
    """Whether IPython's `,f a b` -> `f("a", "b")`, `;f a b` -> `f("a b")`, `/f a b` -> `f(a, b)` is Python."""
    name, _, args = line[1:].partition(" ")
    if line[0] == "/":
        if not name:
            return False  # `_tr_paren` raises: the line is left as it is
        call = "{}({})".format(name, ", ".join(args.split()))
    else:
        call = '{}("{}")'.format(name, '", "'.join(args.split()) if line[0] == "," else args)
    return _parses(call, "eval")


def _parses(code: str, mode: str = "exec") -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(code, "<cell>", mode, ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _assigned_escape(body: str) -> int | None:
    """Where `!cmd` / `%magic` starts after the line's first `=` outside brackets (`x = !ls`), as
    `_find_assign_op` finds it; None when the line has none."""
    depth, pos = 0, 0
    while True:
        match = _ASSIGN.search(body, pos)
        if match is None or match.group() == "#":
            return None
        token = match.group()
        if token in _CLOSING:  # a string: skip to its end
            pos = match.end()
            while (close := _CLOSING[token].search(body, pos)) is not None and close.group() != token:
                pos = close.end()
            if close is None:
                return None
            pos = close.end()
            continue
        pos = match.end()
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(depth - 1, 0)
        elif token == "=" and depth == 0:
            start = len(body) - len(body[pos:].lstrip(" \t"))
            if body[start:start + 1] == "!" or re.match(r"%[ \t]*[^\W\d]", body[start:]):
                return start
            return None


def _placeholder(line: str, start: int, mark: str = "0") -> str:
    """`line` with everything from `start` to its end replaced by `mark` and spaces."""
    body = line.rstrip("\r\n")
    return line[:start] + mark + " " * (len(body) - start - len(mark)) + line[len(body):]


def _continues(line: str) -> bool:
    """Whether `line` ends with a backslash continuation."""
    return line.rstrip("\r\n").endswith("\\")


def _scan(line: str, quote: str | None, depth: int) -> tuple[str | None, int, bool, int]:
    """Carry (open string quote, bracket depth, backslash continuation) past one line, so that
    escapes are recognised only where IPython sees them: at the start of a logical line; and where
    the line's code ends (its comment, or its end)."""
    pos = 0
    body = line.rstrip("\r\n")
    while True:
        if quote is not None:
            match = _CLOSING[quote].search(line, pos)
            if match is None:
                break
            if match.group() == quote:
                quote = None
            pos = match.end()
            continue
        match = _CODE.search(body, pos)
        if match is None or match.group() == "#":
            end = len(body) if match is None else match.start()
            return None, depth, match is None and body.endswith("\\"), end
        token = match.group()
        if token in _CLOSING:
            quote = token
        else:
            depth = depth + 1 if token in "([{" else max(depth - 1, 0)
        pos = match.end()
    if len(quote) == 1 and not body.endswith("\\"):
        quote = None  # an unterminated one-line string ends with its line (a syntax error anyway)
    return quote, depth, False, len(body)


# --- What a cell that is no Python holds ------------------------------------------------------


def explain(source: str, line: int, bound: Collection[str] = ()) -> str | None:
    """What the cell holds instead of Python, judged from its lines and the one (1-based) where
    the syntax error is, and what to do; None when it looks like Python gone wrong."""
    lines = [text.rstrip("\r\n") for text in LINES.findall(source)]
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    command = text.strip().rstrip("\\").rstrip()
    words = [w for w in lines if w.strip() and not w.lstrip().startswith("#")]
    magic = _SPLIT.match(text).group(3)
    if magic in LINE_MAGICS and _shell_line(text):
        if magic in bound and len(lines) == 1:
            return (f"`{magic}` is a name this notebook binds in an earlier cell, so IPython runs this line as Python, "
                    f"not as the `%{magic}` magic: write `%{command}`")
        others = "this cell has other lines" if sum(1 for w in lines if w.strip()) > 1 else "a blank line after it counts as one"
        return (f"`{command}` runs as the `%{magic}` magic without `%` only as a cell's one line (IPython's automagic), "
                f"and {others}: write `%{command}`")
    if _shell_line(text):
        if all(_shell_line(w) for w in words):
            return "this cell holds shell commands, not Python: prefix each with `!`, or make the first line `%%bash`"
        return f"`{command}` is a shell command, not Python: prefix it with `!` to run it from the notebook"
    if _PROSE.fullmatch(text):
        if all(_PROSE.fullmatch(w) for w in words):
            return "this cell holds text, not Python: make it a markdown cell"
        return "this line is text, not Python: turn it into a `#` comment, or move it to a markdown cell"
    return None


def _shell_line(line: str) -> bool:
    """A terminal command (`pip3 install x`, `$ curl -O url`, `./run.sh`) that does not parse as Python."""
    match = _SHELL_LINE.fullmatch(line)
    if match is None or (match.group("command") not in _COMMANDS and not match.group("command").endswith(".sh")):
        return False
    return not _parses(line.strip())


# --- Install commands ------------------------------------------------------------------------


def commands(source: str, bound: Collection[str] = ()) -> list[str]:
    """The shell and magic command lines a cell runs: `!cmd` and `x = !cmd` lines, `%pip ...` style
    line magics (named without `%`), automagic one-line cells, and the bodies of `%%bash`-like cells;
    backslash continuations joined."""
    name = cell_magic(source)
    lines = LINES.findall(source)
    if name is not None and name not in PYTHON_MAGICS:
        body = "".join(lines[next(n for n, line in enumerate(lines) if line.strip()) + 1:])
        return [body] if name in ("bash", "sh", "script", "shell", "system", "sx", "!") else []
    if automagic(source, bound):
        return [source.strip()]
    found: list[str] = []
    following = 0  # the lines a backslash continues an escape onto: the escape's own
    for number, (original, python) in enumerate(zip(lines, LINES.findall(mask(source, bound) or ""))):
        start = next((n for n, (a, b) in enumerate(zip(original, python)) if a != b), None)
        if number < following or start is None or original[start] not in "!%":
            continue
        following = number + 1
        while following < len(lines) and _continues(lines[following - 1]):
            following += 1
        found.append("".join(lines[number:following])[start + 1:].lstrip("!"))
    return found


def install_requirements(command: str, files: Mapping[str, str] | None = None) -> list[str]:
    """The requirement specifiers a `pip install` (any spelling: `pip3`, `python -m pip`, `uv pip`,
    `%pip`, a pasted `sudo pip`) or `conda install` command names: `transformers[torch]==4.30.0`;
    conda's `transformers=4.30` as the `==4.30.*` it means. Options and their values are skipped, and
    so is an unquoted `>`/`<`: the shell (which `!` and `%pip` both run) takes it for a redirection,
    so `!pip install transformers>=4.30` installs the newest release into a file named `=4.30`.
    `-r NAME` reads the lines of `files[NAME]` (what a `%%writefile NAME` cell wrote) when it is there."""
    found: list[str] = []
    for line in command.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:  # an unclosed quote: the shell would not run it either
            continue
        words: list[str] = []
        for token in [*tokens, ";"]:
            if token and set(token) <= set("&|;()"):  # the end of one command
                found += _requirements(words, files or {})
                words = []
            else:
                words.append(token)
    return found


def _requirements(words: list[str], files: Mapping[str, str]) -> list[str]:
    """The requirements of one shell command's words, when it is an install command."""
    words = words[1:] if words[:1] == ["sudo"] else words
    program = words[0].rpartition("/")[2] if words else ""
    conda = program in ("conda", "mamba", "micromamba")
    if _PIP.fullmatch(program) or conda:
        rest = words[1:]
    elif program == "uv":
        rest = words[2:] if words[1:2] == ["pip"] else []
    else:
        rest = words[3:] if _PYTHON.fullmatch(program) and words[1:3] == ["-m", "pip"] else []
    while rest[:1] and rest[0].startswith("-"):  # general options first: `pip -q install`
        rest = rest[2:] if rest[0] in PIP_OPTIONS_WITH_VALUE else rest[1:]
    if rest[:1] != ["install"]:
        return []
    found: list[str] = []
    skip = False
    previous = ""
    for word in rest[1:]:
        option, _, value = word.partition("=") if word.startswith("--requirement=") else (previous, "", word)
        previous = word
        if option in ("-r", "--requirement") and value in files:  # a file a `%%writefile` cell wrote
            found += [line.split(" #", 1)[0].strip() for line in files[value].splitlines()]
            skip = False
        elif skip or word in ("<", ">", ">>"):  # an option's value, or a redirection's target
            skip = word in ("<", ">", ">>")
        elif word.startswith("-"):
            skip = word in PIP_OPTIONS_WITH_VALUE
        elif conda and re.fullmatch(r"[\w.:-]+=[\d.*]+", word):  # conda's fuzzy `name=4.30`
            name, _, version = word.rpartition("::")[2].partition("=")
            found.append(f"{name}=={version.rstrip('.*')}.*")
        else:
            found.append(word)
    return found
