"""Machine-readable diagnostics: JSON lines, GitHub workflow annotations, SARIF 2.1.0, statistics.

Pure functions from ``Diagnostic`` records to text; ``report`` decides where it goes
(stdout: a machine format is the run's payload). Positions are 1-based lines and
1-based columns counted in characters (Unicode code points); an end position is
exclusive, as ruff's and SARIF's are. A diagnostic without an end position (a parse
error may lack one) gets an empty range at its start.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from urllib.parse import quote

from inliner import __version__
from inliner.engine.codes import Code
from inliner.engine.diagnostics import Diagnostic

FORMATS = ("text", "json", "github", "sarif")

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
SRCROOT = "%SRCROOT%"


def severity(d: Diagnostic) -> str:
    return str(getattr(d.severity, "value", d.severity))


def fixable(d: Diagnostic) -> bool:
    """True when inliner itself rewrites what the diagnostic is about (INL001: it can be flattened)."""
    return d.code == Code.FLATTENED


def end(d: Diagnostic) -> tuple[int, int]:
    if d.end_line is None or d.end_column is None:
        return d.line, d.column
    return d.end_line, d.end_column


def sort_key(d: Diagnostic) -> tuple[int, int, str, str]:
    return (d.line, d.column, d.code, d.message)


# --- JSON lines -----------------------------------------------------------------------


def json_record(d: Diagnostic) -> dict[str, object]:
    end_line, end_column = end(d)
    return {
        "path": d.path,
        "line": d.line,
        "column": d.column,
        "end_line": end_line,
        "end_column": end_column,
        "code": d.code,
        "severity": severity(d),
        "message": d.message,
        "name": d.name,
        "fixable": fixable(d),
    }


def json_line(d: Diagnostic) -> str:
    return json.dumps(json_record(d), ensure_ascii=False)


# --- GitHub workflow commands ------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as @actions/core's ``escapeData`` does."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value, escaped as @actions/core's ``escapeProperty`` does."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(d: Diagnostic) -> str:
    """``::warning file=...,line=...,col=...,endLine=...,endColumn=...,title=CODE::message``."""
    end_line, end_column = end(d)
    properties = {
        "file": d.path,
        "line": d.line,
        "col": d.column,
        "endLine": end_line,
        "endColumn": end_column,
        "title": d.code,
    }
    rendered = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{_GITHUB_COMMAND.get(severity(d), 'warning')} {rendered}::{escape_data(d.message)}"


# --- SARIF 2.1.0 ---------------------------------------------------------------------------


def _rule_level(code: str) -> str:
    return "error" if code == Code.PARSE_ERROR else "note" if code == Code.FLATTENED else "warning"


def sarif_rules() -> list[dict[str, object]]:
    """One reportingDescriptor per INL code, in code order (a result's ruleIndex points here)."""
    return [
        {
            "id": code.value,
            "shortDescription": {"text": code.summary},
            "defaultConfiguration": {"level": _rule_level(code)},
        }
        for code in sorted(Code, key=lambda c: c.value)
    ]


def artifact_location(path: str) -> dict[str, str]:
    """A relative path stays relative to ``%SRCROOT%`` (the current directory); an absolute one is a file URI."""
    pure = PurePath(path)
    if pure.is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(pure.as_posix()), "uriBaseId": SRCROOT}


def sarif_result(d: Diagnostic, rule_index: dict[str, int]) -> dict[str, object]:
    end_line, end_column = end(d)
    result: dict[str, object] = {
        "ruleId": d.code,
        "level": _SARIF_LEVEL.get(severity(d), "warning"),
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(d.path),
                    "region": {
                        "startLine": d.line,
                        "startColumn": d.column,
                        "endLine": end_line,
                        "endColumn": end_column,
                    },
                },
                **({"logicalLocations": [{"name": d.name, "kind": "type"}]} if d.name else {}),
            }
        ],
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    return result


def sarif_log(
    diagnostics: Iterable[Diagnostic], *, failures: Sequence[tuple[str, str]] = (), cwd: str | None = None
) -> dict[str, object]:
    """A SARIF 2.1.0 log with one run: every INL rule, one result per diagnostic.

    ``failures`` are (path, reason) for files that could not be processed at all: the
    run's invocation then says it did not succeed and names them.
    """
    rules = sarif_rules()
    rule_index = {str(rule["id"]): index for index, rule in enumerate(rules)}
    root = Path(cwd if cwd is not None else os.getcwd()).as_uri().rstrip("/") + "/"
    invocation: dict[str, object] = {"executionSuccessful": not failures}
    if failures:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "error",
                "message": {"text": f"cannot process {path}: {reason}"},
                "locations": [{"physicalLocation": {"artifactLocation": artifact_location(path)}}],
            }
            for path, reason in failures
        ]
    run = {
        "tool": {
            "driver": {
                "name": "inliner",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": root}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": [sarif_result(d, rule_index) for d in diagnostics],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def sarif_text(
    diagnostics: Iterable[Diagnostic], *, failures: Sequence[tuple[str, str]] = (), cwd: str | None = None
) -> str:
    return json.dumps(sarif_log(diagnostics, failures=failures, cwd=cwd), indent=2, ensure_ascii=False) + "\n"


# --- statistics ------------------------------------------------------------------------------


def statistics(diagnostics: Iterable[Diagnostic]) -> list[dict[str, object]]:
    """Counts per code, most frequent first (then by code), as ruff's ``--statistics``."""
    counts = Counter(d.code for d in diagnostics)
    return [
        {"code": str(code), "summary": Code.of(code).summary, "count": count, "fixable": code == Code.FLATTENED}
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def statistics_text(rows: list[dict[str, object]]) -> str:
    """``count<TAB>code<TAB>[*] summary`` lines as ruff prints them (``[*]``: inliner rewrites it)."""
    if not rows:
        return ""
    width = max(len(str(row["count"])) for row in rows)
    any_fixable = any(row["fixable"] for row in rows)
    lines = []
    for row in rows:
        mark = ("[*] " if row["fixable"] else "[ ] ") if any_fixable else ""
        lines.append(f"{row['count']!s:>{width}}\t{row['code']}\t{mark}{row['summary']}")
    return "\n".join(lines) + "\n"


def statistics_json(rows: list[dict[str, object]]) -> str:
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
