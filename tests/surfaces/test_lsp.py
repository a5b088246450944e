"""Language server, end to end: ``python -m inliner.lsp`` driven over stdio by pygls' client.

Every edit the server offers is applied here (by an applier written independently
of the server's) and compared byte for byte with what the engine produces for the
same selection. The documents' URIs name files that do not exist: the server must
work from the editor's (unsaved) text.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from inliner.engine import Selection, flatten
from inliner.lsp import text as txt

TIMEOUT = 20  # seconds for any one step; a hang fails instead of blocking CI

GOOD_AND_BAD = '''\
"""Two Functions: one can be flattened, one passes ctx to a helper."""
import torch


STASHED = []


def stash(ctx, x):
    ctx.save_for_backward(x)
    STASHED.append(ctx)  # ctx outlives the call: no rewrite can follow it


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor  # 😀 an astral character keeps UTF-16 honest
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class Helper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _ = "😀"; stash(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


def use(x):
    return Scale.apply(x, 2.0) + Helper.apply(x)


y = Scale.apply(torch.ones(2), 3.0)'''  # no trailing newline: the last line is rewritten

FIXED = GOOD_AND_BAD.replace('_ = "😀"; stash(ctx, x)', "ctx.save_for_backward(x)")

BROKEN = "import torch\n\nclass F(torch.autograd.Function):\n    def forward(ctx, x:\n        return x\n"


# ----------------------------------------------------------------------------- an independent client-side applier


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def _offset(text: str, position: types.Position, encoding: str) -> int:
    lines = _lines(text)
    if position.line >= len(lines):
        assert position.line == len(lines) and position.character == 0, position
        return len(text)
    line = lines[position.line]
    content = line.rstrip("\r\n")
    units = 0
    for index, char in enumerate(content):
        if units == position.character:
            return sum(map(len, lines[: position.line])) + index
        units += len(char.encode(encoding)) // (2 if encoding == "utf-16-le" else 1)
    assert units == position.character, (position, content)
    return sum(map(len, lines[: position.line])) + len(content)


def apply_workspace_edit(text: str, uri: str, edit: types.WorkspaceEdit, encoding: str = "utf-16-le") -> str:
    if edit.document_changes is not None:
        (change,) = edit.document_changes
        assert isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri
        edits = change.edits
    else:
        assert edit.changes is not None and list(edit.changes) == [uri]
        edits = edit.changes[uri]
    spans = sorted(
        (_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text) for e in edits
    )
    for (_, end, _), (start, _, _) in zip(spans, spans[1:]):
        assert end <= start, "edits overlap"
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


# ----------------------------------------------------------------------------- a session with the server


class Session:
    def __init__(self, capabilities: types.ClientCapabilities):
        self.capabilities = capabilities
        self.client = LanguageClient("inliner-tests", "0")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.popups: list[str] = []
        self.initialized: types.InitializeResult | None = None

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_popup(params: types.ShowMessageParams) -> None:
            self.popups.append(params.message)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            pass

    async def __aenter__(self) -> Session:
        await self.client.start_io(sys.executable, "-m", "inliner.lsp")
        self.initialized = await asyncio.wait_for(
            self.client.initialize_async(
                types.InitializeParams(capabilities=self.capabilities, process_id=None, root_uri=None)
            ),
            TIMEOUT,
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc_info) -> None:
        process = self.client._server
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        await self.client.stop()
        if process is not None and process.stdin is not None:
            process.stdin.close()

    @property
    def process(self) -> asyncio.subprocess.Process:
        assert self.client._server is not None
        return self.client._server

    async def stderr(self) -> str:
        assert self.process.stderr is not None
        return (await asyncio.wait_for(self.process.stderr.read(), TIMEOUT)).decode(errors="replace")

    async def finish(self, *, shutdown: bool = True) -> int:
        if shutdown:
            await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)

    def open(self, uri: str, text: str, version: int = 1, language: str = "python") -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
            )
        )

    def change(self, uri: str, text: str, version: int) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def diagnostics(self, uri: str, version: int) -> list[types.Diagnostic]:
        async def wait() -> list[types.Diagnostic]:
            while True:
                for params in self.published.get(uri, []):
                    if params.version == version:
                        return list(params.diagnostics)
                await asyncio.sleep(0.01)

        return await asyncio.wait_for(wait(), TIMEOUT)

    async def actions(self, uri: str, line: int, only: list[str] | None = None) -> list[types.CodeAction]:
        position = types.Position(line=line, character=0)
        result = await asyncio.wait_for(
            self.client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=types.Range(position, position),
                    context=types.CodeActionContext(diagnostics=[], only=only),
                )
            ),
            TIMEOUT,
        )
        assert result is not None
        assert all(isinstance(action, types.CodeAction) for action in result)
        return list(result)  # type: ignore[arg-type]

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        return await asyncio.wait_for(self.client.code_action_resolve_async(action), TIMEOUT)

    async def runs(self, kind: str) -> int:
        """How many engine runs of ``kind`` ("quick", "full" or "select") the server started."""
        stats = await asyncio.wait_for(self.client.protocol.send_request_async("inliner/stats", None), TIMEOUT)
        runs = stats["runs"] if isinstance(stats, dict) else stats.runs
        return runs[kind] if isinstance(runs, dict) else getattr(runs, kind)

    def versions_published(self, uri: str) -> list[int | None]:
        return [params.version for params in self.published.get(uri, [])]


def _capabilities(
    *, resolve: bool, document_changes: bool, encodings: list[str] | None = None
) -> types.ClientCapabilities:
    code_action = types.CodeActionClientCapabilities(
        code_action_literal_support=types.ClientCodeActionLiteralOptions(
            code_action_kind=types.ClientCodeActionKindOptions(value_set=list(types.CodeActionKind))
        ),
        data_support=True,
        resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]) if resolve else None,
    )
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=document_changes)
        ),
        text_document=types.TextDocumentClientCapabilities(
            code_action=code_action,
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        ),
        general=types.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
    )


def _line_of(text: str, needle: str) -> int:
    """0-based line of the first line containing ``needle``."""
    return next(i for i, line in enumerate(_lines(text)) if needle in line)


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def run(coroutine) -> None:
    asyncio.run(asyncio.wait_for(coroutine, 90))


# ----------------------------------------------------------------------------- end to end


def test_diagnostics_actions_changes_and_exit():
    uri = "file:///tmp/inliner-lsp/model.py"

    async def scenario() -> None:
        async with Session(_capabilities(resolve=False, document_changes=True)) as session:
            capabilities = session.initialized.capabilities
            assert set(capabilities.code_action_provider.code_action_kinds) == {
                "refactor.rewrite",
                "source.flattenAll.inliner",
            }

            # -- diagnostics on open: a hint on the good class, INL102 on the bad one
            session.open(uri, GOOD_AND_BAD)
            diagnostics = await session.diagnostics(uri, 1)
            by_code = {d.code: d for d in diagnostics}
            assert len(diagnostics) == 2 and set(by_code) == {"INL001", "INL102"}
            engine = {d.code: d for d in flatten(GOOD_AND_BAD, path="/tmp/inliner-lsp/model.py").diagnostics}
            for code in ("INL001", "INL102"):
                assert by_code[code].message == engine[code].message
                assert by_code[code].source == "inliner"
            hint, warning = by_code["INL001"], by_code["INL102"]
            assert hint.severity == types.DiagnosticSeverity.Hint and "Scale" in hint.message
            assert warning.severity == types.DiagnosticSeverity.Warning and "Helper" in warning.message
            scale_line = _line_of(GOOD_AND_BAD, "class Scale(")
            assert hint.range == types.Range(types.Position(scale_line, 6), types.Position(scale_line, 11))
            stash_line = _line_of(GOOD_AND_BAD, "; stash(ctx, x)")
            before = _lines(GOOD_AND_BAD)[stash_line].index("stash(ctx") + len("stash(")
            column = _utf16(_lines(GOOD_AND_BAD)[stash_line][:before])  # the emoji counts twice
            assert warning.range == types.Range(
                types.Position(stash_line, column), types.Position(stash_line, column + 3)
            )

            # -- code actions at the good class: its own rewrite and the whole-file one
            selections = await session.runs("select")
            for line in (
                scale_line,
                scale_line + 4,
                scale_line - 1,
            ):  # the class line, its body, the decorator-free gap
                actions = await session.actions(uri, line)
                titles = [a.title for a in actions]
                if line == scale_line - 1:
                    assert titles == ["Flatten all autograd Functions in this file"]
                    continue
                assert titles == ["Flatten `Scale`", "Flatten all autograd Functions in this file"]
                one, whole = actions
                assert one.kind == types.CodeActionKind.RefactorRewrite and whole.kind == "source.flattenAll.inliner"
                assert list(one.diagnostics) == [hint]
                assert (
                    apply_workspace_edit(GOOD_AND_BAD, uri, one.edit)
                    == flatten(GOOD_AND_BAD, select=Selection(name="Scale")).source
                )
                assert apply_workspace_edit(GOOD_AND_BAD, uri, whole.edit) == flatten(GOOD_AND_BAD).source
                assert one.edit.document_changes[0].text_document.version == 1
            assert await session.runs("select") == selections + 1, "one engine run for the selection, cached after"

            # -- at the bad class: no per-class action; kind filtering
            helper_line = _line_of(GOOD_AND_BAD, "class Helper(")
            assert [a.title for a in await session.actions(uri, helper_line)] == [
                "Flatten all autograd Functions in this file"
            ]
            assert await session.actions(uri, scale_line, only=["quickfix"]) == []
            assert [a.title for a in await session.actions(uri, scale_line, only=["refactor"])] == ["Flatten `Scale`"]
            assert [a.kind for a in await session.actions(uri, scale_line, only=["source"])] == [
                "source.flattenAll.inliner"
            ]

            # -- a change updates the diagnostics (both classes can be flattened now)
            session.change(uri, FIXED, 2)
            diagnostics = await session.diagnostics(uri, 2)
            assert sorted((d.code, d.severity) for d in diagnostics) == [("INL001", types.DiagnosticSeverity.Hint)] * 2
            actions = await session.actions(uri, _line_of(FIXED, "class Helper("))
            assert [a.title for a in actions] == ["Flatten `Helper`", "Flatten all autograd Functions in this file"]
            assert (
                apply_workspace_edit(FIXED, uri, actions[0].edit)
                == flatten(FIXED, select=Selection(name="Helper")).source
            )
            assert apply_workspace_edit(FIXED, uri, actions[1].edit) == flatten(FIXED).source

            # -- fast typing: each version is analysed at most once, the last one surely
            runs = await session.runs("quick")
            session.change(uri, FIXED + "\n# 3", 3)
            session.change(uri, FIXED + "\n# 4", 4)
            session.change(uri, GOOD_AND_BAD, 5)
            assert {d.code for d in await session.diagnostics(uri, 5)} == {"INL001", "INL102"}
            assert runs < await session.runs("quick") <= runs + 3

            # -- a document that does not parse: no diagnostics, no actions, no popup
            broken = "file:///tmp/inliner-lsp/broken.py"
            session.open(broken, BROKEN)
            assert await session.diagnostics(broken, 1) == []
            assert await session.actions(broken, 2) == []
            session.change(uri, BROKEN, 6)  # the good document broken by an edit clears its diagnostics
            assert await session.diagnostics(uri, 6) == []
            assert await session.actions(uri, 2) == []

            # -- other languages are ignored
            session.open("file:///tmp/inliner-lsp/notes.txt", GOOD_AND_BAD, language="plaintext")
            assert await session.actions("file:///tmp/inliner-lsp/notes.txt", scale_line) == []

            assert session.popups == []
            versions = session.versions_published(uri)
            assert versions == sorted(versions), "never a version's diagnostics after a newer one's"
            code = await session.finish()
            stderr = await session.stderr()
            assert code == 0, stderr
            assert "Traceback" not in stderr and "ERROR" not in stderr, stderr

    run(scenario())


def test_resolve_crlf_and_utf8_positions():
    """A client with codeAction/resolve and UTF-8 positions, on a CRLF file, without documentChanges."""
    uri = "file:///tmp/inliner-lsp/crlf.py"
    text = GOOD_AND_BAD.replace("\n", "\r\n")

    async def scenario() -> None:
        capabilities = _capabilities(resolve=True, document_changes=False, encodings=["utf-8"])
        async with Session(capabilities) as session:
            assert session.initialized.capabilities.position_encoding == "utf-8"
            assert session.initialized.capabilities.code_action_provider.resolve_provider is True
            session.open(uri, text)
            diagnostics = await session.diagnostics(uri, 1)
            (warning,) = [d for d in diagnostics if d.code == "INL102"]
            stash_line = _line_of(text, "; stash(ctx, x)")
            before = _lines(text)[stash_line].index("stash(ctx") + len("stash(")
            assert warning.range.start.character == len(_lines(text)[stash_line][:before].encode("utf-8"))

            quick, selections = await session.runs("quick"), await session.runs("select")
            actions = await session.actions(uri, _line_of(text, "class Scale("))
            assert [a.title for a in actions] == ["Flatten `Scale`", "Flatten all autograd Functions in this file"]
            assert all(a.edit is None for a in actions), "edits come on resolve"
            assert (await session.runs("quick"), await session.runs("select")) == (quick, selections), (
                "listing actions runs nothing new"
            )
            one, whole = [await session.resolve(a) for a in actions]
            assert (
                apply_workspace_edit(text, uri, one.edit, "utf-8")
                == flatten(text, select=Selection(name="Scale")).source
            )
            assert apply_workspace_edit(text, uri, whole.edit, "utf-8") == flatten(text).source
            assert await session.runs("select") == selections + 1

            # a stale action (the class is gone) resolves to no edit rather than a wrong one
            session.change(uri, text.replace("class Scale(torch.autograd.Function)", "class Scale(object)"), 2)
            await session.diagnostics(uri, 2)
            assert (await session.resolve(actions[0])).edit is None
            assert session.popups == []
            assert await session.finish() == 0
            stderr = await session.stderr()
            assert "Traceback" not in stderr and "ERROR" not in stderr, stderr

    run(scenario())


def test_exit_without_shutdown_is_code_1():
    async def scenario() -> None:
        async with Session(_capabilities(resolve=False, document_changes=False)) as session:
            assert await session.finish(shutdown=False) == 1

    run(scenario())


def test_version_flag():
    done = subprocess.run(
        [sys.executable, "-m", "inliner.lsp", "--version"], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0 and done.stdout.startswith("inliner-lsp ")


# ----------------------------------------------------------------------------- the pure text helpers

_PIECES = st.sampled_from(["a", "b", " ", "😀", "é", "\x0c", "\r\n", "\n", "\r", "class X:", "    pass"])
_TEXTS = st.lists(_PIECES, max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    cuts=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), _TEXTS), max_size=5),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_engine_edits_become_lsp_edits_that_make_the_same_text(text, cuts, encoding):
    """The engine's edits (offsets into the text) turned into LSP ranges make, applied by
    a client, the text the engine's own splice makes."""
    from inliner.engine import TextEdit
    from inliner.lsp.server import lsp_edits

    def boundary(offset: int) -> int:  # the engine never cuts a CRLF in two
        return offset + 1 if 0 < offset < len(text) and text[offset - 1 : offset + 1] == "\r\n" else offset

    edits, cursor = [], 0
    for at, length, new in sorted(cuts):
        start = boundary(min(max(at, cursor), len(text)))
        end = boundary(min(start + length, len(text)))
        if edits and start == edits[-1].start:
            continue  # one edit per offset: clients order inserts at one position by array order only
        edits.append(TextEdit(start, end, new))
        cursor = end
    expected = (
        "".join(
            text[previous.end if previous else 0 : edit.start] + edit.text
            for previous, edit in zip([None, *edits], edits)
        )
        + text[edits[-1].end if edits else 0 :]
    )
    converted = lsp_edits(tuple(edits), txt.split_lines(text), encoding)
    assert txt.apply_edits(text, converted, encoding) == expected
    codec = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    if codec == "utf-32-le":
        return  # the independent applier below counts UTF-8 and UTF-16 units
    edit = types.WorkspaceEdit(
        changes={
            "u": [
                types.TextEdit(types.Range(types.Position(*e.start), types.Position(*e.end)), e.text) for e in converted
            ]
        }
    )
    assert apply_workspace_edit(text, "u", edit, codec) == expected


