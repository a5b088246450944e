"""How fast the language server answers an editor, side by side with one libcst parse.

Drives ``python -m inliner.lsp`` over stdio exactly as an editor does: initialize,
didOpen, then single-character didChange edits (full text, as the server asks),
each sent once the previous one's diagnostics arrived, timing each until the
publishDiagnostics for its version arrives. The figures are divided by the time
one ``libcst.parse_module`` of the same text takes in this process, measured
around each run (the machine's load changes both alike).

Documents (generated, see ``bench_lsp_gen.py``): a large test-style module with
about a hundred Functions, typed into in the middle of one of them, and a small
module with one Function.

Targets (issue 16): keystroke-to-diagnostics median at most 0.5 parses and
open-to-diagnostics at most 2 parses, on the large file.

Usage: python scripts/bench_lsp.py [--runs 3] [--edits 10] [--functions 100]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import libcst

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_lsp_gen import generate, generate_small

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300.0


class Server:
    """``python -m inliner.lsp`` on pipes, with a thread reading its messages."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "inliner.lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self.messages: queue.Queue = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put((time.perf_counter(), json.loads(stream.read(length))))

    def send(self, method: str, params: dict, *, request: bool = False) -> int | None:
        message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        ident = None
        if request:
            ident = self.next_id = self.next_id + 1
            message["id"] = ident
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return ident

    def wait(self, match) -> tuple[float, dict]:
        deadline = time.perf_counter() + TIMEOUT
        while True:
            arrived, message = self.messages.get(timeout=max(deadline - time.perf_counter(), 0.001))
            if match(message):
                return arrived, message

    def diagnostics(self, uri: str, version: int) -> tuple[float, dict]:
        def match(message: dict) -> bool:
            params = message.get("params") or {}
            return (
                message.get("method") == "textDocument/publishDiagnostics"
                and params.get("uri") == uri
                and params.get("version") == version
            )

        return self.wait(match)

    def close(self) -> None:
        ident = self.send("shutdown", {}, request=True)
        self.wait(lambda m: m.get("id") == ident)
        self.send("exit", {})
        self.process.wait(timeout=TIMEOUT)


def parse_seconds(text: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        libcst.parse_module(text)
        best = min(best, time.perf_counter() - start)
    return best


def typing_position(text: str) -> int:
    """Where the edits type: inside the backward of the Function in the middle of the file."""
    marker = "ctx.scale * "
    positions = [i for i in range(len(text)) if text.startswith(marker, i)]
    return positions[len(positions) // 2] + len(marker)


def session(text: str, edits: int) -> tuple[float, list[float], int]:
    """(open seconds, each keystroke's seconds, diagnostics on open) for one server session."""
    server = Server()
    uri = "file:///bench/model.py"
    try:
        ident = server.send(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": None,
                "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
            },
            request=True,
        )
        server.wait(lambda m: m.get("id") == ident)
        server.send("initialized", {})
        item = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        sent = time.perf_counter()
        server.send("textDocument/didOpen", {"textDocument": item})
        arrived, message = server.diagnostics(uri, 1)
        opened = arrived - sent
        count = len(message["params"]["diagnostics"])
        at = typing_position(text)
        keystrokes = []
        for version in range(2, edits + 2):
            text = text[:at] + "1" + text[at:]  # typing a number, one digit at a time
            sent = time.perf_counter()
            server.send(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
            )
            arrived, _ = server.diagnostics(uri, version)
            keystrokes.append(arrived - sent)
        server.close()
        return opened, keystrokes, count
    finally:
        if server.process.poll() is None:
            server.process.kill()


def measure(name: str, text: str, runs: int, edits: int) -> dict:
    opens, keys, parses = [], [], []
    for _ in range(runs):
        before = parse_seconds(text)
        opened, keystrokes, count = session(text, edits)
        parse = min(before, parse_seconds(text))
        parses.append(parse)
        opens.append(opened / parse)
        keys.extend(k / parse for k in keystrokes)
    return {
        "name": name,
        "lines": text.count("\n") + 1,
        "diagnostics": count,
        "parse_ms": statistics.median(parses) * 1000,
        "open": opens,
        "keys": keys,
    }


def spread(values: list[float]) -> str:
    if len(values) < 4:
        return f"{min(values):.2f}-{max(values):.2f}"
    q = statistics.quantiles(values, n=4)
    return f"{min(values):.2f} [{q[0]:.2f}-{q[2]:.2f}] {max(values):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="server sessions per document (default 3)")
    parser.add_argument("--edits", type=int, default=10, help="keystrokes per session (default 10)")
    parser.add_argument("--functions", type=int, default=100, help="Functions in the large document (default 100)")
    args = parser.parse_args()
    rows = [
        measure("large", generate(args.functions), args.runs, args.edits),
        measure("small", generate_small(), args.runs, args.edits),
    ]
    print("Times in libcst parses of the same file (median; spread: min [quartiles] max)")
    print(
        f"{'file':<6} {'lines':>6} {'diags':>6} {'parse':>9}  {'open':>6}  {'open spread':<26} {'key':>6}  key spread"
    )
    for row in rows:
        print(
            f"{row['name']:<6} {row['lines']:>6} {row['diagnostics']:>6} {row['parse_ms']:>7.0f}ms"
            f"  {statistics.median(row['open']):>6.2f}  {spread(row['open']):<26}"
            f" {statistics.median(row['keys']):>6.2f}  {spread(row['keys'])}"
        )
    large = rows[0]
    open_ok = statistics.median(large["open"]) <= 2.0
    key_ok = statistics.median(large["keys"]) <= 0.5
    print(
        f"targets on the large file: open <= 2 parses: {'met' if open_ok else 'MISSED'}; "
        f"keystroke median <= 0.5 parses: {'met' if key_ok else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
