"""`bertlint server` driven by a real LSP client over stdio (pytest-lsp): every test starts the server."""

from __future__ import annotations

import asyncio
import itertools
import json
import subprocess
import sys
import time
from typing import Any, Callable

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
from lsprotocol import types  # noqa: E402

from bertlint import pages  # noqa: E402
from bertlint.rules import preview_codes  # noqa: E402
from conftest import PINNED_VERSION  # noqa: E402

SCRIPT = '''\
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained("bert-base-uncased")
enc = tok(["a", "bb"], pad_to_max_length=True, max_length=32, truncation=True)
'''
FIXED = SCRIPT.replace("pad_to_max_length=True", 'padding="max_length"')
CAPABILITIES = types.ClientCapabilities(
    notebook_document=types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()),
    workspace=types.WorkspaceClientCapabilities(
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
)
NO_FILE_WATCHING = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities())  # Helix, older Neovim


@pytest_lsp.fixture(config=pytest_lsp.ClientServerConfig(server_command=[sys.executable, "-m", "bertlint", "server"]))
async def client(lsp_client: pytest_lsp.LanguageClient):
    lsp_client.registrations = []
    lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: lsp_client.registrations.extend(params.registrations))
    yield
    if lsp_client.capabilities is not None:  # None: a test shut the server down itself
        await lsp_client.shutdown_session()


async def start(client, capabilities=CAPABILITIES, **options) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=capabilities, initialization_options={"transformersVersion": PINNED_VERSION, "preview": True, **options}))


async def diagnostics(client, uri: str, send=None, timeout: float = 10) -> list[types.Diagnostic]:
    """Send (optionally) and wait for the next diagnostics published for `uri`."""
    client.diagnostics.pop(uri, None)
    if send is not None:
        send()

    async def published() -> None:
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(published(), timeout)
    return list(client.diagnostics[uri])


def open_doc(client, uri: str, text: str):
    return lambda: client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text)))


def change_doc(client, uri: str, text: str, version: int):
    return lambda: client.text_document_did_change(types.DidChangeTextDocumentParams(
        types.VersionedTextDocumentIdentifier(version=version, uri=uri), [types.TextDocumentContentChangeWholeDocument(text)]))


def apply(text: str, edits) -> str:
    """Apply LSP TextEdits (ASCII text: characters are UTF-16 units) from the end backwards."""
    lines = text.splitlines(keepends=True) + [""]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    offset = lambda p: starts[p.line] + p.character  # noqa: E731
    for edit in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


async def actions(client, uri: str, diagnostic: types.Diagnostic | None, only=None) -> dict[str, types.CodeAction]:
    rng = diagnostic.range if diagnostic else types.Range(types.Position(0, 0), types.Position(0, 0))
    result = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), rng, types.CodeActionContext([diagnostic] if diagnostic else [], only=only)))
    return {action.title: action for action in result}


def test_server_without_the_lsp_extra_says_what_to_install(monkeypatch):
    from click.testing import CliRunner

    from bertlint.cli import main

    monkeypatch.delitem(sys.modules, "bertlint.lsp", raising=False)
    monkeypatch.setitem(sys.modules, "lsprotocol", None)  # as if the lsp extra were not installed
    result = CliRunner().invoke(main, ["server"])
    assert result.exit_code == 2 and "pip install '.[lsp]' in a clone of bertlint" in result.output