def test_lsp_lines_are_not_splitlines():
    text = "a\x0cb\r\nc\rd\u2028e"
    assert txt.split_lines(text) == ["a\x0cb\r\n", "c\r", "d\u2028e"]
    assert txt.end_of(txt.split_lines(text)) == (2, 3)
    assert txt.end_of(txt.split_lines("x\n")) == (1, 0)
    assert txt.position(txt.split_lines("😀x = 1\n"), 1, 2) == (0, 2)
    assert txt.position(txt.split_lines("😀x = 1\n"), 1, 2, "utf-8") == (0, 4)
    assert txt.position(txt.split_lines("😀x = 1\n"), 1, 2, "utf-32") == (0, 1)


@pytest.mark.parametrize(
    "only, wanted",
    [
        (None, True),
        (["refactor"], True),
        (["refactor.rewrite"], True),
        (["refactor.extract"], False),
        (["quickfix"], False),
    ],
)
def test_kind_filtering(only, wanted):
    from inliner.lsp.server import kind_wanted

    assert kind_wanted("refactor.rewrite", only) is wanted


def test_targets_cover_decorators_and_body_and_disambiguate_by_line():
    from inliner.lsp.server import analyse

    double = (
        "    class Double(torch.autograd.Function):\n"
        "        @staticmethod\n"
        "        def forward(ctx, x):\n"
        "            return x * 2\n"
        "\n"
        "        @staticmethod\n"
        "        def backward(ctx, g):\n"
        "            return g * 2\n"
    )
    source = (
        "import torch\n\n\ndef first():\n" + double + "    return Double.apply\n\n\n"
        "def second():\n" + double + "    return Double.apply\n"
    )
    analysis = analyse(source, "t.py", None, "utf-16")
    assert [t.name for t in analysis.targets] == ["Double", "Double"]
    first, second = analysis.targets
    assert (first.first_line, first.last_line) == (4, 11) and (second.first_line, second.last_line) == (16, 23)
    assert first.select == Selection(line=5) and second.select == Selection(line=17)
    only_second = flatten(source, select=second.select)
    assert only_second.flattened == ("Double",) and only_second.source.count("class Double") == 1

    unique = source.replace("Double", "Triple", 2)  # the first class and its call site
    assert [t.select for t in analyse(unique, "t.py", None, "utf-16").targets] == [
        Selection(name="Triple"),
        Selection(name="Double"),
    ]

    # the engine's span of a class covers its decorators (a class without forward is refused)
    decorated = "import torch\n\n@a\n@b\nclass C(torch.autograd.Function):\n    pass\n"
    (target,) = flatten(decorated).targets
    assert (target.name, target.kind, target.first_line, target.last_line, target.flattened) == (
        "C",
        "class",
        3,
        6,
        False,
    )


