"""A ``torch.ops.higher_order.autograd_function_apply`` call: found and resolved (``hop_calls``),
then lowered to a ``CustomVJP`` (``lower_hop``) and spliced into the module's text (``splice``);
a module's calls found, lowered through the cache and emitted (``lower_call``)."""