@pytest.mark.asyncio
async def test_diagnostics_on_open(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    found = await diagnostics(client, uri, open_doc(client, uri, SCRIPT))
    assert [(d.code, d.range.start.line, d.range.start.character, d.range.end.character) for d in found] == [("BL101", 2, 23, 45)]
    assert found[0].severity == types.DiagnosticSeverity.Error
    assert found[0].code_description.href.endswith("rules/BL101.md")


@pytest.mark.asyncio
async def test_quick_fix_applied_clears_the_diagnostic(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    [finding] = await diagnostics(client, uri, open_doc(client, uri, SCRIPT))
    offered = await actions(client, uri, finding)
    fix = offered["BL101: replace `pad_to_max_length` with `padding=`"]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    fixed = apply(SCRIPT, fix.edit.changes[uri])
    assert fixed == FIXED
    assert await diagnostics(client, uri, change_doc(client, uri, fixed, 2)) == []


@pytest.mark.asyncio
async def test_ignore_on_this_line(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    [finding] = await diagnostics(client, uri, open_doc(client, uri, SCRIPT))
    ignored = apply(SCRIPT, (await actions(client, uri, finding))["Ignore BL101 on this line"].edit.changes[uri])
    assert ignored.splitlines()[2].endswith("truncation=True)  # noqa: BL101")
    assert await diagnostics(client, uri, change_doc(client, uri, ignored, 2)) == []


@pytest.mark.asyncio
async def test_ignore_extends_an_existing_noqa(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = SCRIPT.replace("truncation=True)\n", "truncation=True)  # noqa: E501\n")
    [finding] = await diagnostics(client, uri, open_doc(client, uri, text))
    ignored = apply(text, (await actions(client, uri, finding))["Ignore BL101 on this line"].edit.changes[uri])
    assert ignored.splitlines()[2].endswith("# noqa: E501, BL101")


@pytest.mark.asyncio
async def test_ignore_only_where_a_comment_can_go(client, tmp_path):
    """No `# noqa` written into a string (a line that ends inside one, or a `# noqa` that is string text),
    and none offered for BL902, which no comment suppresses."""
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = SCRIPT + 'enc2 = tok(["# noqa: E501"], pad_to_max_length=True)\n' + 'enc3 = tok(["a"], pad_to_max_length=True, text_pair="""\n""")\n' + "x = 1  # noqa: BL101\n"
    found = await diagnostics(client, uri, open_doc(client, uri, text))
    assert [(d.code, d.range.start.line) for d in found] == [("BL101", 2), ("BL101", 3), ("BL101", 4), ("BL902", 6)]
    in_string_text = apply(text, (await actions(client, uri, found[1]))["Ignore BL101 on this line"].edit.changes[uri])
    assert in_string_text.splitlines()[3] == 'enc2 = tok(["# noqa: E501"], pad_to_max_length=True)  # noqa: BL101'
    offered = await actions(client, uri, found[2])
    assert "Ignore BL101 on this line" not in offered and "BL101: replace `pad_to_max_length` with `padding=`" in offered
    assert [title for title in await actions(client, uri, found[3]) if title.startswith("Ignore")] == []


@pytest.mark.asyncio
async def test_fix_all_source_action(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = SCRIPT + 'enc2 = tok(["c"], pad_to_max_length=False)\n'
    assert len(await diagnostics(client, uri, open_doc(client, uri, text))) == 2
    offered = await actions(client, uri, None, only=[types.CodeActionKind.SourceFixAll])
    [fix_all] = offered.values()
    assert fix_all.kind == "source.fixAll.bertlint"
    assert apply(text, fix_all.edit.changes[uri]) == FIXED + 'enc2 = tok(["c"], padding=False)\n'
    assert await actions(client, uri, None, only=[types.CodeActionKind.QuickFix]) == {}


@pytest.mark.asyncio
async def test_hover_shows_the_rule_page(client, tmp_path):
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    [finding] = await diagnostics(client, uri, open_doc(client, uri, SCRIPT))
    at = finding.range.start
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), at))
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value == (pages.page("BL101") or "BL101: no reference page")
    outside = types.Position(0, 0)
    assert await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), outside)) is None


@pytest.mark.asyncio
async def test_positions_are_utf16(client, tmp_path):
    """A non-BMP character before the finding counts as two UTF-16 units, as LSP clients count."""
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = SCRIPT.replace('enc = tok(["a"', 'enc = tok(["😀"')
    [finding] = await diagnostics(client, uri, open_doc(client, uri, text))
    assert (finding.range.start.character, finding.range.end.character) == (24, 46)


@pytest.mark.asyncio
async def test_incremental_edits_after_a_form_feed_and_a_line_separator(client, tmp_path):
    """Only \\n, \\r\\n and \\r end an LSP line: a form feed or U+2028 before an edit must not move it."""
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = "\f\nNOTE = 'a\u2028b \U0001F600'\n" + SCRIPT
    [finding] = await diagnostics(client, uri, open_doc(client, uri, text))
    assert (finding.range.start.line, finding.range.start.character) == (4, 23)
    edit = types.TextDocumentContentChangePartial(types.Range(types.Position(4, 23), types.Position(4, 45)), 'padding="max_length"')
    send = lambda: client.text_document_did_change(types.DidChangeTextDocumentParams(  # noqa: E731
        types.VersionedTextDocumentIdentifier(version=2, uri=uri), [edit]))
    assert await diagnostics(client, uri, send) == []
    assert await actions(client, uri, None, only=[types.CodeActionKind.SourceFixAll]) == {}  # the server's copy is right


