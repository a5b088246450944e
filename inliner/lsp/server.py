"""The language server: engine results as LSP diagnostics and code actions.

Every answer comes from ``inliner.engine.flatten`` -- the same call the command
line makes -- so codes, messages and rewritten text agree with it exactly.

Cost model: the engine runs in one worker thread, at most once per
(document, version, selection); results are cached and shared by every request
that needs them, and dropped as soon as the document changes or closes. Edits
typed in quick succession are debounced, so only the version the user pauses on
is analysed. Code actions are listed from the cached whole-file result; the
rewrite for one class runs only when the client resolves the action (or, for a
client without ``codeAction/resolve``, when the cursor is in that class).
"""

from __future__ import annotations

import ast
import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from inliner import __version__
from inliner.engine.analysis.compile_overrides import engine_options
from inliner.engine import FlattenResult, Selection, flatten
from inliner.engine.diagnostics import INTERNAL_CODES, INTERNAL_ERROR, Diagnostic, Severity
from inliner.lsp import text as txt

logger = logging.getLogger("inliner.lsp")

#: Kind of the per-class action.
FLATTEN_ONE_KIND = types.CodeActionKind.RefactorRewrite
#: Kind of the whole-file action (a ``source.`` subkind, so editors list it with source actions).
FLATTEN_ALL_KIND = "source.flattenAll.inliner"
FLATTEN_ALL_TITLE = "Flatten all autograd Functions in this file"

#: Custom request answering engine statistics (see ``create_server``).
STATS_METHOD = "inliner/stats"

#: Seconds to wait after a change before analysing, so fast typing analyses one version.
DEBOUNCE_SECONDS = 0.2

_SEVERITY = {
    Severity.INFO: types.DiagnosticSeverity.Hint,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.ERROR: types.DiagnosticSeverity.Error,
}


@dataclass(frozen=True)
class Target:
    """Something one "Flatten `name`" action rewrites: a class (or op call) the engine can flatten."""

    name: str
    first_line: int  # 0-based, inclusive: where the action is offered
    last_line: int
    select: Selection
    diagnostic: types.Diagnostic  # the hint the engine reported on it


@dataclass(frozen=True)
class Analysis:
    """One engine run on one version of a document, with everything derived from it."""

    result: FlattenResult
    diagnostics: tuple[types.Diagnostic, ...] = ()
    edits: tuple[txt.Edit, ...] = ()  # turn the text into ``result.source``
    targets: tuple[Target, ...] = ()  # only for the whole-file run


@dataclass
class _Entry:
    text: str
    future: asyncio.Future  # of Analysis


# ----------------------------------------------------------------------------- pure part


def analyse(text: str, path: str, select: Selection | None, encoding: str) -> Analysis:
    """Run the engine once and derive diagnostics, edits and (whole-file) action targets.

    A file the engine cannot process gets nothing offered; of its diagnostics only
    an internal error (INL002, also logged) is reported: a syntax error is the
    business of the user's other tools, and is usually just half-typed code.
    """
    try:
        options = engine_options(path)
    except ValueError as exc:  # a bad [tool.inliner] compile table: said once per analysis, then ignored
        logger.error("%s", exc)
        options = {}
    result = flatten(text, path=path, select=select, **options)
    for diagnostic in result.diagnostics:
        if diagnostic.code in INTERNAL_CODES:
            logger.error("%s", diagnostic.format())
    lines = txt.split_lines(text)
    if result.error is not None:
        internal = (d for d in result.diagnostics if d.code == INTERNAL_ERROR)
        return Analysis(result, tuple(lsp_diagnostic(d, lines, encoding) for d in internal))
    diagnostics = tuple(lsp_diagnostic(d, lines, encoding) for d in result.diagnostics)
    edits = tuple(txt.line_edits(text, result.source, encoding)) if result.source != text else ()
    targets = () if select is not None else find_targets(text, result.diagnostics, diagnostics)
    return Analysis(result, diagnostics, edits, targets)


