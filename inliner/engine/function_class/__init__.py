"""A ``torch.autograd.Function`` subclass lowered to a ``CustomVJP`` (``lower_function``)."""