@pytest.mark.engine_bug
def test_an_engine_internal_error_is_reported_and_nothing_offered(monkeypatch, caplog):
    import inliner.engine.rewrite
    from inliner.lsp import server

    def boom(*args, **kwargs):
        raise RecursionError("deep")

    # a file that does not parse: nothing reported (half-typed code; other tools say why)
    assert server.analyse(BROKEN, "t.py", None, "utf-16").diagnostics == ()

    monkeypatch.setattr(inliner.engine.rewrite, "rewrite_module", boom)
    analysis = server.analyse(GOOD_AND_BAD, "t.py", None, "utf-16")
    assert analysis.result.error and analysis.targets == () and analysis.edits == ()
    (diagnostic,) = analysis.diagnostics
    assert diagnostic.code == "INL002" and diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range.start == types.Position(0, 0)
    assert diagnostic.message.startswith("internal error (RecursionError: deep at test_lsp.py:")
    assert "INL002" in caplog.text and "please report" in caplog.text

    # what analyse reports is what the server publishes
    published = _published_by(_in_process_server(monkeypatch))
    lsp = published.server

    async def scenario() -> None:
        lsp.opened(URI, "t.py", GOOD_AND_BAD, 3)
        await _settled(lsp, URI)

    asyncio.run(scenario())
    assert [p.diagnostics for p in published] == [list(analysis.diagnostics)]