def lsp_diagnostic(diagnostic: Diagnostic, lines: list[str], encoding: str) -> types.Diagnostic:
    """The engine's 1-based line/column diagnostic as a 0-based LSP one, same code and message."""
    start = txt.position(lines, diagnostic.line, diagnostic.column, encoding)
    if diagnostic.end_line is not None and diagnostic.end_column is not None:
        end = txt.position(lines, diagnostic.end_line, diagnostic.end_column, encoding)
    else:
        end = txt.position(lines, *txt.word_end(lines, diagnostic.line, diagnostic.column), encoding)
    severity = Severity(diagnostic.severity)
    return types.Diagnostic(
        range=types.Range(types.Position(*start), types.Position(*max(start, end))),
        message=diagnostic.message,
        severity=_SEVERITY.get(severity, types.DiagnosticSeverity.Warning),
        code=diagnostic.code,
        source="inliner",
    )


def find_targets(
    text: str, diagnostics: tuple[Diagnostic, ...], lsp: tuple[types.Diagnostic, ...]
) -> tuple[Target, ...]:
    """The flattenable things (info diagnostics with a ``name``) with the lines they cover.

    A class covers its decorators and body (from ``ast``, which is fast) and is
    selected by name when no other reported class or call shares it; anything else
    (an op call) covers its diagnostic's lines and is selected by line.
    """
    flattenable = [(d, l) for d, l in zip(diagnostics, lsp) if d.name and Severity(d.severity) == Severity.INFO]
    if not flattenable:
        return ()
    named = [d.name for d in diagnostics if d.name]
    spans = _class_spans(text)
    targets = []
    for diagnostic, lsp_diag in flattenable:
        name = diagnostic.name
        assert name is not None
        enclosing = [
            span for span in spans.get(name, ()) if span[1] <= diagnostic.line <= span[2]
        ]  # (first line, `class` line, last line), 1-based
        if enclosing:  # a class: select it by name when that is unambiguous
            first, _, last = max(enclosing, key=lambda span: span[1])
            select = Selection(name=name) if named.count(name) == 1 else Selection(line=diagnostic.line)
        else:  # an op call (or a class ast cannot see): select it by its line
            first, last = diagnostic.line, diagnostic.end_line or diagnostic.line
            select = Selection(line=diagnostic.line)
        targets.append(Target(name, first - 1, last - 1, select, lsp_diag))
    return tuple(targets)


