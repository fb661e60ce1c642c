"""`bertlint server`: a language server over stdio (pygls), for Python files and notebook documents.

Diagnostics on open and save, and after a short quiet spell while typing, linted in a worker
process so that the server answers hovers, code actions and shutdown while a long file is linted
(libcst's parser holds the GIL: a thread would not do); a change that arrives first makes a lint
still waiting never run and one running be dropped. Quick fixes and "ignore on this line" per diagnostic; a `source.fixAll.bertlint` action; the rule's page on hover. Settings
come from the nearest config file of each document, with the client's settings (initialization
options or `workspace/didChangeConfiguration`) on top, and are reloaded when a config file changes:
on the client's word (watched files, a save in the editor), or, for clients that watch no files,
when a few `os.stat` calls before a lint find the config changed on disk. A broken config is shown
to the user and the document is linted with the defaults.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import re
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from bertlint import __version__, engine, notebook, pages, runner
from bertlint.config import CONFIG_KEYS, ConfigError, Settings, load_settings
from bertlint.report import PAGE_URL, Finding, Notice, fix_to_dict
from bertlint.rules import all_codes, preview_codes
from bertlint.target import target_version

DEBOUNCE = 0.03  # seconds without a change before a changed document is linted (a lint in progress coalesces more)
CONFIG_FILES = ("pyproject.toml", "bertlint.toml")
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.bertlint"
_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
             "info": types.DiagnosticSeverity.Information}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# What a client may set, as `load_settings` takes it: every config key but the learning-rate table (config files only).
EDITOR_SETTINGS = {key.replace("-", "_"): re.sub(r"-(.)", lambda m: m[1].upper(), key) for key in CONFIG_KEYS if key != "learning-rate"}
_Stamp = tuple[tuple[str, "tuple[int, int, int] | None"], ...]  # (config file path, _signature), nearest first


class Server(LanguageServer):
    """The pygls server plus what bertlint remembers between messages."""

    def __init__(self) -> None:
        super().__init__(
            "bertlint", __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=types.NotebookDocumentSyncOptions(
                notebook_selector=[types.NotebookDocumentFilterWithCells(
                    cells=[types.NotebookCellLanguage(language="python")], notebook="*")],
                save=True,
            ),
        )
        self.client: dict[str, dict[str, Any]] = {"init": {}, "workspace": {}}  # the client's settings, by source
        self.settings: dict[Path, Settings] = {}  # by directory, until a config file changes
        self.stamps: dict[Path, _Stamp] = {}  # by directory: the config files its settings depend on, as stat saw them
        self.shown: set[str] = set()  # config errors already shown since the last reload
        self.not_linted: dict[str, str] = {}  # by document or notebook URI: why it was last not linted, as shown
        self.findings: dict[str, list[Finding]] = {}  # by document or cell URI, for hover
        self.cells: dict[str, list[str]] = {}  # notebook URI -> the cell URIs last published
        self.slots: dict[str, dict[int, engine.NoqaSlot]] = {}  # by document or cell URI: where "ignore" writes, by line
        self.pending: dict[str, asyncio.Task] = {}  # lints waiting or running, by document or notebook URI
        self.workers: ProcessPoolExecutor | None = None

    # --- settings ---------------------------------------------------------------------------

    def settings_for(self, path: Path) -> Settings:
        """The settings of `path`'s directory; a bad config (or client setting) is shown once and
        the defaults are used instead of failing the document."""
        directory = path.parent
        if directory not in self.settings:
            stamp = _stamp(directory)  # before reading: a change made while loading shows up next time
            errors = []
            for kwargs in ({}, {"isolated": True}):
                try:
                    self.settings[directory] = load_settings(directory, all_codes(), preview_codes=preview_codes(), overrides=self.overrides(), overrides_from="the editor settings", **kwargs)
                    break
                except ConfigError as exc:
                    errors.append(str(exc))
            else:
                self.settings[directory] = load_settings(directory, all_codes(), preview_codes=preview_codes(), isolated=True)
            self.stamps[directory] = _up_to(stamp, self.settings[directory].config_path)
            for message in errors:
                if message not in self.shown:
                    self.shown.add(message)
                    self.show_error(f"{message} (linting with the default settings)")
        return self.settings[directory]

    def config_changed(self, path: Path) -> bool:
        """Whether the config files that `path`'s cached settings depend on changed on disk since they
        were read: the config file itself (edited, replaced or deleted), or a `pyproject.toml` or
        `bertlint.toml` in a folder between the document's and the config's (all folders up to the
        root where none applied) that appeared, changed or went. Only `os.stat` calls, no parsing:
        for clients that tell us of no file changes (no dynamic file-watch registration)."""
        stamp = self.stamps.get(path.parent)
        return stamp is not None and any(_signature(file) != signature for file, signature in stamp)

    def configure(self, source: str, options: Any) -> None:
        """Client settings from `source` ("init" or "workspace"): `{"select": [...], "extendSelect": [...]}`,
        or the same nested under "bertlint". What is no editor setting is shown to the user, named as the
        client spelled it, and left out; the other settings apply."""
        options = options.get("bertlint", options) if isinstance(options, dict) else None
        if not isinstance(options, dict):
            if options is not None:  # null: no settings (Neovim may send one)
                self.show_error(f"the editor settings must be an object of settings, e.g. {{\"ignore\": [\"BL106\"]}}, not {options!r}; "
                                "linting with the config file's settings")
            options = {}
        settings = {}
        for key, value in options.items():
            name = _CAMEL.sub("_", key).replace("-", "_").lower()
            if name in EDITOR_SETTINGS:
                settings[name] = value
            else:
                self.show_error(_unknown_setting(key, name))
        self.client[source] = settings
        self.reload()

    def tell(self, uri: str, notices: list[Notice]) -> None:
        """What of a document was not linted (bertlint's parser cannot read what Python compiles): not a diagnostic of
        the user's code but the tool's own trouble, so a message shown once (again when the reason changes) and a
        line in the log at every lint."""
        for notice in notices:
            self.window_log_message(types.LogMessageParams(types.MessageType.Warning, f"bertlint: {notice}"))
        text = "\n".join(str(notice) for notice in notices)
        if text and self.not_linted.get(uri) != text:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"bertlint: {text}"))
        self.not_linted[uri] = text

    def show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"bertlint: {message}"))

    def overrides(self) -> dict[str, Any]:
        """Workspace settings key by key over the initialization options: an empty
        `didChangeConfiguration` (Neovim sends one at start) keeps the latter."""
        return {**self.client["init"], **self.client["workspace"]}

    def reload(self) -> None:
        """Forget every settings object and lint every open document again."""
        self.settings.clear()
        self.stamps.clear()
        self.shown.clear()
        for uri in self.workspace.notebook_documents:
            self.schedule(uri, self.lint_notebook, 0)
        for uri in list(self.workspace.text_documents):
            if self.workspace.get_notebook_document(cell_uri=uri) is None:
                self.schedule(uri, self.lint_document, 0)

    # --- linting ----------------------------------------------------------------------------

    async def lint_document(self, uri: str) -> None:
        doc = self.workspace.get_text_document(uri)
        if doc.language_id not in (None, "", "python"):
            return  # e.g. a pyproject.toml the client syncs too: its saves only reload the settings
        path = Path(doc.path)
        if self.config_changed(path):
            self.reload()  # lints this document too, with the new settings
            return
        lines, version = doc.lines, doc.version  # as linted: the document may change meanwhile
        findings, slots, notices = await self.in_worker(path, _lint, doc.source, path, self.settings_for(path), False) or ([], {}, [])
        self.tell(uri, notices)  # before the diagnostics: a client sees why there are none when they come
        self.publish(uri, findings, lines, version, slots.get(None, {}))

    async def lint_notebook(self, uri: str) -> None:
        """Lint all code cells as one module and publish each cell's findings on the cell's URI."""
        nb = self.workspace.get_notebook_document(notebook_uri=uri)
        path = _path(uri)
        if self.config_changed(path):
            self.reload()  # lints this notebook too, with the new settings
            return
        docs = [self.workspace.get_text_document(cell.document) for cell in nb.cells]
        cells = [(doc.uri, doc.lines, doc.version) for doc in docs]
        findings, slots, notices = await self.in_worker(path, _lint, _notebook_json(nb, docs), path, self.settings_for(path), True) or ([], {}, [])
        self.tell(uri, notices)
        for number, (cell_uri, lines, version) in enumerate(cells, 1):
            self.publish(cell_uri, [f for f in findings if f.cell == number], lines, version, slots.get(number, {}))
        for gone in set(self.cells.get(uri, ())) - {cell_uri for cell_uri, _, _ in cells}:
            self.publish(gone, [], (), None)
        self.cells[uri] = [cell_uri for cell_uri, _, _ in cells]

    async def in_worker(self, path: Path, function: Callable, *args: Any) -> Any:
        """`function(*args)` in the worker process. Cancelled before the worker takes it, it never runs;
        after, its result is dropped. An internal error, or a worker that died (a crash in the native
        parser), is logged and gives no findings; a new worker is started for the next lint."""
        if self.workers is None:
            self.workers = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        try:
            return await asyncio.get_running_loop().run_in_executor(self.workers, function, *args)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, BrokenProcessPool):
                self.workers = None
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, engine.describe_internal_error(path, exc)))
            return None

    def stop_workers(self) -> None:
        """No lint outlives the server: the worker is killed, not waited for; then the pool is shut down and
        waited for (its manager thread sees the dead worker at once) so that its queues are closed and their
        semaphores released before the process ends (else resource_tracker warns of leaked semaphores)."""
        for child in multiprocessing.active_children():
            child.kill()
        if self.workers is not None:
            self.workers.shutdown(wait=True, cancel_futures=True)
            self.workers = None

    def publish(self, uri: str, findings: list[Finding], lines: Sequence[str], version: int | None,
                slots: dict[int, engine.NoqaSlot] | None = None) -> None:
        self.findings[uri] = findings
        self.slots[uri] = slots or {}
        codec = self.workspace.position_codec
        diagnostics = [
            types.Diagnostic(
                range=codec.range_to_client_units(lines, _range(f.line, f.column, f.end_line, f.end_column)),
                message=f.message, severity=_SEVERITY[f.severity], code=f.code, source="bertlint",
                code_description=types.CodeDescription(href=PAGE_URL.format(code=f.code)),
                tags=[types.DiagnosticTag.Unnecessary] if f.code == "BL902" else None,
                data={"fix": fix_to_dict(f.fix)},
            )
            for f in findings
        ]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, diagnostics, version))

    def schedule(self, key: str, lint: Callable[[str], Any], delay: float) -> None:
        """Lint `key` after `delay` seconds unless another change comes first: then this lint never
        runs, or, already running in the worker, its findings are dropped."""
        self.cancel(key)

        async def later() -> None:
            await asyncio.sleep(delay)
            await lint(key)

        task = self.pending[key] = asyncio.ensure_future(later())
        task.add_done_callback(lambda done: self.pending.pop(key) if self.pending.get(key) is done else None)

    def cancel(self, key: str) -> None:
        if (task := self.pending.pop(key, None)) is not None:
            task.cancel()

    def forget(self, key: str, uris: Iterable[str]) -> None:
        """A closed document or notebook: no lint pending for `key`, no diagnostics left on `uris`."""
        self.cancel(key)
        self.not_linted.pop(key, None)
        for uri in uris:
            self.publish(uri, [], (), None)
            del self.findings[uri], self.slots[uri]

    async def fixed(self, path: Path, text: str, notebook_text: bool) -> str:
        """`text` with every safe fix applied, computed in the worker; a notebook is said so by the document,
        not by `path`'s suffix, since one in an editor need not be a `.ipynb` file (VS Code's interactive
        window, Jupytext)."""
        if self.config_changed(path):
            self.reload()
        return await self.in_worker(path, _fixed, text, path, self.settings_for(path), notebook_text) or text


def _unknown_setting(key: str, name: str) -> str:
    """The message for a client setting bertlint does not take: `key` as the client spelled it, `name` normalised."""
    if name == "learning_rate":
        return (f"{key!r} is not an editor setting (ignored): learning-rate ranges are read from the config file only, "
                "as [tool.bertlint.learning-rate] in pyproject.toml or [learning-rate] in bertlint.toml")
    import difflib

    close = difflib.get_close_matches(name, list(EDITOR_SETTINGS), n=1)
    hint = f"did you mean {EDITOR_SETTINGS[close[0]]!r}? " if close else ""
    return f"unknown editor setting {key!r} (ignored); {hint}the settings are {', '.join(EDITOR_SETTINGS.values())}"


def _lint(text: str, path: Path, settings: Settings, notebook_text: bool) -> tuple[list[Finding], dict[int | None, dict[int, engine.NoqaSlot]], list[Notice]]:
    """In the worker process: the findings of `text`, where "ignore on this line" writes its
    comment on each line that has one (by cell for a notebook, IPython syntax masked), so that
    the server offers it without tokenizing the document again, and what was not linted."""
    target = target_version(settings, path, text)
    notices: list[Notice] = []
    if not notebook_text:
        findings = engine.lint_source(text, path, settings, target=target, notices=notices)
        return findings, {None: engine.noqa_slots(text, {f.line for f in findings})}, notices
    findings = notebook.lint_text(text, path, settings, target=target, notices=notices)
    lines: dict[int | None, set[int]] = {}
    for f in findings:
        lines.setdefault(f.cell, set()).add(f.line)
    cells = notebook.parse(text).cells
    return findings, {cell.number: engine.noqa_slots(notebook.mask(cell.source) or "", lines[cell.number]) for cell in cells if cell.number in lines}, notices


def _fixed(text: str, path: Path, settings: Settings, notebook_text: bool) -> str:
    """In the worker process: `text` with every safe fix applied."""
    return runner.fix_text(text, None, path, settings, {"safe"}, target_version(settings, path, text), notebook_text)[0]


class _Document(TextDocument):
    """A document whose lines end where LSP's (and Python's) do: at \\n, \\r\\n and \\r. pygls splits them
    with str.splitlines, which also breaks at a form feed, U+2028 and other characters that are
    ordinary inside a line, so that each incremental edit after one of them landed on the wrong line."""

    @property
    def lines(self) -> Sequence[str]:
        return tuple(engine.source_lines(self.source, keepends=True))


class _Workspace(Workspace):
    def _create_text_document(self, *args: Any, **kwargs: Any) -> TextDocument:
        document = super()._create_text_document(*args, **kwargs)
        document.__class__ = _Document
        return document


def _signature(file: str) -> tuple[int, int, int] | None:
    """What `os.stat` says of `file` that changes when it is written or replaced; None if it is missing."""
    try:
        st = os.stat(file)
    except (OSError, ValueError):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _stamp(directory: Path) -> _Stamp:
    """The signature of each config file name in `directory` and every folder above it, nearest
    first: the places `config.find_config` looks (it walks the same absolute path)."""
    start = Path(os.path.abspath(directory))
    return tuple((str(d / name), _signature(str(d / name))) for d in (start, *start.parents) for name in CONFIG_FILES)


def _up_to(stamp: _Stamp, config: Path | None) -> _Stamp:
    """`stamp` cut after the folder of the config file the settings came from: a change further up
    cannot matter (the nearest config wins). Whole when none did (or the config was broken)."""
    if config is None:
        return stamp
    folder = os.path.dirname(os.path.abspath(config))
    kept = [index for index, (file, _) in enumerate(stamp) if os.path.dirname(file) == folder]
    return stamp[:kept[-1] + 1] if kept else stamp


def _path(uri: str) -> Path:
    return Path(to_fs_path(uri) or uri)


def _is_config(uri: str) -> bool:
    return uri.rsplit("/", 1)[-1] in CONFIG_FILES


def _notebook_json(nb: types.NotebookDocument, docs: list) -> str:
    kinds = ("code" if cell.kind == types.NotebookCellKind.Code else "markdown" for cell in nb.cells)
    return notebook.from_cells(zip(kinds, (doc.source for doc in docs)), nb.metadata)


def _range(line: int, column: int, end_line: int, end_column: int) -> types.Range:
    """1-based (line, column) pairs, end exclusive, as an LSP range in code points."""
    return types.Range(types.Position(line - 1, column - 1), types.Position(end_line - 1, end_column - 1))


server = Server()


@server.feature(types.INITIALIZE)
def initialize(ls: Server, params: types.InitializeParams) -> None:
    ls.workspace.__class__ = _Workspace  # pygls has just made it; no document is open yet
    if params.initialization_options:
        ls.configure("init", params.initialization_options)


@server.feature(types.INITIALIZED)
def initialized(ls: Server, params: types.InitializedParams) -> None:
    """Ask the client to tell us when a config file changes on disk."""
    if get_capability(ls.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
        watchers = [types.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILES]
        ls.client_register_capability(types.RegistrationParams([types.Registration(
            "bertlint-config", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            types.DidChangeWatchedFilesRegistrationOptions(watchers))]))


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: Server, params: types.DidChangeConfigurationParams) -> None:
    ls.configure("workspace", params.settings)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
    if any(_is_config(change.uri) for change in params.changes):
        ls.reload()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.lint_document, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, ls.lint_document, DEBOUNCE)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
    if _is_config(params.text_document.uri):
        ls.reload()
    else:
        ls.schedule(params.text_document.uri, ls.lint_document, 0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri, [params.text_document.uri])


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: Server, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, ls.lint_notebook, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: Server, params: types.DidChangeNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, ls.lint_notebook, DEBOUNCE)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: Server, params: types.DidSaveNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, ls.lint_notebook, 0)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: Server, params: types.DidCloseNotebookDocumentParams) -> None:
    ls.forget(params.notebook_document.uri, ls.cells.pop(params.notebook_document.uri, ()))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: Server, params: types.HoverParams) -> types.Hover | None:
    """The reference page of every rule whose diagnostic covers the position."""
    doc = ls.workspace.get_text_document(params.text_document.uri)
    at = ls.workspace.position_codec.position_from_client_units(doc.lines, params.position)
    here = (at.line + 1, at.character + 1)
    codes = dict.fromkeys(f.code for f in ls.findings.get(doc.uri, ()) if (f.line, f.column) <= here < (f.end_line, f.end_column))
    if not codes:
        return None
    text = "\n\n---\n\n".join(pages.page(code) or f"{code}: no reference page" for code in codes)
    return types.Hover(types.MarkupContent(types.MarkupKind.Markdown, text))


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True),
)
async def code_action(ls: Server, params: types.CodeActionParams) -> list[types.CodeAction]:
    """Quick fixes from what the last lint found, at once. "Fix all", offered where a safe fix was found,
    runs the fixes in the worker: when the client asks for it (resolves it), if the client can."""
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    actions = []
    if _wanted(params.context.only, types.CodeActionKind.QuickFix):
        for diagnostic in params.context.diagnostics:
            if diagnostic.source == "bertlint":
                actions += _quick_fixes(ls, doc, diagnostic)
    if _wanted(params.context.only, FIX_ALL) and any(f.fix is not None and f.fix.applicability == "safe" for f in ls.findings.get(uri, ())):
        action = types.CodeAction("bertlint: fix all safely fixable problems", kind=FIX_ALL, data={"uri": uri})
        if "edit" not in get_capability(ls.client_capabilities, "text_document.code_action.resolve_support.properties", []):
            action = await resolve_code_action(ls, action)
        if action.edit is not None:
            actions.append(action)
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: Server, action: types.CodeAction) -> types.CodeAction:
    """The edit of "fix all": every safe fix, to a fixed point, as one edit replacing the document."""
    uri = (action.data or {}).get("uri")
    if uri is None or uri not in ls.workspace.text_documents:
        return action
    edits = await _fix_all(ls, ls.workspace.get_text_document(uri))
    if edits:
        action.edit = types.WorkspaceEdit(changes={uri: edits})
    return action


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def _quick_fixes(ls: Server, doc, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The diagnostic's own fix when it has one, and a suppression comment on its first line."""
    actions = []
    codec, lines = ls.workspace.position_codec, doc.lines
    fix = (diagnostic.data or {}).get("fix")
    if fix:
        edits = [types.TextEdit(codec.range_to_client_units(lines, _range(e["line"], e["column"], e["end_line"], e["end_column"])), e["content"])
                 for e in fix["edits"]]
        unsafe = " (unsafe)" if fix["applicability"] == "unsafe" else ""
        actions.append(types.CodeAction(
            f"{diagnostic.code}: {fix['message']}{unsafe}", kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic], is_preferred=not unsafe, edit=types.WorkspaceEdit(changes={doc.uri: edits})))
    ignore = _ignore(ls, doc, diagnostic)
    if ignore is not None:
        actions.append(ignore)
    return actions


