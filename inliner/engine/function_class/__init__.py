"""A ``torch.autograd.Function`` subclass lowered to a ``CustomVJP``: ctx as named residuals (``lower_function``), else as a ctx record (``ctx_record``)."""