def _class_spans(text: str) -> dict[str, list[tuple[int, int, int]]]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    spans: dict[str, list[tuple[int, int, int]]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.setdefault(node.name, []).append((first, node.lineno, node.end_lineno or node.lineno))
    return spans


def kind_wanted(kind: str, only: list[str] | None) -> bool:
    """LSP kind filtering: ``refactor`` asks for ``refactor.rewrite`` too."""
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


# ----------------------------------------------------------------------------- the server


class InlinerLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "inliner",
            __version__,
            # Full sync: the client sends the whole text, so the server never depends
            # on replaying incremental edits (pygls splits lines like str.splitlines,
            # which disagrees with LSP on form feeds and other separators).
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
        )
        self.engine = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inliner-engine")
        self.cache: dict[tuple[str, int | None, Selection | None], _Entry] = {}
        self.python_documents: set[str] = set()
        self.publishing: dict[str, asyncio.Task] = {}
        self.debounce = DEBOUNCE_SECONDS
        self.shutdown_requested = False
        self.exit_requested = False
        self.engine_runs = 0  # engine runs requested (a queued run dropped by a newer version counts too)

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def exit_code(self) -> int:
        """0 after shutdown (as LSP asks), 1 when the client went away without it."""
        return 0 if self.shutdown_requested else 1

    def shutdown(self) -> None:
        # pygls waits for its thread pool here, whose stdin reader may still be
        # blocked on a client that keeps the pipe open after `exit`: do not wait.
        pool, self._thread_pool = self._thread_pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        self.engine.shutdown(wait=False, cancel_futures=True)
        super().shutdown()

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Log instead of pygls' default error popup.
        logger.error("%s", error)
        try:
            self.window_log_message(types.LogMessageParams(types.MessageType.Error, f"inliner: {error}"))
        except Exception:  # pragma: no cover - the client is gone
            pass

    # -- documents ---------------------------------------------------------------------

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return str(getattr(encoding, "value", encoding))

    def is_python(self, document: types.TextDocumentItem) -> bool:
        uri = document.uri
        if uri.endswith(".pyi"):  # stubs have no bodies to flatten
            return False
        return document.language_id == "python" or (not document.language_id and uri.endswith(".py"))

    def document(self, uri: str):
        """The open Python document at ``uri``, or None."""
        if uri not in self.python_documents:
            return None
        return self.workspace.get_text_document(uri)

    def forget(self, uri: str, keep_version: int | None = None, *, everything: bool = False) -> None:
        """Drop cached runs of ``uri`` other than ``keep_version`` (queued ones never start)."""
        for key in [k for k in self.cache if k[0] == uri and (everything or k[1] != keep_version)]:
            self.cache.pop(key).future.cancel()

    # -- engine runs (shared, cached) ---------------------------------------------------

    def run(self, uri: str, select: Selection | None = None) -> asyncio.Future | None:
        """The (possibly still running) analysis of the current version of ``uri``."""
        document = self.document(uri)
        if document is None:
            return None
        source = document.source
        key = (uri, document.version, select)
        entry = self.cache.get(key)
        if entry is None or entry.future.cancelled() or entry.text != source:
            self.engine_runs += 1
            future = asyncio.get_running_loop().run_in_executor(
                self.engine, analyse, source, document.path or uri, select, self.encoding
            )
            entry = self.cache[key] = _Entry(source, future)
        return entry.future

    async def analysis(self, uri: str, select: Selection | None = None) -> tuple[int | None, Analysis] | None:
        """Wait for the analysis of the current version; None when the document changed meanwhile."""
        document = self.document(uri)
        future = self.run(uri, select)
        if document is None or future is None:
            return None
        version = document.version
        # asyncio.wait neither raises when the run is dropped nor cancels the shared
        # run when this waiter is cancelled.
        await asyncio.wait({future})
        if future.cancelled() or future.exception() is not None:
            return None
        return version, future.result()

    # -- diagnostics -------------------------------------------------------------------

    def schedule_publish(self, uri: str, delay: float) -> None:
        pending = self.publishing.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.publishing[uri] = asyncio.ensure_future(self.publish(uri, delay))

    async def publish(self, uri: str, delay: float) -> None:
        try:
            if delay:
                await asyncio.sleep(delay)
            document = self.document(uri)
            if document is None:
                return
            version = document.version
            done = await self.analysis(uri)
            if done is None or self.document(uri) is None or self.document(uri).version != version:
                return  # a newer version has its own publish
            _, analysis = done
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=list(analysis.diagnostics), version=version)
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # never let a notification turn into an error popup
            logger.exception("publishing diagnostics for %s failed", uri)

    # -- code actions ------------------------------------------------------------------

    @property
    def resolves_edits(self) -> bool:
        try:
            support = self.client_capabilities.text_document.code_action.resolve_support  # type: ignore[union-attr]
            return "edit" in support.properties  # type: ignore[union-attr]
        except AttributeError:
            return False

    @property
    def versioned_edits(self) -> bool:
        try:
            return bool(self.client_capabilities.workspace.workspace_edit.document_changes)  # type: ignore[union-attr]
        except AttributeError:
            return False

    def workspace_edit(self, uri: str, version: int | None, edits: tuple[txt.Edit, ...]) -> types.WorkspaceEdit:
        text_edits = [
            types.TextEdit(
                range=types.Range(types.Position(*edit.start), types.Position(*edit.end)),
                new_text=edit.text,
            )
            for edit in edits
        ]
        if self.versioned_edits:
            identifier = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(identifier, text_edits)])
        return types.WorkspaceEdit(changes={uri: text_edits})

    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        only = [str(getattr(k, "value", k)) for k in params.context.only] if params.context.only else None
        want_one = kind_wanted(FLATTEN_ONE_KIND.value, only)
        want_all = kind_wanted(FLATTEN_ALL_KIND, only)
        if not (want_one or want_all):
            return []
        done = await self.analysis(uri)
        if done is None:
            return []
        version, analysis = done
        if analysis.result.error is not None:
            return []
        lazy = self.resolves_edits
        actions: list[types.CodeAction] = []
        if want_one:
            first, last = params.range.start.line, params.range.end.line
            hits = [t for t in analysis.targets if t.first_line <= last and first <= t.last_line]
            for target in sorted(hits, key=lambda t: t.last_line - t.first_line):  # innermost first
                action = types.CodeAction(
                    title=f"Flatten `{target.name}`",
                    kind=FLATTEN_ONE_KIND,
                    diagnostics=[target.diagnostic],
                    data=_action_data(uri, version, target.name, target.select),
                )
                if not lazy:
                    action = await self.resolve(action)
                    if action.edit is None:
                        continue
                actions.append(action)
        if want_all and analysis.result.changed:
            action = types.CodeAction(
                title=FLATTEN_ALL_TITLE,
                kind=FLATTEN_ALL_KIND,
                data=_action_data(uri, version, None, None),
            )
            if not lazy:  # the whole-file edits are already computed: no engine run
                action.edit = self.workspace_edit(uri, version, analysis.edits)
            actions.append(action)
        return actions

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        """Fill in ``edit`` by running the engine with the action's selection (cached)."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str):
            return action
        select = _selection_from(data.get("select"))
        done = None
        for _ in range(3):  # a change while the run is queued drops it: retry on the new version
            done = await self.analysis(uri, select)
            if done is not None or self.document(uri) is None:
                break
        if done is None:
            logger.info("no edit for %r: %s is not open or changed meanwhile", action.title, uri)
            return action
        version, analysis = done
        result = analysis.result
        name = data.get("name")
        if result.error is not None or not result.changed or (name is not None and name not in result.flattened):
            # the file changed under the action: offer no edit rather than a wrong one
            logger.info("no edit for %r: the engine flattens nothing there now", action.title)
            return action
        action.edit = self.workspace_edit(uri, version, analysis.edits)
        return action


def _action_data(uri: str, version: int | None, name: str | None, select: Selection | None) -> dict:
    selection = None
    if select is not None:
        selection = {"name": select.name} if select.name is not None else {"line": select.line}
    return {"uri": uri, "version": version, "name": name, "select": selection}


def _selection_from(data: Any) -> Selection | None:
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("name"), str):
        return Selection(name=data["name"])
    if isinstance(data.get("line"), int):
        return Selection(line=data["line"])
    return None


def create_server() -> InlinerLanguageServer:
    server = InlinerLanguageServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if server.is_python(params.text_document):
            server.python_documents.add(params.text_document.uri)
            server.schedule_publish(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.python_documents:
            server.forget(uri, keep_version=params.text_document.version)
            server.schedule_publish(uri, server.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.python_documents:
            server.python_documents.discard(uri)
            server.forget(uri, everything=True)
            pending = server.publishing.pop(uri, None)
            if pending is not None:
                pending.cancel()
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[FLATTEN_ONE_KIND, FLATTEN_ALL_KIND],
            resolve_provider=True,
        ),
    )
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            return await server.code_actions(params)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("code actions failed")
            return []

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(params: types.CodeAction) -> types.CodeAction:
        try:
            return await server.resolve(params)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("resolving a code action failed")
            return params

    @server.feature(STATS_METHOD)
    def stats(params: Any = None) -> dict:
        """How often the engine ran and what is cached: for tests and bug reports."""
        return {
            "engineRuns": server.engine_runs,
            "cached": len(server.cache),
            "documents": len(server.python_documents),
        }

    @server.feature(types.SHUTDOWN)
    def on_shutdown(params: None = None) -> None:
        server.shutdown_requested = True
        for task in server.publishing.values():
            task.cancel()
        server.engine.shutdown(wait=False, cancel_futures=True)

    @server.feature(types.EXIT)
    def on_exit(params: None = None) -> None:
        server.exit_requested = True

    return server
