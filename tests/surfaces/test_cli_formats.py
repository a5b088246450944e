"""Machine-readable reports: --output-format json/github/sarif, --statistics, --fail-on-refusal.

These run the real engine on small modules (a flattenable Function, two refusals, a
file that does not parse), so the positions and codes are the engine's own. The SARIF
log is validated against the official SARIF 2.1.0 schema (tests/data, see
SARIF_SCHEMA_SOURCE.md there).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

import pytest

from inliner.cli import formats, main
from inliner.engine.codes import Code
from inliner.engine.diagnostics import Diagnostic, Severity

jsonschema = pytest.importorskip("jsonschema", reason="the test extra installs jsonschema")

DATA = Path(__file__).parent / "data"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

GOOD = """\
import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2
"""

REFUSED = """\
import torch


def stash(ctx, x):
    x.ctx = ctx


class Helper(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        stash(ctx, x)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.x


class Writes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.n = 1
        return x + 1

    @staticmethod
    def backward(ctx, g):
        ctx.saved_tensors = (g,)
        return g
"""

BROKEN = "import torch\n\n\nclass Bad(torch.autograd.Function):\n    def forward(ctx, x:\n"


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "good.py").write_text(GOOD)
    (tmp_path / "pkg" / "refused.py").write_text(REFUSED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["-j", "1", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    assert validator_class is jsonschema.Draft4Validator  # the schema says draft-04
    validator_class.check_schema(schema)
    return validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)


# --- JSON lines ---------------------------------------------------------------------------


def test_json_lines_on_stdout_with_positions_and_fixable(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--check", "--output-format", "json", "pkg")
    assert status == 1  # --check: good.py would change
    records = [json.loads(line) for line in out.splitlines()]
    assert [(r["path"], r["code"], r["name"]) for r in records] == [
        ("pkg/good.py", "INL001", "Double"),
        ("pkg/refused.py", "INL102", "Helper"),
        ("pkg/refused.py", "INL101", "Writes"),
    ]
    good, helper, writes = records
    assert good["fixable"] is True and good["severity"] == "info"
    assert helper["fixable"] is False and helper["severity"] == "warning"
    assert (good["line"], good["column"], good["end_line"], good["end_column"]) == (4, 7, 4, 13)  # `Double`
    assert (helper["line"], helper["column"], helper["end_line"], helper["end_column"]) == (11, 15, 11, 18)  # `ctx`
    assert "Helper" in helper["message"] and "Writes" in writes["message"]
    assert set(good) == {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "severity",
        "message",
        "name",
        "fixable",
    }
    # stdout is the report only; the per-file lines and the summary stay on stderr
    assert "would rewrite pkg/good.py" in err and "Functions: 1 would be flattened, 2 refused." in err
    assert "INL102" not in err


def test_json_carries_info_whatever_the_verbosity_text_does_not(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "--check", "-q", "--output-format", "json", "pkg/good.py")
    assert [json.loads(line)["code"] for line in out.splitlines()] == ["INL001"]
    _, out, err = run(capsys, "--check", "pkg/good.py")
    assert out == "" and "INL001" not in err


def test_json_parse_error_has_a_position(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (proj / "pkg" / "broken.py").write_text(BROKEN)
    status, out, _ = run(capsys, "--check", "--output-format", "json", "pkg/broken.py")
    assert status == 123
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["code"] == "INL000" and record["severity"] == "error" and record["line"] == 5
    # Python gives no end for "'(' was never closed": an empty range at the start
    assert (record["end_line"], record["end_column"]) == (record["line"], record["column"])

    # where Python gives a range, it is carried (columns in characters, end exclusive)
    (proj / "pkg" / "broken2.py").write_text(
        "import torch\n\n\nclass F(torch.autograd.Function):\n    pass\n\n\né = (1,\n 2 3)\n"
    )
    _, out, _ = run(capsys, "--check", "--output-format", "json", "pkg/broken2.py")
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert (record["line"], record["column"], record["end_line"], record["end_column"]) == (9, 2, 9, 5)
    (proj / "pkg" / "broken3.py").write_text(
        "import torch\n\n\nclass F(torch.autograd.Function):\n    def forward(ctx, é, é):\n        pass\n"
    )
    _, out, _ = run(capsys, "--check", "--output-format", "json", "pkg/broken3.py")
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert "duplicate argument" in record["message"]
    assert (record["line"], record["column"], record["end_line"], record["end_column"]) == (5, 25, 5, 26)


def test_stdin_with_check(proj: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(REFUSED.encode()), encoding="utf-8"))
    status, out, _ = run(capsys, "--check", "--output-format", "json", "--stdin-filename", "x/y.py", "-")
    assert status == 0
    assert [json.loads(line)["path"] for line in out.splitlines()] == ["x/y.py", "x/y.py"]


# --- GitHub annotations -------------------------------------------------------------------


def test_github_annotations(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--check", "--output-format", "github", "pkg/refused.py")
    assert status == 0
    assert out.splitlines() == [
        (
            "::warning file=pkg/refused.py,line=11,col=15,endLine=11,endColumn=18,title=INL102::"
            "class Helper: `ctx` is stored elsewhere or used as a value (in `stash`, which Helper hands `ctx` to);"
            " left untouched"
        ),
        (
            "::warning file=pkg/refused.py,line=27,col=9,endLine=27,endColumn=26,title=INL101::"
            "class Writes: `ctx.saved_tensors` is assigned, an attribute torch itself uses; left untouched"
        ),
    ]
    # info diagnostics become notices, with -v as in the text format
    _, out, _ = run(capsys, "--check", "-v", "--output-format", "github", "pkg/good.py")
    assert out.startswith("::notice file=pkg/good.py,line=4,col=7,endLine=4,endColumn=13,title=INL001::")


def test_github_escaping_as_the_actions_toolkit() -> None:
    d = Diagnostic(
        "dir,a/b:c%d.py", 3, 5, "INL102", "50% of\r\nlines: a,b", Severity.ERROR, "F", end_line=3, end_column=9
    )
    assert formats.github_annotation(d) == (
        "::error file=dir%2Ca/b%3Ac%25d.py,line=3,col=5,endLine=3,endColumn=9,title=INL102::50%25 of%0D%0Alines: a,b"
    )
    assert formats.escape_data("a%0A\n:,") == "a%250A%0A:,"
    assert formats.escape_property("a%0A\n:,") == "a%250A%0A%3A%2C"


def test_github_annotation_for_a_path_with_comma_and_colon(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (proj / "odd,name:1.py").write_text(REFUSED)
    _, out, _ = run(capsys, "--check", "--output-format", "github", "odd,name:1.py")
    assert out.splitlines()[0].startswith("::warning file=odd%2Cname%3A1.py,line=11,col=15,")


# --- SARIF ----------------------------------------------------------------------------------


def test_vendored_schema_is_the_recorded_one() -> None:
    digest = hashlib.sha256((DATA / "sarif-schema-2.1.0.json").read_bytes()).hexdigest()
    assert digest == SCHEMA_SHA256, "tests/surfaces/data/sarif-schema-2.1.0.json changed: see SARIF_SCHEMA_SOURCE.md"


def test_sarif_validates_against_the_official_schema(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (proj / "pkg" / "broken.py").write_text(BROKEN)
    absolute = proj / "abs dir" / "m.py"
    absolute.parent.mkdir()
    absolute.write_text(REFUSED)
    status, out, err = run(capsys, "--check", "--output-format", "sarif", "pkg", str(absolute))
    assert status == 123  # broken.py failed
    assert "error: cannot process pkg/broken.py" in err
    log = json.loads(out)
    sarif_validator().validate(log)

    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    driver = run_["tool"]["driver"]
    assert driver["name"] == "inliner"
    assert [rule["id"] for rule in driver["rules"]] == sorted(c.value for c in Code)
    results = run_["results"]
    # files in path order: the absolute one sorts first
    assert [r["ruleId"] for r in results] == ["INL102", "INL101", "INL000", "INL001", "INL102", "INL101"]
    for result in results:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    helper = results[4]
    assert helper["level"] == "warning" and "Helper" in helper["message"]["text"]
    location = helper["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {"uri": "pkg/refused.py", "uriBaseId": "%SRCROOT%"}
    assert location["physicalLocation"]["region"] == {
        "startLine": 11,
        "startColumn": 15,
        "endLine": 11,
        "endColumn": 18,
    }
    assert location["logicalLocations"] == [{"name": "Helper", "kind": "type"}]
    assert results[3]["level"] == "note" and results[2]["level"] == "error"
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": absolute.as_uri()}
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == Path.cwd().as_uri() + "/"
    (invocation,) = run_["invocations"]
    assert invocation["executionSuccessful"] is False
    assert "pkg/broken.py" in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_sarif_with_nothing_to_report_is_a_valid_empty_run(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (proj / "plain.py").write_text("x = 1\n")
    status, out, _ = run(capsys, "--output-format", "sarif", "plain.py")
    assert status == 0
    log = json.loads(out)
    sarif_validator().validate(log)
    assert log["runs"][0]["results"] == [] and log["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_the_schema_check_can_fail() -> None:
    """The validation above is not vacuous: a log that breaks the schema is refused."""
    validator = sarif_validator()
    good = formats.sarif_log([Diagnostic("a.py", 1, 1, "INL102", "m", Severity.WARNING, "F", 1, 2)], cwd="/")
    validator.validate(good)
    for breaks in (
        lambda log: log.pop("version"),
        lambda log: log["runs"][0]["results"][0].update(level="warn"),
        lambda log: log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"].update(startLine=0),
        lambda log: log["runs"][0]["tool"]["driver"].pop("name"),
    ):
        bad = json.loads(json.dumps(good))
        breaks(bad)
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)


# --- statistics, exit codes, usage ---------------------------------------------------------


def test_statistics_text_and_json(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (proj / "pkg" / "more.py").write_text(REFUSED.replace("Helper", "Helper2").replace("Writes", "Writes2"))
    status, out, err = run(capsys, "--check", "--statistics", "pkg")
    assert status == 1
    assert out == (f"2\tINL101\t{Code('INL101').summary}\n2\tINL102\t{Code('INL102').summary}\n")
    assert "INL102" not in err and "Functions: 1 would be flattened, 4 refused." in err
    _, out, _ = run(capsys, "--check", "--statistics", "-v", "pkg")
    assert out.splitlines()[-1] == f"1\tINL001\t[*] {Code('INL001').summary}"
    assert out.splitlines()[0] == f"2\tINL101\t[ ] {Code('INL101').summary}"
    _, out, _ = run(capsys, "--check", "--statistics", "--output-format", "json", "pkg")
    assert json.loads(out) == [
        {"code": "INL101", "summary": Code("INL101").summary, "count": 2, "fixable": False},
        {"code": "INL102", "summary": Code("INL102").summary, "count": 2, "fixable": False},
        {"code": "INL001", "summary": Code("INL001").summary, "count": 1, "fixable": True},
    ]


def test_fail_on_refusal(proj: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--check", "pkg/refused.py")[0] == 0
    assert run(capsys, "--check", "--fail-on-refusal", "pkg/refused.py")[0] == 1
    assert run(capsys, "--check", "--fail-on-refusal", "pkg/good.py")[0] == 1  # --check: would change
    assert run(capsys, "--fail-on-refusal", "pkg/good.py")[0] == 0  # rewritten, nothing refused
    assert run(capsys, "--check", "--fail-on-refusal", "pkg/good.py")[0] == 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--diff", "--output-format", "json", "pkg"], "--diff would print too"),
        (["--diff", "--statistics", "pkg"], "--diff would print too"),
        (["--output-format", "sarif", "-"], "add --check"),
        (["--statistics", "--output-format", "github", "pkg"], "--statistics prints text or json"),
    ],
)
def test_report_on_stdout_excludes_other_stdout_payload(
    proj: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "" and message in err
