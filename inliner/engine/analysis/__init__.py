"""What the lowerings ask of the source: how ``ctx`` flows through a method (``ctxflow``) and
what each name in a scope stands for (``scopes``)."""
