"""Which release of transformers (and of the libraries around it: datasets, huggingface_hub, trl, peft,
accelerate; and of those whose removed APIs stop a run, data/removed.json: scikit-learn, torchtext,
pytorch-lightning, lightning, pandas, keras, tensorflow) a file targets: a stage of its own, run once per file before the cache and the lint, which
both receive its answer. Every step below is the same for each library, by package name.

In this order (the README has the table):
1. `transformers-version` in the configuration (or `--transformers-version`); for the other libraries,
   `library-versions = { datasets = "2.19", trl = "0.9" }`;
2. a notebook's own install cells (`!pip install transformers==4.30.0`, `%pip`, the automagic one-line
   `pip install ...`, `%%bash` bodies: what `ipython.commands` finds), or the script's own pin (its
   PEP 723 `# /// script` block, else the install lines a notebook export kept: `# !pip install ...`
   as Colab comments them out, `get_ipython().system('pip install ...')` as nbconvert writes them, the
   `packages_to_install` of its Kubeflow Pipelines components, whose code runs in containers that install them);
3. for a script, what a notebook or shell script in its folder that runs it installs (`!python NAME.py`,
   `!accelerate launch NAME.py`, `%run NAME.py`, `torchrun ... NAME.py` in a .sh), or a notebook there that writes it
   (`%%writefile NAME.py`): the script runs with those;
4. the project's pin, from the file's folder up to the project root: requirements*.txt, the lock files (poetry.lock,
   uv.lock, Pipfile.lock: the release each resolved, an exact pin), pyproject.toml, setup.cfg, environment.yml, Pipfile;
   (for a library other than transformers that none of these pins, as a resolver installing the pinned releases
   would take it, `resolve.py`: the newest release within the ceilings they require of it (transformers' wheel's
   Requires-Dist in data/requires.json, the others' in data/admits.json) whose own requirements admit every pinned
   release of transformers and of the libraries around it, its wheels' Requires-Dist in data/admits.json: a project
   pinned to transformers 4.39 gets a trl 0.x, not trl 1.x, and pinned to accelerate 0.28 too, a trl older than 0.12;
   for keras, what the pinned tensorflow requires of it, data/removed.json `required_by`;)
5. the transformers installed where the project runs: its own virtual environment (`.venv`, `venv` or
   `env` at the project root), else the environment bertlint runs in, else an activated virtual
   environment on PATH (package metadata: never an import). The last is what a pre-commit hook, whose
   own environment has no transformers, shares with the terminal it was started from;
6. else the newest release bertlint knows, said as such (with how to pin).

An install from a source (`git+URL@REF`, a clone's folder, `name @ URL`) pins the release its ref names (`@v4.38.2`);
the upstream main branch (github.com/huggingface/LIBRARY, no ref) pins the latest known; any other ref (a fork's
branch, a commit) pins an unknown release (`versions.Unknown`), which silences the rules that
compare it.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertlint import knowledge, resolve
from bertlint.config import LIBRARIES as AROUND
from bertlint.patterns import Lazy
from bertlint.versions import Unknown, Version, latest, parse_version, resolve_specifier, unknown

if TYPE_CHECKING:
    from bertlint.config import Settings

LIBRARIES = ("transformers", *AROUND)
# Libraries whose removed APIs stop a run (data/removed.json): resolved like those around transformers (a pin, else the
# installed one, else the newest), for that stop alone.
OTHERS = knowledge.removal_libraries()
Pin = tuple[Version, str]  # (the release, where that came from: said in drift messages)


class Target(tuple):
    """The transformers (release, where it came from) pair, which `ctx.version` and the summary read, and
    in `libraries` the same pair for each other library. Compared and counted by its transformers pair;
    its `repr`, which keys the cache, holds them all."""

    libraries: dict[str, Pin]

    def __new__(cls, version: Version, source: str, libraries: dict[str, Pin] | None = None) -> "Target":
        self = super().__new__(cls, (version, source))
        self.libraries = dict(libraries or {})
        return self

    def __getnewargs__(self) -> tuple:
        return (*self, self.libraries)

    def __repr__(self) -> str:
        return f"Target({tuple(self)!r}, {sorted(self.libraries.items())!r})"

    def of(self, library: str) -> Pin:
        """The (release, source) of `library`; transformers' own pair for "transformers"."""
        return (self[0], self[1]) if library == "transformers" else self.libraries[library]


