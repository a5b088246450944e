import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]"):
        l_x_ = L_x_

        # File: /tmp/hop/gen2.py:21 in f_dirty, code: return Dirty.apply(x.clone()).sum()
        outs: "f32[3]" = l_x_.clone();  l_x_ = None
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, outs, non_differentiable_idx = [], saved_for_backward_idx = [], dirty_idx = [0]);  fwd_body_0 = bwd_body_0 = outs = None
        getitem: "f32[3]" = autograd_function_apply[0];  autograd_function_apply = None
        sum_1: "f32[]" = getitem.sum();  getitem = None
        return (sum_1,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, clone: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen2.py:5 in forward, code: x.mul_(2)
            mul_: "f32[3]" = clone.mul_(2);  mul_ = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((clone,), ())

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen2.py:10 in backward, code: return g * 5
            mul: "f32[3]" = g * 5;  g = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul,)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    return [x], GraphModule()(x)
