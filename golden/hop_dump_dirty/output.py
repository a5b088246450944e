import torch
from inliner.runtime import custom_vjp


def dirty_fwd(clone: "f32[3]"):
    mul_: "f32[3]" = clone.mul_(2)
    return ((clone,), ())


def dirty_bwd(residuals, g: "f32[3]"):
    mul: "f32[3]" = g * 5
    return (mul,)


Dirty = custom_vjp(dirty_fwd, dirty_bwd, name="Dirty", dirty_idx=(0,))


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /tmp/hop/gen2.py:21 in f_dirty, code: return Dirty.apply(x.clone()).sum()
        outs: "f32[3]" = l_x_.clone();  l_x_ = None
        dirty = Dirty(outs);  outs = None
        getitem: "f32[3]" = dirty[0];  dirty = None
        sum_1: "f32[]" = getitem.sum();  getitem = None
        return (sum_1,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