_REQUIREMENT = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)")
# PEP 723's reference expression for an inline metadata block.
_INLINE_BLOCK = Lazy(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")


def target_version(settings: "Settings", path: Path, text: str | None = None) -> Target:
    """(version, where it came from) of transformers for the file at `path`, with every other library's in
    `.libraries`; `text`, its source, may pin them inline. A run of many files uses one `Targets`."""
    return Targets(settings)(path, text)


class Targets:
    """The targets of the files of one run (one set of settings). What depends on a file's folder alone
    (the pins in the requirement files from it up to the project root, the packages installed where the
    project runs) is looked up once per folder and library, so a warm run over many files costs little
    more than reading them; what a file's own text pins is read from each text. A run owns one and drops
    it: a long-lived process (the language server) makes one per lint and so sees pins and installs change."""

    def __init__(self, settings: "Settings") -> None:
        self.settings = settings
        self.root = settings.project_root.resolve()
        self._inside = str(self.root).rstrip(os.sep) + os.sep  # what a folder below the root starts with
        self._folders: dict[Path, Path] = {}  # a file's folder as named -> resolved
        self._files: dict[Path, tuple[tuple[str, list[str]], ...]] = {}  # resolved folder -> the requirement files from it up to the root
        self._installed: dict[str, Pin | None] = {}  # library -> where the project runs
        self._environments: list[Environment] | None = None  # where the project may run, found on the first library asked
        self._launched: dict[Path, dict[str, tuple[tuple[list[str], str], ...]]] = {}  # resolved folder -> its launchers' installs by script
        self._targets: dict[tuple[Path, str | None], Target] = {}  # (file, the text read for its own pins) -> its target

    def __call__(self, path: Path, text: str | None = None) -> Target:
        """The file's target; asked again for the same file and text (the cache's key, then the lint), the same answer."""
        key = (path, text)
        if key not in self._targets:
            self._targets[key] = self._target(path, text)
        return self._targets[key]

    def _target(self, path: Path, text: str | None) -> Target:
        here = self._folder(path)
        pins = {library: self._pinned(library, path, text, here) for library in (*LIBRARIES, *OTHERS)}
        pinned = {library: pin for library, pin in pins.items() if pin is not None and library in LIBRARIES}
        libraries = {library: pins[library] or (self._required(pinned, library) if library in AROUND else None)
                     or self._brought(library, path, text, here) or self._fallback(library) for library in (*AROUND, *OTHERS)}
        return Target(*(pins["transformers"] or self._fallback("transformers")), libraries)

    def _folder(self, path: Path) -> Path:
        """`path.resolve().parent`, resolving each folder once (a linked file resolves on its own)."""
        if os.path.islink(path):
            return path.resolve().parent
        folder = self._folders.get(path.parent)
        if folder is None:
            folder = self._folders[path.parent] = path.parent.resolve()
        return folder

    def _pinned(self, library: str, path: Path, text: str | None, here: Path) -> Pin | None:
        """What the configuration, the file itself, a notebook or shell script beside it that launches it, or the
        requirement files pin of `library`; None when nothing does."""
        if library == "transformers" and self.settings.transformers_version:
            return parse_version(self.settings.transformers_version), self.settings.transformers_version_from
        configured = dict(self.settings.library_versions).get(library)
        if configured:
            return parse_version(configured), self.settings.library_versions_from
        if path.suffix == ".ipynb":
            pinned = _notebook_pin(text, library) if text and "install" in text else None
        else:
            pinned = _inline_pin(text, library) if text and "# /// script" in text else None
            pinned = pinned or (_export_pin(text, library) if text and "install" in text else None)
            pinned = pinned or (_component_pin(text, library) if text and "packages_to_install" in text and "kfp" in text else None)
        for lines, where in self._launchers(here).get(path.name, ()) if pinned is None and path.suffix == ".py" else ():
            pinned = _first_pin(lines, where, library)
            if pinned is not None:
                break
        for where, lines in self._requirement_files(here) if pinned is None else ():
            pinned = _first_pin(lines, where, library)
            if pinned is not None:
                break
        return pinned

    def _required(self, pins: dict[str, Pin], library: str) -> Pin | None:
        """For a library the project does not pin: what a resolver installing the project's pinned releases (`pins`)
        takes of it (`resolve.unpinned`: trl 1.x requires a transformers far newer than 4.39); the installed one where it
        fits them. None where nothing pinned bounds it."""
        installed = self._fallback(library)
        return resolve.unpinned(library, pins, installed if installed[1] != LATEST else None)

    def _brought(self, library: str, path: Path, text: str | None, here: Path) -> Pin | None:
        """For a library the project does not pin that a library it pins brings (data/removed.json `required_by`: keras,
        which tensorflow 2.6 and later requires): what the pinned release requires of it, as a resolver would take it
        (no ceiling, tensorflow >= 2.16: None, the installed one or the newest); unknown where the pinned release is older than any that requires it (tensorflow < 2.6
        holds its own Keras) or unknown itself, or where the project's requirement files name a variant package of it
        (`tensorflow-gpu`, whose releases bertlint does not list). None when neither is pinned."""
        row = knowledge.brought_by(library)
        pin = self._pinned(row["library"], path, text, here) if row is not None else None
        if pin is None:
            named = row is not None and any(_canonical(m.group(1)) in {_canonical(v) for v in row["variants"]}
                                            for _where, lines in self._requirement_files(here) for line in lines
                                            if (m := re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", line)))
            return (unknown(library), f"a variant of {row['library']} the project requires") if named else None
        release, table = pin[0], row["specifiers"]
        key, newest = f"{release[0]}.{release[1]}", max(table, key=parse_version)
        if isinstance(release, Unknown) or key not in table and release < parse_version(newest):
            return unknown(library), f"{row['library']} {key} ({pin[1]}), whose {library} is not known"
        spec = table.get(key, table[newest])
        installed = self._fallback(library)
        return resolve.within(library, spec, installed if installed[1] != LATEST else None,
                              f"{library}{spec}, which {row['library']} {release[0]}.{release[1]} requires ({pin[1]})")

    def _fallback(self, library: str) -> Pin:
        """The `library` installed where the project runs, else the newest release known."""
        if library not in self._installed:
            if self._environments is None:
                self._environments = _environments(self.root)
            self._installed[library] = _installed_for(self._environments, library)
        return self._installed[library] or (latest(library), LATEST)

    def _launchers(self, folder: Path) -> dict[str, tuple[tuple[list[str], str], ...]]:
        """script name -> the installs of the notebooks and shell scripts of `folder` that launch it (`!python NAME`,
        `!accelerate launch NAME`, `%run NAME`, `torchrun ... NAME` in a .sh): the script runs with what they install.
        Each folder's launchers are read once a run."""
        found = self._launched.get(folder)
        if found is None:
            found = self._launched[folder] = _launchers_in(folder)
        return found

    def _requirement_files(self, folder: Path) -> tuple[tuple[str, list[str]], ...]:
        """(name, requirement lines) of the project's requirement files from `folder` up to the project root,
        nearest first (a folder outside the project: its own only); each folder's are read once a run."""
        found = self._files.get(folder)
        if found is None:
            above = folder != self.root and folder.parent != folder and str(folder).startswith(self._inside)
            found = self._files[folder] = _requirement_files_in(folder) + (self._requirement_files(folder.parent) if above else ())
        return found


LATEST = "the latest release known to bertlint"
HOW_TO_PIN = "pin it with `transformers-version` in [tool.bertlint] or transformers==X.Y in requirements.txt"


# An environment the project may run in: the folders its packages are installed in, and the words a message puts before
# and after a library's name to say it is installed there (strings: a run's `Targets` goes to its worker processes).
Environment = tuple[tuple[str, ...], str, str]


def _environments(root: Path) -> list[Environment]:
    """Where the project at `root` may run, searched in this order: its own environment (`.venv`, `venv`, `env`), the
    one bertlint runs in, an active environment on PATH. Found once a run (`Targets`), for every library."""
    found: list[Environment] = []
    for name in (".venv", "venv", "env"):
        if (root / name / "pyvenv.cfg").is_file():
            found.append((tuple(_site_packages(root / name)), "the ", f" installed in the project's environment {name}/"))
    found.append((tuple(sys.path), "the installed ", " package"))
    own = Path(sys.prefix).resolve()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        env = Path(folder).parent
        if folder and (env / "pyvenv.cfg").is_file() and env.resolve() != own:
            found.append((tuple(_site_packages(env)), "the ", f" installed in the active environment {env}"))
    return found


def _installed_for(environments: list[Environment], library: str) -> Pin | None:
    """The `library` installed in the first of `environments` that has it, and which environment that is."""
    for paths, before, after in environments:
        found = _installed_in(paths, library)
        if found is not None:
            return found, f"{before}{library}{after}"
    return None


def _site_packages(env: Path) -> list[str]:
    return [str(p) for p in (*env.glob("lib/python3*/site-packages"), env / "Lib" / "site-packages")]


def _inline_pin(text: str, library: str) -> Pin | None:
    """A pin of `library` in the `dependencies` of the script's PEP 723 `# /// script` block."""
    return _first_pin(_inline_requirements(text), "the script's `# /// script` block", library)


@functools.lru_cache(maxsize=16)
def _inline_requirements(text: str) -> list[str]:
    """The `dependencies` of the script's PEP 723 `# /// script` block (read once for every library)."""
    for block in _INLINE_BLOCK.finditer(text):
        if block.group("type") != "script":
            continue
        toml = "".join(line[2:] if line.startswith("# ") else line[1:]
                       for line in block.group("content").splitlines(keepends=True))
        dependencies = _toml(toml).get("dependencies", [])
        return [item for item in dependencies if isinstance(item, str)] if isinstance(dependencies, list) else []
    return []


def _export_pin(text: str, library: str) -> Pin | None:
    """The first pin of `library` that a script exported from a notebook keeps of the notebook's install cells: Colab's
    "Download .py" comments a shell line out (`# !pip install transformers==3.1.0`, `#%pip install ...`) or keeps it
    (`!pip install transformers==3`: a cell script IPython runs, linted with its shell lines masked), and
    `jupyter nbconvert --to script` writes it as a call (`get_ipython().system('pip install ...')`,
    `get_ipython().run_line_magic('pip', 'install ...')`). The script was written for what those installed."""
    for lines, where in _export_installs(text):
        pinned = _first_pin(lines, where, library)
        if pinned is not None:
            return pinned
    return None


_EXPORTED_INSTALL = Lazy(
    r"""^[ \t]*(?:(?:\#[ \t]*)?[!%][ \t]*(?P<line>[^\n]*\binstall\b[^\n]*)"""
    r"""|get_ipython\(\)\.(?:system\((?P<q1>['"])(?P<system>[^'"\n]*\binstall\b[^'"\n]*)(?P=q1)\)"""
    r"""|run_line_magic\((?P<q2>['"])(?P<magic>pip|conda)(?P=q2),\s*(?P<q3>['"])(?P<args>[^'"\n]*\binstall\b[^'"\n]*)(?P=q3)\)))""",
    re.MULTILINE,
)


@functools.lru_cache(maxsize=16)
def _export_installs(text: str) -> tuple[tuple[list[str], str], ...]:
    """(requirements, where) of each install line a notebook export kept, in order (read once for every library)."""
    from bertlint.ipython import install_requirements  # only for a script whose text says `install`

    out = []
    for match in _EXPORTED_INSTALL.finditer(text):
        command = match.group("line") or match.group("system") or f"{match.group('magic')} {match.group('args')}"
        number = text.count("\n", 0, match.start()) + 1
        out.append((install_requirements(command), f"line {number} (`{match.group(0).strip()[:60]}`), an install the notebook this script was exported from ran"))
    return tuple(out)


# A Kubeflow Pipelines component's installs: `@component(packages_to_install=[...])`, `@dsl.component(...)`,
# `create_component_from_func(f, packages_to_install=[...])` (kfp 1.x and 2.x): a list of string literals (comments allowed).
_COMPONENT_INSTALLS = Lazy(r"""\bpackages_to_install\s*=\s*\[(?P<items>(?:'[^'\n]*'|"[^"\n]*"|\#[^\n]*|[\s,])*)\]""")
_QUOTED = Lazy(r"'(?P<single>[^'\n]*)'|\"(?P<double>[^\"\n]*)\"")


def _component_pin(text: str, library: str) -> Pin | None:
    """The pin of `library` in the `packages_to_install` of the file's Kubeflow Pipelines components: a component's
    function runs in a container that installs them, and in a pipeline file the code that uses transformers is the
    components'. Components that pin different releases leave the release unknown."""
    pins = []
    for match in _COMPONENT_INSTALLS.finditer(text):
        items = [m.group("single") if m.group("single") is not None else m.group("double") for m in _QUOTED.finditer(match.group("items"))]
        number = text.count("\n", 0, match.start()) + 1
        pinned = _first_pin(items, f"line {number} (`packages_to_install` of a Kubeflow Pipelines component, whose code runs with them)", library)
        if pinned is not None:
            pins.append(pinned)
    if len({tuple(release) for release, _ in pins}) > 1:
        return unknown(library), f"the Kubeflow Pipelines components of the file, which pin different releases of {library}"
    return pins[0] if pins else None


def _notebook_pin(text: str, library: str) -> Pin | None:
    """The first pin of `library` that an install command of a notebook's code cells sets, named by its
    cell (1-based among all cells, as findings count them). Automagic is taken as on for a one-line
    `pip install` cell: that no earlier cell binds the name `pip` is the lint's to check (its BL901)."""
    for lines, where in _notebook_installs(text):
        pinned = _first_pin(lines, where, library)
        if pinned is not None:
            return pinned
    return None


@functools.lru_cache(maxsize=16)
def _notebook_installs(text: str) -> tuple[tuple[list[str], str], ...]:
    """(requirements, where) of each install command of a notebook's code cells, in order (read once for every library)."""
    from bertlint.ipython import install_requirements  # only for a notebook that installs something

    out = []
    shell = _Shell()
    for number, command, files in _notebook_commands(text, _INSTALL_WORDS):
        sourced = shell.source_installs(command)  # it also follows `git clone` and `cd` (`%cd`) for a later `pip install .`
        if "install" in command:
            out.append((install_requirements(command, files) + sourced, f"cell {number} (`{' '.join(command.split())[:60]}`)"))
    return tuple(out)


_INSTALL_WORDS = ("install", "clone", "cd")  # what a cell that installs, or moves to where it installs from, says
_LAUNCH_WORDS = (*_INSTALL_WORDS, ".py")  # and one that launches a script


@functools.lru_cache(maxsize=16)
def _notebook_commands(text: str, words: tuple[str, ...]) -> tuple[tuple[int, str, dict[str, str]], ...]:
    """(cell number, command, the files `%%writefile` cells wrote before it) of each shell or magic command of the
    notebook's code cells that say one of `words` (and each command their Python runs as one string literal:
    `os.system('pip install ...')`), in order; cells are numbered from 1 among all cells, as findings count them."""
    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError):
        return ()
    from bertlint.ipython import commands, written_file

    out = []
    files: dict[str, str] = {}  # what the `%%writefile NAME` cells so far wrote, for a later `pip install -r NAME`
    for number, cell in enumerate(cells if isinstance(cells, list) else (), 1):
        source = cell.get("source") if isinstance(cell, dict) and cell.get("cell_type") == "code" else None
        source = "".join(source) if isinstance(source, list) and all(isinstance(s, str) for s in source) else source
        if not isinstance(source, str):
            continue
        written = written_file(source) if "%%writefile" in source else None
        if written is not None:
            files = {**files, written[0]: written[1]}
            continue
        if any(word in source for word in words):
            out += [(number, command, files) for command in commands(source)]
            out += [(number, match.group("command"), files) for match in _SYSTEM_CALL.finditer(source)]
    return tuple(out)


# A shell command a cell's Python runs as one string literal: `os.system('pip install ...')`, `subprocess.run("...", shell=True)`.
_SYSTEM_CALL = Lazy(r"""\b(?:os\.system|subprocess\.(?:run|call|check_call|check_output|Popen))\(\s*(?P<q>['"])(?P<command>[^'"\n]*)(?P=q)""")


class _Shell:
    """What a notebook's or shell script's commands install from source, read in order: `git clone [-b REF] URL [DIR]`,
    `cd DIR` (`%cd DIR`), then `pip install DIR`, `pip install -e .`, `pip install git+URL@REF`. Each such install
    becomes a PEP 508 direct reference (`transformers @ git+URL@REF`), which `_first_pin` reads."""

    def __init__(self) -> None:
        self.cwd = ""
        self.clones: dict[str, str] = {}  # the folder a clone made -> `git+URL@REF`

    def source_installs(self, command: str) -> list[str]:
        out = []
        for words in _shell_commands(command):
            words = words[1:] if words[:1] == ["sudo"] else words
            if words[:1] == ["cd"]:
                self.cwd = os.path.normpath(os.path.join(self.cwd, words[1])) if len(words) > 1 else ""
            elif words[:2] == ["git", "clone"]:
                self._clone(words[2:])
            elif words[1:2] == ["setup.py"] and {"install", "develop"} & set(words):  # `python setup.py install` in a clone
                out.append(self._reference("."))
            elif "install" in words:
                rest = words[words.index("install") + 1:]
                out += [self._reference(word) for word in _source_words(rest)] + self._from_local_wheels(rest)
        return out

    def _from_local_wheels(self, words: list[str]) -> list[str]:
        """`pip install --no-index --find-links=DIR NAME` (Kaggle's offline installs from a wheels dataset): each bare NAME
        is whatever release the folder's wheel holds, a `NAME @ file:DIR` reference; a NAME with a version spec keeps it."""
        if "--no-index" not in words:
            return []
        folders = [value for option, value in zip(words, [*words[1:], ""]) if option in ("-f", "--find-links")]
        folders += [word.partition("=")[2] for word in words if word.startswith("--find-links=")]
        local = [folder for folder in folders if folder and "://" not in folder]
        if not local:
            return []
        from bertlint.ipython import PIP_OPTIONS_WITH_VALUE

        names, skip = [], False
        for word in words:
            if skip or word.startswith("-"):
                skip = word in PIP_OPTIONS_WITH_VALUE
                continue
            if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?", word):
                names.append(word.partition("[")[0])
        folder = os.path.normpath(os.path.join(self.cwd, local[0]))
        return [f"{name} @ file:{folder}" for name in names]

    def _clone(self, args: list[str]) -> None:
        ref, positional = "", []
        for option, value in zip(args, [*args[1:], ""]):
            if option in ("-b", "--branch") or option.startswith("--branch="):
                ref = option.partition("=")[2] or value
        skip = False
        for word in args:
            if skip or word.startswith("-"):
                skip = word in ("-b", "--branch", "--depth", "-o", "--origin", "-c", "--config", "--reference", "-j", "--jobs")
                continue
            positional.append(word)
        if positional:
            url = positional[0]
            folder = positional[1] if len(positional) > 1 else url.rstrip("/").rpartition("/")[2].removesuffix(".git")
            self.clones[os.path.normpath(os.path.join(self.cwd, folder))] = f"git+{url}" + (f"@{ref}" if ref else "")

    def _reference(self, word: str) -> str:
        """`name @ url` for one source install: a folder (a clone's URL and branch where a clone made it), or an
        editable URL, which `install_requirements` skips as an option's value."""
        if "://" in word or word.startswith(("git+", "hg+", "svn+", "bzr+")):
            return word
        folder = os.path.normpath(os.path.join(self.cwd, word))
        url = self.clones.get(folder, f"file:{folder}")
        return f"{_named_by(url)} @ {url}"


def _shell_commands(command: str) -> list[list[str]]:
    """The words of each simple command of a shell command text (lines, `&&`, `;`, `|` split it)."""
    import shlex

    out = []
    for line in command.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        words: list[str] = []
        for token in [*tokens, ";"]:
            if token and set(token) <= set("&|;()"):
                out.append(words) if words else None
                words = []
            else:
                words.append(token)
    return out


def _source_words(words: list[str]) -> list[str]:
    """The arguments of `pip install` that name a folder rather than a release (`.`, `./transformers`, `-e transformers`),
    and editable URLs (`-e git+URL`); other URLs are requirements `install_requirements` already lists."""
    from bertlint.ipython import PIP_OPTIONS_WITH_VALUE

    out, editable, value = [], False, False
    for word in words:
        url = "://" in word or word.startswith(("git+", "hg+", "svn+", "bzr+"))
        local = not url and not word.startswith("-") and ("/" in word or word in (".", "..")) and not word.endswith((".txt", ".whl", ".tar.gz", ".zip"))
        if editable or local and not value:  # not an option's value (`-f ../wheels`, `-t ./lib`)
            out.append(word)
        editable = word in ("-e", "--editable")
        value = word in PIP_OPTIONS_WITH_VALUE and not editable
    return out


_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "huggingface.co")  # URLs whose path starts OWNER/REPO


def _named_by(url: str) -> str:
    """The project a source install names: `#egg=NAME`, else its repository (`github.com/OWNER/REPO/...`, `.git` and the
    `@REF` dropped), else the last part of its path (a folder)."""
    egg = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", url)
    if egg:
        return egg.group(1)
    path = url.split("#")[0].removeprefix("file:")
    if "://" in path:
        host, _, rest = path.partition("://")[2].partition("/")
        parts = [part for part in rest.partition("@")[0].split("/") if part]  # the ref after `@` dropped
        if host.rpartition("@")[2] in _HOSTS and len(parts) >= 2:
            return parts[1].removesuffix(".git")
        path = "/".join(parts)
    return path.rstrip("/").rpartition("/")[2].removesuffix(".git") or "."


def _ref_of(url: str) -> str:
    """The ref a source URL installs: `...repo.git@REF`, or a repository archive's (`.../archive/refs/tags/REF.zip`)."""
    path = url.split("#")[0]
    archive = re.search(r"/archive/(?:refs/(?:tags|heads)/)?(?P<ref>[^/]+?)(?:\.zip|\.tar\.gz|\.tgz)$", path)
    if archive:
        return archive.group("ref")
    if "://" not in path:
        return ""
    rest = path.partition("://")[2].partition("/")[2]  # after the host (and its `git@`)
    return rest.partition("@")[2]  # `OWNER/REPO.git@REF`, a ref may hold slashes (`refs/pull/1/head`)


_DIRECT = Lazy(r"^\s*(?:(?:-e|--editable)\s+)?(?:(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*@\s*)?(?P<url>(?:git|hg|svn|bzr)\+\S+|file:\S+|https?://\S+)")
_UPSTREAM = Lazy(r"github\.com[/:]huggingface/", re.IGNORECASE)  # the libraries' own repositories
_RELEASE_REF = Lazy(r"^v?(?P<version>\d+\.\d+(?:\.\d+)?)$")


def _direct_pin(line: str, where: str, library: str) -> Pin | None:
    """A `library` installed from a source (`name @ git+URL@REF`, `git+URL#egg=name`, a folder): the release its ref
    names (`@v4.38.2`); the upstream repository's main branch (`github.com/huggingface/transformers`, no ref or `@main`),
    which is at least its latest release, as the latest release known; else an unknown release (a fork's branch, a
    commit: frozen wherever it was)."""
    match = _DIRECT.match(line)
    if match is None or _canonical(match.group("name") or _named_by(match.group("url"))) != _canonical(library):
        return None
    url = match.group("url").split("#")[0]
    ref = _ref_of(url)
    release = _RELEASE_REF.match(ref)
    if release:
        return parse_version(release.group("version")), f"the install of {library} from {url} (a release tag) in {where}"
    if ref in ("", "main") and _UPSTREAM.search(url) and _canonical(_named_by(url)) == _canonical(library):
        return latest(library), f"the main branch of {library}, installed from {url} in {where}: at least the latest release known to bertlint"
    if url.startswith("file:"):
        return unknown(library), f"{library} installed from the local folder {url.removeprefix('file:')} in {where}: whatever release it holds is unknown"
    return unknown(library), f"{library} installed from {url} in {where}: a branch or commit, not a release, so its release is unknown"


def _first_pin(lines: list[str], where: str, library: str) -> Pin | None:
    """The first `<library><spec>` requirement among `lines` that sets a ceiling, or installs `library` from a source,
    and what to call it."""
    wanted = _canonical(library)
    for line in lines:
        direct = _direct_pin(line, where, library) if "+" in line or ":" in line else None
        if direct is not None:
            return direct
        requirement = _REQUIREMENT.match(line)
        if requirement is None or _canonical(requirement.group("name")) != wanted:
            continue
        version = resolve_specifier(requirement.group("spec"), library)
        if version is not None:
            spec = re.sub(r"\s+", "", requirement.group("spec"))
            return version, f"the pin {requirement.group('name')}{spec} in {where}"
    return None


_LAUNCH = Lazy(r"python[\d.]*|\{sys\.executable\}|accelerate|torchrun|deepspeed|run")


def _launchers_in(folder: Path) -> dict[str, tuple[tuple[list[str], str], ...]]:
    """script name -> (requirements, where) of the installs of each notebook or shell script in `folder` that runs it, or
    of each notebook there that writes it (`%%writefile NAME.py`)."""
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith((".ipynb", ".sh")))
    except OSError:
        return {}
    from bertlint.ipython import install_requirements

    out: dict[str, tuple[tuple[list[str], str], ...]] = {}
    for name in names:
        try:
            text = (folder / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        notebook = name.endswith(".ipynb")
        run = _launched([c for _, c, _ in _notebook_commands(text, _LAUNCH_WORDS)] if notebook else [text], folder.name) if ".py" in text else set()
        written = _written_scripts(text) - run if notebook and "%%writefile" in text else set()
        for scripts, how in ((run, "runs"), (written, "writes")):
            if not scripts:
                continue
            if notebook:
                installs = tuple((lines, f"{where} of {name}, which {how} it") for lines, where in _notebook_installs(text))
            else:
                installs = ((install_requirements(text) + _Shell().source_installs(text), f"{name}, which {how} it"),)
            for script in scripts:
                out[script] = out.get(script, ()) + installs
    return out


def _written_scripts(text: str) -> set[str]:
    """The scripts of the notebook's own folder that its `%%writefile NAME.py` cells write: code of the notebook, written
    to run in its kernel's environment (imported, or run with `!python NAME.py`)."""
    from bertlint.ipython import written_file

    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError):
        return set()
    out = set()
    for cell in cells if isinstance(cells, list) else ():
        source = cell.get("source") if isinstance(cell, dict) and cell.get("cell_type") == "code" else None
        source = "".join(source) if isinstance(source, list) and all(isinstance(s, str) for s in source) else source
        written = written_file(source) if isinstance(source, str) and "%%writefile" in source else None
        if written is not None and written[0].endswith(".py") and os.path.dirname(os.path.normpath(written[0])) == "":
            out.add(os.path.normpath(written[0]))
    return out


