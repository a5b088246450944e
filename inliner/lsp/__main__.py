"""``python -m inliner.lsp``: run the language server on stdin/stdout."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inliner.lsp", description=__doc__)
    parser.add_argument(
        "--stdio", action="store_true", help="talk LSP over stdin/stdout (the default and only transport)"
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level for messages on stderr (default: WARNING)",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    args = parser.parse_args(argv)

    from inliner import __version__

    if args.version:
        print(f"inliner-lsp {__version__}")
        return 0
    try:
        from inliner.lsp.server import create_server
    except ImportError as exc:
        print(f"inliner.lsp needs pygls 2: pip install 'inliner[lsp]' ({exc})", file=sys.stderr)
        return 2

    logging.basicConfig(stream=sys.stderr, level=args.log_level, format="%(levelname)s %(name)s: %(message)s")
    # Users' buffers may hold invalid escapes and the like: no warning spam on stderr.
    warnings.simplefilter("ignore", SyntaxWarning)
    warnings.simplefilter("ignore", DeprecationWarning)

    # stdout carries the protocol: keep the binary stream for it and send any stray
    # print() to stderr, where it cannot corrupt a message.
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    server = create_server()
    _tune_garbage_collection()
    server.start_io(stdin, stdout)
    return server.exit_code


def _tune_garbage_collection() -> None:
    """Keep the cyclic collector from pausing every other keystroke.

    Each version's analysis allocates a tree of the whole module (~70k objects for 3,000
    lines) that survives long enough to reach the oldest generation, next to the
    cached per-class results; with the default thresholds that triggers a full
    collection (of everything cached) every keystroke or two, which costs more than the
    analysis. Rarer young collections let those trees die young (they hold no cycles,
    reference counting frees them); what the imports created is never garbage: frozen.
    """
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 100)


def run() -> None:
    """Entry point: run ``main`` and end the process with its code."""
    code = main()
    for stream in (sys.stderr, sys.__stdout__):
        try:
            if stream is not None:  # sys.__stdout__ is None without a console
                stream.flush()
        except Exception:
            pass
    # Exit without joining threads: pygls' stdin reader may be blocked in read()
    # on a client that keeps the pipe open after `exit`.
    os._exit(code)


if __name__ == "__main__":
    run()
