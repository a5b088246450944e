"""Overriding the compile kind: the pragma, ``[tool.inliner] compile``, and the surfaces that read them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inliner import flatten
from inliner.cli import main
from inliner.engine.analysis.compile_overrides import CompileOverrides, engine_options, find_pragma, module_name
from tests.support.paths import ROOT

NUMPY_FN = """\
import numpy as np
import torch


class NumpySin(torch.autograd.Function){pragma}
    @staticmethod
    def forward(ctx, x):
        result = np.sin(x.numpy())
        return torch.from_numpy(result)

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Pure(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3
"""


def numpy_module(pragma: str = "") -> str:
    return NUMPY_FN.format(pragma=":" + (f"  # {pragma}" if pragma else ""))


def kinds(source: str, **options) -> dict:
    result = flatten(source, path="ops.py", **options)
    return {name: (kind.kind, kind.reason, kind.origin) for name, kind in result.compile_kinds}


# -- pragmas -------------------------------------------------------------------------------------


def test_without_override_the_engine_decides():
    assert kinds(numpy_module())["NumpySin"] == ("opaque", "forward calls numpy.sin", "inferred")


def test_a_pragma_makes_an_opaque_class_traceable_and_emits_nothing():
    result = flatten(numpy_module("inliner: compile=traceable"), path="ops.py")
    kind = dict(result.compile_kinds)["NumpySin"]
    assert (kind.kind, kind.origin) == ("traceable", "pragma")
    assert "compile_kind" not in result.source
    info = next(d for d in result.diagnostics if d.name == "NumpySin")
    assert info.message.endswith(
        "compile kind traceable: set by the pragma on line 5; the engine found: forward calls numpy.sin"
    )


@pytest.mark.parametrize("spelling", ["side_effecting", "side-effecting"])
def test_a_pragma_can_ask_for_an_eager_island(spelling):
    result = flatten(numpy_module(f"inliner: compile={spelling}"), path="ops.py")
    assert 'compile_kind="side_effecting"' in result.source
    assert 'compile_reason="set by the pragma on line 5; the engine found: forward calls numpy.sin"' in result.source


def test_a_pragma_applies_to_its_own_class_only():
    assert kinds(numpy_module("inliner: compile=traceable"))["Pure"] == ("traceable", "", "inferred")


@pytest.mark.parametrize(
    "pragma,problem",
    [
        ("inliner: compile=fast", "`compile=fast` is not one of traceable, opaque, side_effecting"),
        ("inliner: complie=opaque", "unknown key `complie` (the only one is `compile`)"),
        ("inliner: opaque", "`opaque` is not `key=value`"),
        ("inliner:", "it says nothing (expected `# inliner: compile=<kind>`)"),
    ],
)
def test_a_bad_pragma_is_a_warning_and_is_ignored(pragma, problem):
    result = flatten(numpy_module(pragma), path="ops.py")
    assert dict(result.compile_kinds)["NumpySin"].kind == "opaque"  # the engine's own decision
    (warning,) = [d for d in result.diagnostics if d.code == "INL300"]
    assert warning.message == f"class NumpySin: pragma not understood ({problem}); ignored"
    assert (warning.line, warning.column, warning.name) == (5, 43, "NumpySin")


def test_a_pragma_inside_a_string_is_not_a_pragma():
    assert find_pragma(['x = "# inliner: compile=opaque"\n'], 1).kind is None
    assert find_pragma(["class F(Function):  # inliner: compile=opaque\n"], 1).kind == "opaque"


def test_a_pragma_on_a_header_split_over_lines():
    source = numpy_module().replace(
        "class NumpySin(torch.autograd.Function):",
        "class NumpySin(\n    torch.autograd.Function,  # inliner: compile=traceable\n):",
    )
    assert kinds(source)["NumpySin"][0] == "traceable"


def test_a_pragma_on_a_refused_class_is_still_checked():
    source = numpy_module("inliner: compile=nope").replace(
        "    @staticmethod\n    def forward(ctx, x):\n        result", "    def forward(ctx, x):\n        result", 1
    )
    result = flatten(source, path="ops.py")
    assert "NumpySin" in result.refused
    assert [d.code for d in result.diagnostics if d.name == "NumpySin"] == ["INL105", "INL300"]


# -- [tool.inliner] compile -----------------------------------------------------------------------


def test_the_table_by_qualified_name():
    table = CompileOverrides.from_table({"pkg.ops.NumpySin": "traceable", "pkg.ops.Pure": "opaque"})
    got = kinds(numpy_module(), module="pkg.ops", compile_overrides=table)
    assert got["NumpySin"] == (
        "traceable",
        'set by "pkg.ops.NumpySin" in [tool.inliner] compile; the engine found: forward calls numpy.sin',
        "config",
    )
    assert got["Pure"] == ("opaque", 'set by "pkg.ops.Pure" in [tool.inliner] compile', "config")


def test_the_table_needs_the_module_to_match():
    table = CompileOverrides.from_table({"pkg.ops.Pure": "opaque"})
    assert kinds(numpy_module(), module="other", compile_overrides=table)["Pure"][0] == "traceable"


def test_patterns_the_most_specific_wins():
    table = CompileOverrides.from_table({"pkg.*": "side_effecting", "pkg.ops.*": "opaque", "pkg.ops.Pure": "traceable"})
    assert table.lookup("pkg.ops.Pure") == ("traceable", "pkg.ops.Pure")
    assert table.lookup("pkg.ops.Other") == ("opaque", "pkg.ops.*")
    assert table.lookup("pkg.nn.Other") == ("side_effecting", "pkg.*")
    assert table.lookup("other.Other") is None
    assert table.lookup("pkg.make.<locals>.Fn") == ("side_effecting", "pkg.*")


def test_a_pragma_wins_over_the_table():
    table = CompileOverrides.from_table({"pkg.ops.NumpySin": "side_effecting"})
    got = kinds(numpy_module("inliner: compile=traceable"), module="pkg.ops", compile_overrides=table)
    assert got["NumpySin"][::2] == ("traceable", "pragma")


def test_a_class_defined_in_a_function_has_its_qualified_name():
    source = "import torch\n\n\ndef make():\n" + textwrap.indent(
        NUMPY_FN.format(pragma=":").split("\n\n\nclass Pure")[0].split("import torch\n")[1], "    "
    )
    source = "import numpy as np\n" + source + "\n    return NumpySin.apply\n"
    table = CompileOverrides.from_table({"pkg.ops.make.<locals>.NumpySin": "traceable"})
    assert kinds(source, module="pkg.ops", compile_overrides=table)["NumpySin"][0] == "traceable"


@pytest.mark.parametrize(
    "table,message",
    [
        ("fast", "must be a table"),
        ({"pkg.Fn": "fast"}, "'pkg.Fn' = 'fast' is not one of traceable, opaque, side_effecting"),
        ({"pkg.Fn": 1}, "is not one of"),
        ({"pkg Fn": "opaque"}, "is not a qualified name or pattern"),
    ],
)
def test_a_bad_table_is_an_error(table, message):
    with pytest.raises(ValueError, match=message):
        CompileOverrides.from_table(table)


# -- which module a file is ----------------------------------------------------------------------


def test_module_name_follows_packages(tmp_path):
    package = tmp_path / "src" / "pkg" / "sub"
    package.mkdir(parents=True)
    for directory in (package, package.parent):
        (directory / "__init__.py").write_text("")
    (package / "ops.py").write_text("")
    assert module_name(package / "ops.py") == "pkg.sub.ops"
    assert module_name(package / "__init__.py") == "pkg.sub"
    (tmp_path / "script.py").write_text("")
    assert module_name(tmp_path / "script.py") == "script"
    assert module_name(tmp_path / "notes.txt") is None


# -- the surfaces ----------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "ops.py").write_text(numpy_module())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text("[tool.inliner]\n" + textwrap.dedent(body))


def test_cli_reads_the_table(project: Path, capsys: pytest.CaptureFixture[str]):
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.NumpySin" = "traceable"\n"pkg.ops.Pure" = "opaque"\n')
    assert main(["-j", "1", "pkg"]) == 0
    text = (project / "pkg" / "ops.py").read_text()
    assert (
        text.count("compile_kind=") == 1
        and "compile_reason='set by \"pkg.ops.Pure\" in [tool.inliner] compile'" in text
    )


def test_cli_inline_table_spelling(project: Path):
    _pyproject(project, 'compile = { "pkg.ops.*" = "side-effecting" }\n')
    assert main(["-j", "1", "pkg"]) == 0
    assert (project / "pkg" / "ops.py").read_text().count('compile_kind="side_effecting"') == 2


def test_cli_a_bad_table_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]):
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.Pure" = "fast"\n')
    assert main(["pkg"]) == 2
    assert (
        "[tool.inliner] compile: 'pkg.ops.Pure' = 'fast' is not one of traceable, opaque, side_effecting"
        in capsys.readouterr().err
    )
    assert (project / "pkg" / "ops.py").read_text() == numpy_module()


def test_cli_stdin_uses_the_stdin_filename(project: Path):
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.Pure" = "opaque"\n')
    run = subprocess.run(
        [sys.executable, "-m", "inliner", "-", "--stdin-filename", "pkg/ops.py"],
        input=numpy_module(),
        capture_output=True,
        text=True,
        cwd=project,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert run.returncode == 0, run.stderr
    assert "compile_reason='set by \"pkg.ops.Pure\" in [tool.inliner] compile'" in run.stdout


def test_engine_options_for_one_file(project: Path):
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.Pure" = "opaque"\n')
    options = engine_options(project / "pkg" / "ops.py")
    assert options["module"] == "pkg.ops"
    assert options["compile_overrides"].lookup("pkg.ops.Pure") == ("opaque", "pkg.ops.Pure")
    assert engine_options(None) == {"module": None, "compile_overrides": None, "line_length": 88}
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.Pure" = 3\n')
    with pytest.raises(ValueError, match="is not one of"):
        engine_options(project / "pkg" / "ops.py")


def test_the_hook_reads_the_table_and_its_cache_follows_it(project: Path):
    """The import hook applies the table; editing the table rewrites again (the cache key holds it)."""
    script = textwrap.dedent(
        """
        import json, sys, warnings
        warnings.simplefilter("ignore")
        import inliner.hook
        with inliner.hook.install(["pkg"]):
            import pkg.ops
        print(json.dumps({n: getattr(pkg.ops, n).compile_kind for n in ("NumpySin", "Pure")}))
        """
    )
    env = {**__import__("os").environ, "PYTHONPATH": f"{project}:{ROOT}"}

    def run() -> str:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert run() == '{"NumpySin": "opaque", "Pure": "traceable"}'
    _pyproject(project, '[tool.inliner.compile]\n"pkg.ops.*" = "side_effecting"\n')
    assert run() == '{"NumpySin": "side_effecting", "Pure": "side_effecting"}'
    assert run() == '{"NumpySin": "side_effecting", "Pure": "side_effecting"}'  # from the cache