@pytest.mark.engine_bug
def test_an_internal_error_in_one_class_is_a_warning_on_it(monkeypatch):
    import inliner.engine.function_class.lower_class
    from inliner.lsp import server

    real = inliner.engine.function_class.lower_class.lower_function_class

    def lowering(node, **kwargs):
        if node.name.value == "Scale":
            raise KeyError("boom")
        return real(node, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "lower_function_class", lowering)
    analysis = server.analyse(FIXED, "t.py", None, "utf-16")
    assert analysis.result.error is None and analysis.result.flattened == ("Helper",)
    assert [t.name for t in analysis.targets] == ["Helper"]
    (diagnostic,) = [d for d in analysis.diagnostics if d.code == "INL002"]
    line = FIXED.splitlines().index("class Scale(torch.autograd.Function):")
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert diagnostic.range == types.Range(types.Position(line, 6), types.Position(line, 11))
    assert "class Scale: internal error (KeyError: 'boom'" in diagnostic.message


# ----------------------------------------------------------------------------- the server in this process

URI = "file:///t.py"


class _Published(list):
    server: Any


def _in_process_server(monkeypatch):
    from inliner.lsp import server

    lsp = server.InlinerLanguageServer()
    lsp.idle = 0.0  # the full run right after the quick one
    return lsp