def _ignore(ls: Server, doc, diagnostic: types.Diagnostic) -> types.CodeAction | None:
    """`# noqa: CODE` on the diagnostic's line, or CODE added to the line's `# noqa: ...`, as `--add-noqa`
    writes it; none where no comment can go (the line ends inside a string or after a backslash) and
    for BL901/BL902, which no comment suppresses."""
    if diagnostic.code in ("BL901", "BL902"):
        return None
    number = diagnostic.range.start.line + 1
    slot = ls.slots.get(doc.uri, {}).get(number)  # found by the lint, in the worker: no tokenizing here
    if slot is None:
        return None
    start, end, before = slot
    rng = ls.workspace.position_codec.range_to_client_units(doc.lines, _range(number, start, number, end))
    return types.CodeAction(
        f"Ignore {diagnostic.code} on this line", kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={doc.uri: [types.TextEdit(rng, f"{before}{diagnostic.code}")]}))


async def _fix_all(ls: Server, doc) -> list[types.TextEdit]:
    """Every safe fix, to a fixed point, as one edit replacing the document (or notebook cell)."""
    nb = ls.workspace.get_notebook_document(cell_uri=doc.uri)
    if nb is None:
        new = await ls.fixed(Path(doc.path), doc.source, notebook_text=False)
    else:
        docs = [ls.workspace.get_text_document(cell.document) for cell in nb.cells]
        fixed = await ls.fixed(_path(nb.uri), _notebook_json(nb, docs), notebook_text=True)
        number = [cell.document for cell in nb.cells].index(doc.uri) + 1
        new = next(cell.source for cell in notebook.parse(fixed).cells if cell.number == number)
    if new == doc.source:
        return []
    end = types.Position(len(doc.lines), 0)
    return [types.TextEdit(types.Range(types.Position(0, 0), end), new)]


@server.feature(types.SHUTDOWN)
def shutdown(ls: Server, params: None) -> None:
    ls.stop_workers()


@server.feature(types.EXIT)
def exit_(ls: Server, params: None) -> None:
    """An `exit` without a `shutdown` first (a client that quits in a hurry) stops the worker too."""
    ls.stop_workers()


def serve() -> None:
    server.start_io()