def training_script(blocks: int = 34) -> str:
    """A ~300-line fine-tuning script: preprocessing functions, a Trainer run, one BL101."""
    head = '''\
import numpy as np
import torch
from datasets import load_dataset
from transformers import (AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding,
                          Trainer, TrainingArguments)

CHECKPOINT = "bert-base-uncased"
tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT)
model = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=3)
dataset = load_dataset("csv", data_files={"train": "train.csv", "test": "test.csv"})
'''
    block = '''

def preprocess_{i}(batch, max_length={length}):
    """Tokenize split {i}."""
    texts = [t.strip().lower() for t in batch["text"]]
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_length)
    enc["labels"] = [int(label) for label in batch["label"]]
    return enc
'''
    tail = '''

def compute_metrics(pred):
    return {"accuracy": float((np.argmax(pred.predictions, -1) == pred.label_ids).mean())}


encoded = dataset.map(preprocess_0, batched=True)
legacy = tokenizer(["a b c"], pad_to_max_length=True, max_length=16, truncation=True)
args = TrainingArguments(output_dir="out", learning_rate=2e-5, per_device_train_batch_size=16, num_train_epochs=3)
trainer = Trainer(model=model, args=args, train_dataset=encoded["train"], eval_dataset=encoded["test"],
                  data_collator=DataCollatorWithPadding(tokenizer), compute_metrics=compute_metrics)
trainer.train()
'''
    return head + "".join(block.format(i=i, length=64 + i) for i in range(blocks)) + tail


@pytest.mark.asyncio
async def test_every_change_of_a_300_line_script_gets_its_diagnostics(client, tmp_path):
    """Each didChange is answered with the diagnostics of that version. How fast: `benchmarks/bench.py --only editor`
    (a ratio to a `bertlint check` of the same file in the same run; a timed test would measure the machine's load)."""
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    text = training_script()
    assert 280 <= text.count("\n") <= 320
    first = await diagnostics(client, uri, open_doc(client, uri, text))
    assert "BL101" in [d.code for d in first]
    for version in range(2, 14):
        edited = text if version % 2 else text.replace("pad_to_max_length=True", 'padding="max_length"')
        found = await diagnostics(client, uri, change_doc(client, uri, edited, version))
        assert ("BL101" in [d.code for d in found]) == (edited == text)


@pytest.mark.asyncio
async def test_hover_code_actions_and_shutdown_do_not_wait_for_the_lint_of_a_long_file(client, tmp_path):
    """Lints run in a worker process: while an 8,000-line script is linted, hovers and quick fixes on
    another document are answered (before that lint ends), and so is shutdown."""
    await start(client)
    small, big = (tmp_path / "train.py").as_uri(), (tmp_path / "big.py").as_uri()
    [finding] = await diagnostics(client, small, open_doc(client, small, SCRIPT))
    text = training_script(1000)
    assert text.count("\n") > 8000
    client.diagnostics.pop(big, None)
    opened = time.perf_counter()
    open_doc(client, big, text)()
    hovers, fixes = [], []
    for _ in range(5):
        started = time.perf_counter()
        hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(small), finding.range.start))
        hovers.append(time.perf_counter() - started)
        assert hover is not None and "BL101" in hover.contents.value
        started = time.perf_counter()
        offered = await actions(client, small, finding, only=[types.CodeActionKind.QuickFix])
        fixes.append(time.perf_counter() - started)
        assert set(offered) == {"BL101: replace `pad_to_max_length` with `padding=`", "Ignore BL101 on this line"}
    assert big not in client.diagnostics  # all answered while the long lint ran
    found = await diagnostics(client, big, timeout=300)
    linted = time.perf_counter() - opened
    assert "BL101" in [d.code for d in found]
    change_doc(client, big, text + "x = 1\n", 2)()  # a new lint starts; shutdown must not wait for it
    started = time.perf_counter()
    await client.shutdown_session()
    stopped = time.perf_counter() - started
    client.capabilities = None
    print(f"while linting {text.count(chr(10))} lines ({linted:.1f} s): hover max {max(hovers) * 1000:.0f} ms,"
          f" quick fixes max {max(fixes) * 1000:.0f} ms; shutdown during a lint {stopped * 1000:.0f} ms")
    assert stopped < linted