def _published_by(lsp) -> _Published:
    published = _Published()
    published.server = lsp
    lsp.text_document_publish_diagnostics = published.append
    return published


async def _settled(lsp, uri: str) -> None:
    """Until the document's publishing (quick run, then full run) is over."""
    while not lsp.publishing[uri].done():
        await asyncio.sleep(0.01)


@pytest.mark.engine_bug
def test_an_error_only_printing_finds_is_published_after_the_quick_diagnostics(monkeypatch, caplog):
    """The quick run prints no code, so it cannot see an engine error in printing it: the
    full run that follows does, and its diagnostics replace the quick ones."""
    import inliner.engine.function_class.lower_class

    real = inliner.engine.function_class.lower_class.emit

    def emit(vjp, *args, **kwargs):
        if vjp.name == "Scale":
            raise ValueError("printing failed")
        return real(vjp, *args, **kwargs)

    monkeypatch.setattr(inliner.engine.function_class.lower_class, "emit", emit)
    published = _published_by(_in_process_server(monkeypatch))

    async def scenario() -> None:
        published.server.opened(URI, "t.py", FIXED, 1)
        await _settled(published.server, URI)

    asyncio.run(scenario())
    quick, full = published
    assert quick.version == full.version == 1
    assert sorted(d.code for d in quick.diagnostics) == ["INL001", "INL001"]
    assert sorted(d.code for d in full.diagnostics) == ["INL001", "INL002"]
    (error,) = [d for d in full.diagnostics if d.code == "INL002"]
    assert "class Scale: internal error (ValueError: printing failed" in error.message
    assert "INL002" in caplog.text