def _launched(commands: list[str], folder: str) -> set[str]:
    """The scripts of the launcher's own folder (named `folder`) that its commands run: `python NAME.py`, `accelerate
    launch NAME.py`, `torchrun --nproc_per_node 2 NAME.py`, `run NAME.py` (`%run`), each after `VAR=value` settings;
    none after a `cd` to another folder (`cd DIR && python NAME.py`); a `%cd` into a clone of the launcher's own
    folder (`!git clone .../repo` then `%cd repo`, the notebook being repo's) stays there."""
    out: set[str] = set()
    for command in commands:
        for words in _shell_commands(command):
            while words and re.fullmatch(r"\w+=\S*|nohup|sudo|time", words[0]):
                words = words[1:]
            if words[:1] == ["cd"] and os.path.basename(os.path.normpath(words[1] if len(words) > 1 else "~")) not in (folder, "."):
                return out
            if words and _LAUNCH.fullmatch(words[0].rpartition("/")[2]):
                script = next((w for w in words[1:] if w.endswith(".py") and not w.startswith("-")), None)
                if script is not None and os.path.dirname(os.path.normpath(script)) == "":
                    out.add(os.path.normpath(script))
    return out


def _canonical(name: str) -> str:
    """`huggingface-hub`, `Huggingface_Hub` -> `huggingface_hub` (PEP 503 names, spelt as the import)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _display(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith(os.pardir) else rel


@functools.lru_cache(maxsize=1024)
def _candidates(directory: Path, listing: int | None) -> tuple[Path, ...]:
    """The requirement files of a folder, requirements.txt first; keyed on the folder's mtime (`listing`)."""
    try:
        names = set(os.listdir(directory))
    except OSError:
        return ()
    found = sorted((name for name in names if name.startswith("requirements") and name.endswith(".txt") and len(name) >= 16),
                   key=lambda name: (name != "requirements.txt", name))  # requirements*.txt
    return tuple(directory / name for name in found) + tuple(directory / name for name in _OTHER_FILES if name in names and (directory / name).is_file())