@pytest.mark.asyncio
async def test_a_lint_made_stale_by_a_change_is_dropped(client, tmp_path):
    """A long file opened and at once replaced: its lint (waiting or running) publishes nothing; the
    first diagnostics are those of the new text."""
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    client.diagnostics.pop(uri, None)
    open_doc(client, uri, training_script(1000))()
    change_doc(client, uri, FIXED, 2)()
    while uri not in client.diagnostics:
        await asyncio.wait_for(client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS), 300)
    assert list(client.diagnostics[uri]) == []


@pytest.mark.asyncio
async def test_bad_config_is_shown_and_reloaded(client, tmp_path):
    config = tmp_path / "bertlint.toml"
    config.write_text('selec = ["BL1"]\n', encoding="utf-8")
    await start(client)
    uri = (tmp_path / "train.py").as_uri()
    found = await diagnostics(client, uri, open_doc(client, uri, SCRIPT))
    assert [r.method for r in client.registrations] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]  # sent before
    assert [d.code for d in found] == ["BL101"]  # linted with the defaults
    [message] = client.messages
    assert message.type == types.MessageType.Error and "unknown key 'selec'" in message.message
    config.write_text('ignore = ["BL101"]\n', encoding="utf-8")
    changed = types.DidChangeWatchedFilesParams([types.FileEvent(config.as_uri(), types.FileChangeType.Changed)])
    assert await diagnostics(client, uri, lambda: client.workspace_did_change_watched_files(changed)) == []
    assert len(client.messages) == 1


def rewrite(path, text: str) -> None:
    """Write `path` as a `git pull` or a terminal would, telling the server nothing."""
    path.write_text(text, encoding="utf-8")


@pytest.mark.asyncio
async def test_config_edited_on_disk_is_seen_without_file_watching(client, tmp_path):
    """A client that cannot watch files: the next lint finds the edited pyproject.toml by itself."""
    pyproject = tmp_path / "pyproject.toml"
    rewrite(pyproject, '[project]\nname = "x"\n\n[tool.bertlint]\nignore = []\n')
    await start(client, capabilities=NO_FILE_WATCHING)
    uri = (tmp_path / "train.py").as_uri()
    assert [d.code for d in await diagnostics(client, uri, open_doc(client, uri, SCRIPT))] == ["BL101"]
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 2))] == ["BL101"]  # unchanged: kept
    rewrite(pyproject, '[project]\nname = "x"\n\n[tool.bertlint]\nignore = ["BL101"]\n')
    assert await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 3)) == []
    pyproject.unlink()  # the config gone: the defaults again
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 4))] == ["BL101"]
    assert client.registrations == [] and client.messages == []


@pytest.mark.asyncio
async def test_config_broken_on_disk_is_shown_once_without_file_watching(client, tmp_path):
    config = tmp_path / "bertlint.toml"
    rewrite(config, 'ignore = ["BL101"]\n')
    await start(client, capabilities=NO_FILE_WATCHING)
    uri = (tmp_path / "train.py").as_uri()
    assert await diagnostics(client, uri, open_doc(client, uri, SCRIPT)) == []
    rewrite(config, 'ignore = ["BL101"\n')
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 2))] == ["BL101"]  # the defaults
    [message] = client.messages
    assert message.type == types.MessageType.Error and "invalid TOML" in message.message and "default settings" in message.message
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 3))] == ["BL101"]
    assert len(client.messages) == 1  # still broken, not changed again: not shown again
    rewrite(config, 'ignore = ["BL1"]\n')
    assert await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 4)) == []
    assert len(client.messages) == 1


