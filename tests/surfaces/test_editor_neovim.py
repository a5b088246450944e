"""The language server in a real editor: headless Neovim's own LSP client, configured as a user would.

Neovim (``nvim --headless -u NONE``) loads the configuration users copy,
editors/neovim/inliner-0.7.lua (Debian 12 ships Neovim 0.7.2), and
tests/surfaces/neovim_driver.lua plays a user's steps: open real files, wait for the
diagnostics, type, pick **Flatten `Name`** or **Flatten all** in the code-action menu
(``vim.lsp.buf.code_action()``: the editor asks for the actions, resolves the chosen one
with ``codeAction/resolve`` and applies the edit itself), write the buffer. This test
checks what the editor recorded: the diagnostics as Neovim holds them (codes, byte
ranges, severities, the command line's messages), the menus offered, and each buffer
after an action against ``python -m inliner -`` on the same text.

Every wait in the driver is bounded (``STEP_TIMEOUT_MS``) and so is the editor's whole run
(``RUN_TIMEOUT``): a hung editor or server fails the test instead of hanging CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from inliner.lsp.server import FLATTEN_ALL_TITLE
from tests.support.paths import ROOT

NVIM = os.environ.get("INLINER_TEST_NVIM") or shutil.which("nvim")  # the variable tries another Neovim
CONFIG_07 = ROOT / "editors" / "neovim" / "inliner-0.7.lua"
CONFIG = ROOT / "editors" / "neovim" / "inliner.lua"
DRIVER = Path(__file__).with_name("neovim_driver.lua")
STEP_TIMEOUT_MS = 60_000
RUN_TIMEOUT = 300

needs_nvim = pytest.mark.skipif(
    NVIM is None,
    reason="nvim is not installed, and .ci/run could not install it (apt-get install neovim)",
)


def nvim_version() -> tuple[int, int]:
    """(major, minor) of ``NVIM``, from the first line of ``nvim --version`` ("NVIM v0.7.2")."""
    assert NVIM is not None
    first = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=60).stdout.split("\n")[0]
    major, minor = re.match(r"NVIM v(\d+)\.(\d+)", first).groups()  # type: ignore[union-attr]
    return int(major), int(minor)


#: The configurations users copy, with the first Neovim each is for.
CONFIGS = [pytest.param(CONFIG_07, (0, 7), id="nvim-0.7"), pytest.param(CONFIG, (0, 8), id="nvim-0.8+")]

SCALE = '''\
"""One Function the engine can flatten."""
import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def scaled(x):
    label = "😀"; return Scale.apply(x, 2.0)  # an edit after an astral character: UTF-16 columns
'''

REFUSED = '''\
"""One Function the engine must leave alone: ctx outlives the call."""
import torch

STASHED = []


def keep(ctx):
    STASHED.append(ctx)


class Escapes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        _ = "😀"; keep(ctx)
        ctx.scale = 2.0
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale


def escaped(x):
    return Escapes.apply(x)
'''

SEVERAL = '''\
"""Three Functions: two the engine can flatten, one it must leave alone."""
import torch

STASHED = []


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


class Escapes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        STASHED.append(ctx)
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


def use(x):
    return Scale.apply(x, 3.0) + Escapes.apply(x) + Square.apply(x)
'''

TYPED = "    print(ctx)"  # typed on a new line under Scale.forward's def (autoindent adds 4 spaces)
SCALE_TYPED = SCALE.replace("ctx, x, factor):\n", f"ctx, x, factor):\n    {TYPED}\n")


# ----------------------------------------------------------------------------- expectations, independent of the server


def line_of(text: str, snippet: str) -> int:
    """The 1-based number of the one line holding ``snippet`` (Neovim's cursor lines)."""
    (number,) = [n for n, line in enumerate(text.splitlines(), 1) if snippet in line]
    return number


def diagnostic(text: str, snippet: str, word: str, code: str, severity: str) -> dict[str, Any]:
    """What Neovim should hold for a diagnostic on ``word`` inside ``snippet``: 0-based lines, byte columns."""
    lnum = line_of(text, snippet) - 1
    line = text.splitlines()[lnum].encode()
    col = line.index(snippet.encode()) + snippet.encode().index(word.encode())
    return {
        "lnum": lnum,
        "col": col,
        "end_lnum": lnum,
        "end_col": col + len(word.encode()),
        "code": code,
        "severity": severity,
        "source": "inliner",
    }


def cli(text: str, path: Path, select: str | None = None) -> str:
    """``python -m inliner -`` on ``text``, as if it were ``path`` (same project configuration)."""
    command = [sys.executable, "-m", "inliner", "-q", "--stdin-filename", str(path)]
    command += ["--select", select] if select else []
    done = subprocess.run(
        command + ["-"], input=text, capture_output=True, text=True, encoding="utf-8", timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_messages(text: str, path: Path) -> list[str]:
    """The command line's diagnostic messages for ``text``, in line order."""
    command = [sys.executable, "-m", "inliner", "-v", "--check", "--output-format", "json"]
    command += ["--stdin-filename", str(path), "-"]
    done = subprocess.run(command, input=text, capture_output=True, text=True, encoding="utf-8", timeout=120)
    found = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return [d["message"] for d in sorted(found, key=lambda d: (d["line"], d["column"]))]


# ----------------------------------------------------------------------------- running the editor


class Editor:
    """A project on disk, a ``python`` on PATH that runs this interpreter, and a headless Neovim."""

    def __init__(self, tmp: Path, config: Path):
        self.config = config
        self.project = tmp / "project"
        self.project.mkdir()
        (self.project / "pyproject.toml").write_text('[project]\nname = "demo"\n')  # the root marker
        self.home = tmp / "home"  # Neovim's state, cache (its LSP log) and config stay here
        self.home.mkdir()
        self.bin = tmp / "bin"
        self.bin.mkdir()
        python = self.bin / "python"  # the configuration's cmd is `python -m inliner.lsp`
        python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        self.cwd = tmp / "elsewhere"  # not the project: its root must come from the marker
        self.cwd.mkdir()
        self.tmp = tmp

    def file(self, name: str, text: str) -> Path:
        path = self.project / name
        path.write_bytes(text.encode())
        return path

    def env(self) -> dict[str, str]:
        env = dict(os.environ, HOME=str(self.home), PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}")
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
            env[name] = str(self.home / name.lower())
        return env

    def run(self, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Play ``steps`` in Neovim with the user configuration; the editor's record of each."""
        result = self.tmp / "result.json"
        plan = self.tmp / "plan.json"
        plan.write_text(json.dumps({"timeout_ms": STEP_TIMEOUT_MS, "result": str(result), "steps": steps}))
        assert NVIM is not None
        # -u NONE: no init file of the machine's user (and no shada, no swap file); it also
        # leaves filetype detection off, which every user's Neovim has on.
        command = [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "--cmd", "filetype on"]
        # The driver quits Neovim itself; the last command ends a run the driver broke off.
        command += ["-c", f"luafile {self.config}", "-c", f"luafile {DRIVER}", "-c", "cquit 2"]
        env = dict(self.env(), INLINER_NVIM_PLAN=str(plan))
        try:
            done = subprocess.run(
                command, cwd=self.cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"Neovim did not finish in {RUN_TIMEOUT}s\n{exc.stderr!r}\n{self.log()}")
        assert result.exists(), f"the driver wrote no record (exit {done.returncode})\n{done.stderr}\n{self.log()}"
        record = json.loads(result.read_text())
        failed = [s for s in record["steps"] if "error" in s]
        assert record["ok"] and not failed, f"{failed}\n{done.stderr}\n{self.log()}"
        assert done.returncode == 0, done.stderr
        return [_lists(s) for s in record["steps"]]

    def log(self) -> str:
        """The tail of Neovim's LSP log (it holds the server's stderr)."""
        logs = list(self.home.rglob("lsp.log"))
        return logs[0].read_text(errors="replace")[-4000:] if logs else "(no LSP log)"


def _lists(record: dict[str, Any]) -> dict[str, Any]:
    """vim.json encodes an empty Lua table as {}: read it as the empty list it is."""
    return {k: [] if v == {} else v for k, v in record.items()}


# ----------------------------------------------------------------------------- the test


@needs_nvim
@pytest.mark.parametrize(("config", "since"), CONFIGS)
def test_neovim_client_shows_diagnostics_and_applies_flatten_actions(
    tmp_path: Path, config: Path, since: tuple[int, int]
) -> None:
    if nvim_version() < since:
        have = ".".join(map(str, nvim_version()))
        pytest.skip(f"{config.name} is for Neovim {since[0]}.{since[1]}+ and runs in the test there; {NVIM} is {have}")
    editor = Editor(tmp_path, config)
    scale, refused, several = (
        editor.file("scale.py", SCALE),
        editor.file("refused.py", REFUSED),
        editor.file("several.py", SEVERAL),
    )
    square_only = cli(SEVERAL, several, select="Square")
    checks: list[tuple[dict[str, Any], Callable[[dict[str, Any]], None]]] = []

    def step(action: dict[str, Any], check: Callable[[dict[str, Any]], None]) -> None:
        checks.append((action, check))

    def attached(record: dict[str, Any]) -> None:
        assert record["filetype"] == "python"
        (client,) = record["clients"]
        assert (client["name"], client["root_dir"]) == ("inliner", str(editor.project))

    def shows(text: str, path: Path, *expected: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
        def check(record: dict[str, Any]) -> None:
            assert record["text"] == text  # the version the diagnostics were published for
            seen = record["diagnostics"]
            assert [d["message"] for d in seen] == cli_messages(text, path)
            assert [{k: v for k, v in d.items() if k != "message"} for d in seen] == list(expected)

        return check

    def offers(titles: list[str], text: str) -> Callable[[dict[str, Any]], None]:
        def check(record: dict[str, Any]) -> None:
            assert record["offered"] == titles
            assert record["chosen"] and record["resolved_by_editor"], record
            assert record["text"] == text

        return check

    def typed(text: str) -> Callable[[dict[str, Any]], None]:
        def check(record: dict[str, Any]) -> None:
            assert record["text"] == text

        return check

    def written(path: Path, text: str) -> Callable[[dict[str, Any]], None]:
        def check(record: dict[str, Any]) -> None:
            assert record["file"] == str(path)
            assert path.read_bytes() == text.encode()

        return check

    def offers_nothing(record: dict[str, Any]) -> None:
        assert record["offered"] == [] and not record["chosen"]
        assert record["notices"] == ["No code actions available"]
        assert record["text"] == REFUSED

    scale_hint = diagnostic(SCALE, "class Scale(", "Scale", "INL001", "HINT")
    # A flattenable Function: its hint; typing a line that hands ctx to print turns it into a
    # warning for the new version, undoing brings the hint back; then Flatten `Scale`.
    step({"do": "open", "file": str(scale)}, attached)
    step({"do": "diagnostics"}, shows(SCALE, scale, scale_hint))
    step({"do": "type", "line": line_of(SCALE, "def forward"), "keys": f"o{TYPED}<Esc>"}, typed(SCALE_TYPED))
    step(
        {"do": "diagnostics"},
        shows(SCALE_TYPED, scale, diagnostic(SCALE_TYPED, "print(ctx)", "ctx", "INL102", "WARN")),
    )
    step({"do": "type", "line": 1, "keys": "u"}, typed(SCALE))
    step({"do": "diagnostics"}, shows(SCALE, scale, scale_hint))
    step(
        {"do": "action", "line": line_of(SCALE, "return grad * ctx.factor"), "title": "Flatten `Scale`"},
        offers(["Flatten `Scale`", FLATTEN_ALL_TITLE], cli(SCALE, scale, select="Scale")),
    )
    step({"do": "write"}, written(scale, cli(SCALE, scale, select="Scale")))
    # A refused Function: its warning (after an astral character: byte columns from UTF-16
    # ones), and no action to pick.
    step({"do": "open", "file": str(refused)}, attached)
    step(
        {"do": "diagnostics"},
        shows(REFUSED, refused, diagnostic(REFUSED, "; keep(ctx)", "ctx", "INL102", "WARN")),
    )
    step({"do": "action", "line": line_of(REFUSED, "; keep(ctx)"), "title": None}, offers_nothing)
    # Several: Flatten `Square` from inside it, then Flatten all on the edited buffer, and
    # the diagnostics of the version the editor's edits made.
    step({"do": "open", "file": str(several)}, attached)
    step(
        {"do": "diagnostics"},
        shows(
            SEVERAL,
            several,
            diagnostic(SEVERAL, "class Scale(", "Scale", "INL001", "HINT"),
            diagnostic(SEVERAL, "STASHED.append(ctx)", "ctx", "INL102", "WARN"),
            diagnostic(SEVERAL, "class Square(", "Square", "INL001", "HINT"),
        ),
    )
    step(
        {"do": "action", "line": line_of(SEVERAL, "return 2 * g * x"), "title": "Flatten `Square`"},
        offers(["Flatten `Square`", FLATTEN_ALL_TITLE], square_only),
    )
    flat = cli(square_only, several)
    step({"do": "action", "line": 1, "title": FLATTEN_ALL_TITLE}, offers([FLATTEN_ALL_TITLE], flat))
    step(
        {"do": "diagnostics"},
        shows(flat, several, diagnostic(flat, "STASHED.append(ctx)", "ctx", "INL102", "WARN")),
    )
    step({"do": "write"}, written(several, flat))

    records = editor.run([action for action, _ in checks])
    assert [r["step"] for r in records] == list(range(1, len(checks) + 1))
    for (action, check), record in zip(checks, records):
        try:
            check(record)
        except AssertionError as exc:
            raise AssertionError(f"step {record['step']} {action}: {exc}") from exc


@needs_nvim
@pytest.mark.parametrize("config", [CONFIG_07, CONFIG], ids=lambda path: path.name)
def test_neovim_configuration_compiles(config: Path) -> None:
    """Each configuration is Lua this Neovim reads, also one written for a newer Neovim than it (which
    the test above then skips): ``loadfile`` compiles the file without running it."""
    check = f"local ok, err = loadfile({json.dumps(str(config))}); if not ok then io.stderr:write(err); vim.cmd('cquit 1') end"
    done = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"lua {check}", "-c", "qall!"],  # type: ignore[list-item]
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
