"""The language server: engine results as LSP diagnostics and code actions.

Every answer comes from ``inliner.engine.flatten`` -- the same call the command
line makes -- so codes, messages and rewritten text agree with it exactly. The
engine's result carries what the server shows: diagnostics, the edits turning the
text into the new one, and the classes and op calls it looked at (``targets``).

Cost model, for documents edited a keystroke at a time:

- each document keeps a ``FlattenCache``: a new version lowers again only the
  classes and op calls whose text changed;
- diagnostics come from a ``diagnostics_only`` run (no code printed); the full run,
  which prints the code the actions offer, runs when the document has been idle for
  ``IDLE_SECONDS`` or when an action needs it, and its diagnostics are published
  again only if printing found an engine error the quick run could not see;
- one engine thread runs everything; a newer version drops the runs queued for
  older ones and stops the running one at its next class. So keystrokes faster
  than the analysis are analysed once, at the latest version, and a keystroke after
  a pause is analysed at once (no timer delays it);
- code actions are listed from the cached analysis; the edit of one class comes
  from a run selecting it, which reuses the cached lowering.

Diagnostics are published in version order: one is sent only while its version is
the document's current one, checked on the event loop that also applies changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from inliner import __version__
from inliner.engine import (
    Cancelled,
    FlattenCache,
    FlattenResult,
    Selection,
    TextEdit,
    flatten,
)
from inliner.engine.analysis.compile_overrides import engine_options
from inliner.engine.codes import INTERNAL_CODES, Code
from inliner.engine.diagnostics import Diagnostic, Severity
from inliner.lsp import text as txt

logger = logging.getLogger("inliner.lsp")

#: Kind of the per-class action.
FLATTEN_ONE_KIND = types.CodeActionKind.RefactorRewrite
#: Kind of the whole-file action (a ``source.`` subkind, so editors list it with source actions).
FLATTEN_ALL_KIND = "source.flattenAll.inliner"
FLATTEN_ALL_TITLE = "Flatten all autograd Functions in this file"

#: Custom request answering engine statistics (see ``create_server``).
STATS_METHOD = "inliner/stats"

#: The full run (printed code, for actions) starts after this long without changes.
IDLE_SECONDS = 0.5

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
    """One engine run on one version of a document, in LSP terms."""

    result: FlattenResult
    diagnostics: tuple[types.Diagnostic, ...] = ()
    edits: tuple[txt.Edit, ...] = ()  # turn the text into ``result.source`` (none for a quick run)
    targets: tuple[Target, ...] = ()


# ----------------------------------------------------------------------------- pure part


def analyse(
    text: str,
    path: str,
    select: Selection | None,
    encoding: str,
    *,
    cache: FlattenCache | None = None,
    diagnostics_only: bool = False,
    stop: Callable[[], bool] | None = None,
) -> Analysis:
    """Run the engine once and put its diagnostics, edits and targets in LSP terms.

    A file the engine cannot process gets nothing offered; of its diagnostics only
    an internal error (INL002, also logged) is reported: a syntax error is the
    business of the user's other tools, and is usually just half-typed code.
    """
    try:
        options = engine_options(path)
    except ValueError as exc:  # a bad [tool.inliner] compile table: said once per analysis, then ignored
        logger.error("%s", exc)
        options = {}
    result = flatten(
        text, path=path, select=select, cache=cache, diagnostics_only=diagnostics_only, stop=stop, **options
    )
    for diagnostic in result.diagnostics:
        if diagnostic.code in INTERNAL_CODES:
            logger.error("%s", diagnostic.format())
    lines = txt.split_lines(text)
    if result.error is not None:
        internal = (d for d in result.diagnostics if d.code == Code.INTERNAL_ERROR)
        return Analysis(result, tuple(lsp_diagnostic(d, lines, encoding) for d in internal))
    diagnostics = tuple(lsp_diagnostic(d, lines, encoding) for d in result.diagnostics)
    edits = tuple(lsp_edits(result.edits, lines, encoding))
    as_lsp = {id(d): lsp for d, lsp in zip(result.diagnostics, diagnostics)}
    targets = tuple(
        Target(t.name, t.first_line - 1, t.last_line - 1, t.select, as_lsp[id(t.diagnostic)])
        for t in result.targets
        if t.flattened
    )
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


def lsp_edits(edits: tuple[TextEdit, ...], lines: list[str], encoding: str) -> list[txt.Edit]:
    """The engine's edits (offsets into the text) as LSP edits."""
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return [
        txt.Edit(txt.at_offset(lines, starts, e.start, encoding), txt.at_offset(lines, starts, e.end, encoding), e.text)
        for e in edits
    ]