@pytest.mark.asyncio
async def test_nearer_config_appearing_on_disk_is_picked_up_without_file_watching(client, tmp_path):
    """A bertlint.toml new in the document's folder wins over the pyproject.toml above it, for this
    folder only; deleted again, the pyproject.toml applies again."""
    rewrite(tmp_path / "pyproject.toml", '[tool.bertlint]\nextend-select = ["BL1"]\n')
    (tmp_path / "src").mkdir()
    await start(client, capabilities=NO_FILE_WATCHING)
    uri = (tmp_path / "src" / "train.py").as_uri()
    other = (tmp_path / "other.py").as_uri()
    assert [d.code for d in await diagnostics(client, uri, open_doc(client, uri, SCRIPT))] == ["BL101"]
    assert [d.code for d in await diagnostics(client, other, open_doc(client, other, SCRIPT))] == ["BL101"]
    nearer = tmp_path / "src" / "bertlint.toml"
    rewrite(nearer, 'ignore = ["BL101"]\n')
    assert await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 2)) == []
    assert [d.code for d in await diagnostics(client, other, change_doc(client, other, SCRIPT, 2))] == ["BL101"]
    nearer.unlink()
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 3))] == ["BL101"]
    assert client.messages == []


def test_config_check_before_a_lint_is_a_few_stats(tmp_path, monkeypatch):
    """Unchanged, the check is two `os.stat` calls per folder from the document's up to its config's,
    and reads no TOML; a pyproject.toml above the config's folder is not looked at."""
    from bertlint import config, lsp

    rewrite(tmp_path / "pyproject.toml", '[tool.bertlint]\nignore = []\n')
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    server = lsp.Server()
    path = tmp_path / "pkg" / "sub" / "train.py"
    server.settings_for(path)
    stats = []
    monkeypatch.setattr(lsp, "_signature", lambda file, stat=lsp._signature: stats.append(file) or stat(file))
    monkeypatch.setattr(config, "_load_toml", lambda path: pytest.fail(f"parsed {path}"))
    assert not server.config_changed(path)
    assert len(stats) == 6 and stats[-1] == str(tmp_path / "bertlint.toml")
    rewrite(tmp_path / "pkg" / "pyproject.toml", '[project]\nname = "x"\n')  # no table, yet the nearer file changed
    assert server.config_changed(path)


@pytest.mark.asyncio
async def test_workspace_settings_select_and_ignore(client, tmp_path):
    await start(client, ignore=["BL101"])
    uri = (tmp_path / "train.py").as_uri()
    assert await diagnostics(client, uri, open_doc(client, uri, SCRIPT)) == []
    empty = types.DidChangeConfigurationParams({})  # as Neovim sends at start: keeps the initialization options
    assert await diagnostics(client, uri, lambda: client.workspace_did_change_configuration(empty)) == []
    settings = types.DidChangeConfigurationParams({"bertlint": {"select": ["BL101"], "ignore": []}})
    found = await diagnostics(client, uri, lambda: client.workspace_did_change_configuration(settings))
    assert [d.code for d in found] == ["BL101"]
    other = types.DidChangeConfigurationParams({"bertlint": {"select": ["BL2"], "ignore": []}})
    assert await diagnostics(client, uri, lambda: client.workspace_did_change_configuration(other)) == []
    bad = types.DidChangeConfigurationParams({"bertlint": {"select": ["BL999"]}})
    # The defaults instead: BL101's finding comes back exactly where BL101 is a default rule (its judged precision,
    # data/precision.json, decides), and stays away, with the other preview rules, where it is not.
    expected = [] if "BL101" in preview_codes() else ["BL101"]
    assert [d.code for d in await diagnostics(client, uri, lambda: client.workspace_did_change_configuration(bad))] == expected
    assert "unknown rule code 'BL999'" in client.messages[-1].message


@pytest.mark.asyncio
async def test_wrong_editor_settings_are_named_as_the_client_spelled_them(client, tmp_path):
    """A setting bertlint does not take (the learning-rate table lives in config files only; a typo), a bad
    value, settings that are no object: each message names the setting as the editor sent it, the server
    stays up, and the settings that are right still apply."""
    await start(client, learningRate={"bert-base": [1e-5, 5e-5]}, ignre=["BL101"])
    uri = (tmp_path / "train.py").as_uri()
    assert [d.code for d in await diagnostics(client, uri, open_doc(client, uri, SCRIPT))] == ["BL101"]  # preview still on
    learning, typo = (m.message for m in client.messages)
    assert learning.startswith("bertlint: 'learningRate' is not an editor setting (ignored): learning-rate ranges are read from the config file only")
    assert typo.startswith("bertlint: unknown editor setting 'ignre' (ignored); did you mean 'ignore'? the settings are select, ignore, extendSelect,")
    for settings, expected in [
        ({"bertlint": {"perFileIgnores": 5}}, "bertlint: 'per-file-ignores' in the editor settings: invalid value 5; expected a list of strings"),
        ({"bertlint": 5}, "bertlint: the editor settings must be an object of settings, e.g. {\"ignore\": [\"BL106\"]}, not 5"),
    ]:
        change = types.DidChangeConfigurationParams(settings)
        await diagnostics(client, uri, lambda: client.workspace_did_change_configuration(change))
        assert client.messages[-1].message.startswith(expected)
    assert not any(m.message.startswith("bertlint: None") for m in client.messages)