def test_stale_versions_never_publish_after_a_newer_one(monkeypatch):
    """A run of version 1 that ends after version 2 arrived publishes nothing: neither its
    quick diagnostics nor (here) full diagnostics that differ from the quick ones."""
    import dataclasses
    import threading

    from inliner.lsp import server

    release = threading.Event()
    real = server.analyse

    def analyse(text, *args, diagnostics_only=False, stop=None, **kwargs):
        if text.endswith("# version 1\n") and not diagnostics_only:
            release.wait(TIMEOUT)  # the full run of version 1 ends only once version 2 is in
            analysis = real(text, *args, **kwargs)  # and is not stopped: it completes, stale
            return dataclasses.replace(analysis, diagnostics=analysis.diagnostics[:1])  # differs from the quick run
        return real(text, *args, diagnostics_only=diagnostics_only, stop=stop, **kwargs)

    monkeypatch.setattr(server, "analyse", analyse)
    lsp = _in_process_server(monkeypatch)
    published = _published_by(lsp)

    async def scenario() -> None:
        lsp.opened(URI, "t.py", FIXED + "# version 1\n", 1)
        while not published:  # the quick run of version 1 is published...
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # ...and its full run is under way
        lsp.changed(URI, GOOD_AND_BAD, 2)
        release.set()
        await _settled(lsp, URI)
        await asyncio.sleep(0.1)  # anything version 1 still had to say would be out by now

    asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert [p.version for p in published] == [1, 2]
    assert {d.code for d in published[-1].diagnostics} == {"INL001", "INL102"}
