"""Language server for editors: ``python -m inliner.lsp`` (LSP over stdio).

On every open Python document it publishes the engine's diagnostics -- a hint on
each ``torch.autograd.Function`` that can be flattened, a warning with the code
and reason on each that cannot -- and offers the code actions "Flatten `Name`"
(``refactor.rewrite``) and "Flatten all autograd Functions in this file"
(``source.flattenAll.inliner``), whose edits produce exactly the engine's text.

Modules: ``text`` (LSP lines, positions and edits; pure), ``server`` (the pygls
server), ``__main__`` (the command). Needs the ``lsp`` extra (pygls 2).
"""