NOTEBOOK_CELLS = [
    (types.NotebookCellKind.Markup, "markdown", "# Short sequences\n"),
    (types.NotebookCellKind.Code, "python", "!pip install transformers\nfrom transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('bert-base-uncased')\n"),
    (types.NotebookCellKind.Code, "python", "%time x = 1\nenc = tok(['a', 'bb'], pad_to_max_length=True, max_length=8, truncation=True)\n"),
]


@pytest.mark.asyncio
async def test_notebook_document(client, tmp_path):
    await start(client)
    nb_uri = (tmp_path / "colab.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{tmp_path / 'colab.ipynb'}#cell{i}" for i in range(len(NOTEBOOK_CELLS))]
    opened = types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(nb_uri, "jupyter-notebook", 1, [types.NotebookCell(kind, uri) for (kind, _, _), uri in zip(NOTEBOOK_CELLS, cell_uris)]),
        [types.TextDocumentItem(uri, language, 1, text) for (_, language, text), uri in zip(NOTEBOOK_CELLS, cell_uris)],
    )
    [finding] = await diagnostics(client, cell_uris[2], lambda: client.notebook_document_did_open(opened))
    assert (finding.code, finding.range.start.line, finding.range.start.character) == ("BL101", 1, 23)
    assert list(client.diagnostics[cell_uris[1]]) == []
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(cell_uris[2]), finding.range.start))
    assert hover.contents.value == (pages.page("BL101") or "BL101: no reference page")

    offered = await actions(client, cell_uris[2], finding)
    ignored = apply(NOTEBOOK_CELLS[2][2], offered["Ignore BL101 on this line"].edit.changes[cell_uris[2]])
    assert ignored.splitlines()[1].endswith("truncation=True)  # noqa: BL101")
    fixed = apply(NOTEBOOK_CELLS[2][2], offered["BL101: replace `pad_to_max_length` with `padding=`"].edit.changes[cell_uris[2]])
    assert "padding=\"max_length\"" in fixed
    [fix_all] = (await actions(client, cell_uris[2], None, only=[types.CodeActionKind.SourceFixAll])).values()
    assert apply(NOTEBOOK_CELLS[2][2], fix_all.edit.changes[cell_uris[2]]) == fixed

    lines = NOTEBOOK_CELLS[2][2].count("\n")
    whole = types.Range(types.Position(0, 0), types.Position(lines, 0))
    changed = types.DidChangeNotebookDocumentParams(
        types.VersionedNotebookDocumentIdentifier(2, nb_uri),
        types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
            types.NotebookDocumentCellContentChanges(
                types.VersionedTextDocumentIdentifier(version=2, uri=cell_uris[2]),
                [types.TextDocumentContentChangePartial(whole, fixed)])])),
    )
    assert await diagnostics(client, cell_uris[2], lambda: client.notebook_document_did_change(changed)) == []

    closed = types.DidCloseNotebookDocumentParams(types.NotebookDocumentIdentifier(nb_uri), [types.TextDocumentIdentifier(u) for u in cell_uris])
    assert await diagnostics(client, cell_uris[2], lambda: client.notebook_document_did_close(closed)) == []


@pytest.mark.asyncio
async def test_fix_all_in_a_notebook_that_is_no_ipynb_file(client, tmp_path):
    """VS Code's interactive window (and a Jupytext script) is a notebook document without `.ipynb`."""
    await start(client)
    nb_uri = "vscode-interactive:/Interactive-1.interactive"
    cell_uris = [f"vscode-notebook-cell:/Interactive-1.interactive#cell{i}" for i in range(len(NOTEBOOK_CELLS))]
    opened = types.DidOpenNotebookDocumentParams(
        types.NotebookDocument(nb_uri, "interactive", 1, [types.NotebookCell(kind, uri) for (kind, _, _), uri in zip(NOTEBOOK_CELLS, cell_uris)]),
        [types.TextDocumentItem(uri, language, 1, text) for (_, language, text), uri in zip(NOTEBOOK_CELLS, cell_uris)],
    )
    [finding] = await diagnostics(client, cell_uris[2], lambda: client.notebook_document_did_open(opened))
    [fix_all] = (await actions(client, cell_uris[2], None, only=[types.CodeActionKind.SourceFixAll])).values()
    fixed = apply(NOTEBOOK_CELLS[2][2], fix_all.edit.changes[cell_uris[2]])
    assert fixed == NOTEBOOK_CELLS[2][2].replace("pad_to_max_length=True", 'padding="max_length"')


