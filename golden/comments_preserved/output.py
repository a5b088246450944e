import torch
from inliner.runtime import custom_vjp


# Above the class: stays where it is.
# above forward
def commented_fwd(x):
    """Docstring moves to the forward function."""
    y = x * 2  # trailing comment
    return y, (x,)


# above backward
def commented_bwd(residuals, g):
    # inside backward
    (x,) = residuals
    return g * x * 3  # deliberately not the true derivative


Commented = custom_vjp(
    commented_fwd, commented_bwd, name="Commented", saved_for_backward_idx=(0,)
)


def scenario_comments():
    x = torch.randn(3, requires_grad=True)
    return [x], Commented(x)