def kind_wanted(kind: str, only: list[str] | None) -> bool:
    """LSP kind filtering: ``refactor`` asks for ``refactor.rewrite`` too."""
    return not only or any(kind == o or kind.startswith(o + ".") for o in only)


# ----------------------------------------------------------------------------- the server


@dataclass(eq=False)
class Document:
    """An open Python document: its current text, and the engine's work on it."""

    uri: str
    path: str
    text: str
    version: int | None
    cache: FlattenCache = field(default_factory=FlattenCache)  # used by the engine thread only
    #: runs of the current version: ("quick" | "full" | "select", selection) -> future of an Analysis
    runs: dict[tuple[str, Selection | None], asyncio.Future] = field(default_factory=dict)
    published: tuple[types.Diagnostic, ...] | None = None  # for the current version

    def update(self, text: str, version: int | None) -> None:
        """A new version: the runs of the old one are dropped (queued ones never start)."""
        self.text, self.version, self.published = text, version, None
        for future in self.runs.values():
            future.cancel()
        self.runs.clear()


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
        self.documents: dict[str, Document] = {}
        self.publishing: dict[str, asyncio.Task] = {}
        self.idle = IDLE_SECONDS
        self.shutdown_requested = False
        self.exit_requested = False
        self.engine_runs: dict[str, int] = {"quick": 0, "full": 0, "select": 0}  # runs requested

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
        try:
            encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        except RuntimeError:  # not initialized (a test driving the server directly)
            encoding = types.PositionEncodingKind.Utf16
        return str(getattr(encoding, "value", encoding))

    def is_python(self, document: types.TextDocumentItem) -> bool:
        uri = document.uri
        if uri.endswith(".pyi"):  # stubs have no bodies to flatten
            return False
        return document.language_id == "python" or (not document.language_id and uri.endswith(".py"))

    def opened(self, uri: str, path: str, text: str, version: int | None) -> None:
        self.documents[uri] = Document(uri, path, text, version)
        self.schedule_publish(uri)

    def changed(self, uri: str, text: str, version: int | None) -> None:
        document = self.documents.get(uri)
        if document is None:
            return
        document.update(text, version)
        self.schedule_publish(uri)

    def closed(self, uri: str) -> None:
        document = self.documents.pop(uri, None)
        if document is None:
            return
        document.update("", None)
        pending = self.publishing.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- engine runs (shared, cached) ---------------------------------------------------

    def run(self, document: Document, kind: str, select: Selection | None = None) -> asyncio.Future:
        """The (possibly still running) analysis of the document's current version."""
        key = (kind, select)
        future = document.runs.get(key)
        if future is None or future.cancelled():
            self.engine_runs[kind] += 1
            text, version, encoding = document.text, document.version, self.encoding

            def stale() -> bool:  # read on the engine thread; a newer version makes this run useless
                return document.version != version or document.text is not text

            def job() -> Analysis | None:
                if stale():
                    return None
                try:
                    quick = kind == "quick"
                    return analyse(
                        text, document.path, select, encoding, cache=document.cache, diagnostics_only=quick, stop=stale
                    )
                except Cancelled:
                    return None

            future = document.runs[key] = asyncio.get_running_loop().run_in_executor(self.engine, job)
        return future

    async def analysis(
        self, uri: str, kind: str = "quick", select: Selection | None = None
    ) -> tuple[int | None, Analysis] | None:
        """The analysis of the current version; None when the document changed (or closed) meanwhile."""
        document = self.documents.get(uri)
        if document is None:
            return None
        version = document.version
        if kind == "quick" and ("full", None) in document.runs and document.runs[("full", None)].done():
            kind = "full"  # the full run answers everything the quick one does
        future = self.run(document, kind, select)
        # asyncio.wait neither raises when the run is dropped nor cancels the shared
        # run when this waiter is cancelled.
        await asyncio.wait({future})
        if future.cancelled():
            return None
        if future.exception() is not None:  # a server bug (the engine itself never raises)
            logger.error("analysing %s failed", uri, exc_info=future.exception())
            return None
        if future.result() is None:
            return None
        if self.documents.get(uri) is not document or document.version != version:
            return None
        return version, future.result()

    # -- diagnostics -------------------------------------------------------------------

    def schedule_publish(self, uri: str) -> None:
        pending = self.publishing.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.publishing[uri] = asyncio.ensure_future(self.publish(uri))

    async def publish(self, uri: str) -> None:
        """Publish the quick run's diagnostics, then (once idle) the full run's if they differ."""
        try:
            done = await self.analysis(uri, "quick")
            if done is None:
                return  # a newer version has its own publish
            self.send_diagnostics(uri, *done)
            await asyncio.sleep(self.idle)
            done = await self.analysis(uri, "full")
            if done is not None:
                self.send_diagnostics(uri, *done)
        except asyncio.CancelledError:
            raise
        except Exception:  # never let a notification turn into an error popup
            logger.exception("publishing diagnostics for %s failed", uri)

    def send_diagnostics(self, uri: str, version: int | None, analysis: Analysis) -> None:
        """Publish ``analysis`` if it is of the current version and says something new."""
        document = self.documents.get(uri)
        if document is None or document.version != version or document.published == analysis.diagnostics:
            return
        document.published = analysis.diagnostics
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=list(analysis.diagnostics), version=version)
        )

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
        done = await self.analysis(uri, "quick")
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
        if want_all and analysis.result.flattened:
            action = types.CodeAction(
                title=FLATTEN_ALL_TITLE,
                kind=FLATTEN_ALL_KIND,
                data=_action_data(uri, version, None, None),
            )
            if not lazy:
                action = await self.resolve(action)
            if action.edit is not None or lazy:
                actions.append(action)
        return actions

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        """Fill in ``edit`` from the full run (the whole file) or a run selecting one class."""
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str):
            return action
        select = _selection_from(data.get("select"))
        kind = "full" if select is None else "select"
        done = None
        for _ in range(3):  # a change while the run is queued drops it: retry on the new version
            done = await self.analysis(uri, kind, select)
            if done is not None or uri not in self.documents:
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


#: Flattened once at start-up, so the first document opened does not pay for the engine's
#: first run (its imports, libcst's parser, what ``inliner.engine.walk`` learns per node type).
_WARM_UP = """\
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_backward(x)
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.k + x, None
"""


def create_server() -> InlinerLanguageServer:
    flatten(_WARM_UP, diagnostics_only=True)
    server = InlinerLanguageServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if server.is_python(item):
            document = server.workspace.get_text_document(item.uri)
            server.opened(item.uri, document.path or item.uri, document.source, item.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.documents:
            server.changed(uri, server.workspace.get_text_document(uri).source, params.text_document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        server.closed(params.text_document.uri)

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
        """How often the engine ran and what it reused: for tests and bug reports."""
        caches = [d.cache for d in server.documents.values()]
        return {
            "engineRuns": sum(server.engine_runs.values()),
            "runs": dict(server.engine_runs),
            "lowerings": {"reused": sum(c.hits for c in caches), "computed": sum(c.misses for c in caches)},
            "documents": len(server.documents),
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