class StdioSession:
    """A bare JSON-RPC client over the server's pipes, to see what the server process leaves behind when it
    ends: its stderr is read to EOF, which comes only when no process of it (worker, resource tracker) is left."""

    def __init__(self, cwd) -> None:
        self.server = subprocess.Popen([sys.executable, "-m", "bertlint", "server"], cwd=cwd, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.ids = itertools.count(1)

    def send(self, method: str, params: Any = None, request: bool = False) -> int | None:
        number = next(self.ids) if request else None
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params, **({"id": number} if request else {})}).encode()
        self.server.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.server.stdin.flush()
        return number

    def until(self, done: Callable[[dict], bool]) -> dict:
        """Read messages until one satisfies `done`."""
        while True:
            length = None
            while (line := self.server.stdout.readline().strip()):
                name, _, value = line.decode().partition(":")
                length = int(value) if name.lower() == "content-length" else length
            message = json.loads(self.server.stdout.read(length))
            if done(message):
                return message

    def request(self, method: str, params: Any = None) -> dict:
        number = self.send(method, params, request=True)
        return self.until(lambda message: message.get("id") == number)

    def end(self, shutdown: bool) -> str:
        """(`shutdown` and) `exit`; the server's whole stderr once every process holding it is gone."""
        if shutdown:
            self.request("shutdown")
        self.send("exit")
        _, stderr = self.server.communicate(timeout=60)
        return stderr.decode()


@pytest.mark.parametrize("shutdown", [True, False], ids=["shutdown-exit", "exit-alone"])
def test_server_ends_clean_while_a_lint_runs(tmp_path, shutdown):
    """Ended during a lint (by `shutdown` then `exit`, or a bare `exit`), the server leaves no worker behind and
    writes nothing to stderr: no resource_tracker "leaked semaphore objects" warning (the worker pool's queues
    are closed before the process ends)."""
    session = StdioSession(tmp_path)
    session.request("initialize", {"capabilities": {}, "initializationOptions": {"transformersVersion": PINNED_VERSION}})
    session.send("initialized", {})
    small, big = (tmp_path / "train.py").as_uri(), (tmp_path / "big.py").as_uri()
    for uri, text in ((small, SCRIPT), (big, training_script(300))):
        session.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        if uri == small:  # the worker is up; the long lint starts next and is still running when the server ends
            session.until(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == small)
    time.sleep(0.5)
    stderr = session.end(shutdown)
    assert "leaked" not in stderr and "Traceback" not in stderr, stderr
    assert stderr == ""


@pytest.mark.asyncio
async def test_a_file_the_parser_cannot_read_is_a_message_not_a_diagnostic(client, tmp_path):
    """Python compiles an indent of a tab then spaces; libcst does not: the file is not linted, which the server says
    as the tool's own trouble (shown once, logged at every lint), never as a diagnostic of the user's code."""
    await start(client)
    uri = (tmp_path / "tabs.py").as_uri()
    text = "def f(xs):\n    out = []\n    for x in xs:\n\t    out.append(x)\n    return out\n"
    assert await diagnostics(client, uri, open_doc(client, uri, text)) == []
    [message] = client.messages
    assert message.type == types.MessageType.Warning
    assert "tabs.py:4:1: not linted: Python 3." in message.message and "compiles it, but bertlint's parser (libcst)" in message.message
    assert any("not linted" in log.message for log in client.log_messages)
    assert await diagnostics(client, uri, change_doc(client, uri, text + "y = 1\n", 2)) == []
    assert len(client.messages) == 1  # the same reason is not shown again
    assert [d.code for d in await diagnostics(client, uri, change_doc(client, uri, SCRIPT, 3))] == ["BL101"]