# A folder's lock files come before the manifests they resolve: `poetry install` installs poetry.lock's release, not the
# newest that pyproject.toml's `^4.24.0` admits.
_LOCK_FILES = ("poetry.lock", "uv.lock", "Pipfile.lock")
_OTHER_FILES = (*_LOCK_FILES, "pyproject.toml", "setup.cfg", "environment.yml", "environment.yaml", "Pipfile")
_CONDA_ITEM = Lazy(r"^\s*-\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?P<spec>(?<![<>!~=])=(?!=)\s*[\d.*]+|[<>=!~].*)?\s*$", re.IGNORECASE)


def _requirement_files_in(folder: Path) -> tuple[tuple[str, list[str]], ...]:
    """(name, requirement lines) of the requirement files of `folder` itself."""
    try:
        listing = os.stat(folder).st_mtime_ns
    except OSError:
        listing = None
    found = []
    for candidate in _candidates(folder, listing):
        try:
            state = os.stat(candidate)
        except OSError:
            continue
        found.append((_display(candidate), _requirement_lines(candidate, state.st_mtime_ns, state.st_size)))
    return tuple(found)


# The byte-order marks pip's `auto_decode` recognises in a requirements file (pip/_internal/utils/encoding.py): a file
# saved as UTF-16 by Windows tools (`pip freeze > requirements.txt` in PowerShell) is read in its encoding.
_BOMS = (  # utf-32-le's mark begins with utf-16-le's: tried first
    (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _decoded(data: bytes) -> str:
    """A requirements file's text as pip reads it: in the encoding its byte-order mark names, else UTF-8."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data[len(bom):].decode(encoding, errors="replace")
    return data.decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=256)
def _requirement_lines(path: Path, mtime_ns: int, size: int) -> list[str]:
    """A file's requirements as `name<spec>` lines (requirements.txt's own form); keyed on the file's state,
    so a long-lived server sees edits."""
    try:
        text = _decoded(path.read_bytes())
    except OSError:
        return []
    if path.name == "pyproject.toml":
        return _pyproject_dependencies(text)
    if path.name == "Pipfile":
        return _pipfile_dependencies(text)
    if path.name in _LOCK_FILES:
        return _locked(text, path.name)
    if path.name.startswith("environment."):
        return [_conda_requirement(m) for m in map(_CONDA_ITEM.match, text.splitlines()) if m and m.group("spec")]
    return text.splitlines()  # requirements*.txt; setup.cfg's install_requires lines read the same


def _toml(text: str) -> dict[str, Any]:
    """A TOML document, or {} when it does not parse (a broken pin is no pin)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _conda_requirement(item: re.Match) -> str:
    """`- transformers=4.30` (conda: 4.30.*) or `- transformers==4.30.0` (its pip list) as a requirement."""
    spec = item.group("spec").replace(" ", "")
    if spec.startswith("=") and not spec.startswith("=="):
        spec = "==" + spec[1:] + (".*" if spec.count(".") < 2 and not spec.endswith("*") else "")
    return f"{item.group('name')}{spec}"


def _pipfile_dependencies(text: str) -> list[str]:
    """`transformers = "==4.30.0"` or `{version = "<4.31"}` in a Pipfile's packages; `"*"` pins nothing."""
    doc = _toml(text)
    return _table_requirements(doc.get("packages")) + _table_requirements(doc.get("dev-packages"))


def _locked(text: str, name: str) -> list[str]:
    """`name==version` for each package a lock file resolved: poetry.lock's and uv.lock's `[[package]]` tables
    (`name`, `version`), Pipfile.lock's JSON `default` / `develop` sections (`"version": "==4.30.2"`). A package
    the lock resolves to more than one release (uv's forks by environment markers) pins nothing; nor does one
    without a version (a git source, a workspace member), nor a lock that does not parse."""
    found: dict[str, set[str]] = {}
    if name == "Pipfile.lock":
        try:
            doc = json.loads(text)
        except ValueError:
            return []
        for section in (doc.get("default"), doc.get("develop")) if isinstance(doc, dict) else ():
            for package, entry in section.items() if isinstance(section, dict) else ():
                version = entry.get("version") if isinstance(entry, dict) else None
                if isinstance(version, str) and version.startswith("==") and version[2:].strip():
                    found.setdefault(_canonical(package), set()).add(version[2:].strip())
    else:
        packages = _toml(text).get("package")
        for entry in packages if isinstance(packages, list) else ():
            package, version = (entry.get("name"), entry.get("version")) if isinstance(entry, dict) else (None, None)
            if isinstance(package, str) and isinstance(version, str) and version:
                found.setdefault(_canonical(package), set()).add(version)
    return [f"{package}=={next(iter(versions))}" for package, versions in found.items() if len(versions) == 1]


def _table_requirements(table: Any) -> list[str]:
    """Requirements of a TOML table of `name = "spec"` or `name = {version = "spec", ...}` (Pipfile, Poetry), each
    spec in PEP 440 (`_pep440`); `"*"` and entries without a version (a path, a git source) pin nothing."""
    out = []
    for name, value in table.items() if isinstance(table, dict) else ():
        spec = value.get("version") if isinstance(value, dict) else value
        if isinstance(spec, str) and spec.strip() not in ("*", ""):
            out.append(f"{name}{_pep440(spec.strip())}")
    return out


_POETRY_RANGE = Lazy(r"^(?P<op>[\^~])\s*(?P<version>\d+(?:\.\d+)*)(?:\.\*)?$")


def _pep440(spec: str) -> str:
    """A Poetry constraint as PEP 440 (poetry-core's `parse_constraint`): `^4.24.0` -> `>=4.24.0,<5.0.0` (the first
    non-zero part is kept), `~4.24` -> `>=4.24,<4.25`, a bare `4.24.0` -> `==4.24.0`; a PEP 440 spec is kept as it is
    (`~=` included)."""
    if spec[0].isdigit():
        return "==" + spec
    match = _POETRY_RANGE.match(spec)
    if match is None:
        return spec
    parts = [int(part) for part in match.group("version").split(".")]
    if match.group("op") == "^":
        keep = next((i for i, part in enumerate(parts) if part), len(parts) - 1)
    else:
        keep = min(1, len(parts) - 1)
    ceiling = parts[:keep] + [parts[keep] + 1]
    return f">={match.group('version')},<{'.'.join(map(str, ceiling))}"


def _pyproject_dependencies(text: str) -> list[str]:
    """PEP 621's `[project]` dependencies and optional ones, PEP 735's `[dependency-groups]`, and Poetry's
    `[tool.poetry.dependencies]` / `dev-dependencies` / `group.<name>.dependencies` tables."""
    doc = _toml(text)
    project = doc.get("project", {})
    groups = [project.get("dependencies", [])]
    groups += list(project.get("optional-dependencies", {}).values()) + list(doc.get("dependency-groups", {}).values())
    listed = [item for group in groups if isinstance(group, list) for item in group if isinstance(item, str)]
    poetry = doc.get("tool", {}).get("poetry", {})
    if not isinstance(poetry, dict):
        return listed
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [group.get("dependencies") for group in poetry.get("group", {}).values() if isinstance(group, dict)] if isinstance(poetry.get("group"), dict) else []
    return listed + [item for table in tables for item in _table_requirements(table)]


def _installed_in(paths: tuple[str, ...], library: str) -> Version | None:
    """From the first `<library>-X.Y.Z.dist-info` folder on `paths`, as importlib.metadata finds it
    on sys.path, without the ~30 ms that importing importlib.metadata costs every run."""
    for entry in paths:
        try:
            listing = os.stat(entry or ".").st_mtime_ns
        except OSError:
            continue
        release = _distributions(entry, listing).get(_canonical(library))
        if release is not None:
            return parse_version(release)
    return None


@functools.lru_cache(maxsize=64)
def _distributions(folder: str, listing: int) -> dict[str, str]:
    """The releases of the packages a folder holds (`<name>-X.Y.Z.dist-info`) by canonical name, the first
    of each in the listing's order; keyed on the folder's mtime (`listing`), which an install changes."""
    out: dict[str, str] = {}
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return out
    for name in names:
        if name.endswith(".dist-info"):
            package, _, release = name.removesuffix(".dist-info").rpartition("-")
            out.setdefault(_canonical(package), release)
    return out
