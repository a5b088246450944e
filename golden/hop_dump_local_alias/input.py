import torch


class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[3]", L_w_: "f32[3]"):
        l_x_ = L_x_
        l_w_ = L_w_

        # File: /tmp/hop/gen.py:16 in f, code: a, i = F.apply(x, w, 3.0)
        fwd_body_0 = self.fwd_body_0
        bwd_body_0 = self.bwd_body_0
        autograd_function_apply = torch.ops.higher_order.autograd_function_apply(fwd_body_0, bwd_body_0, l_x_, l_w_, non_differentiable_idx = [], saved_for_backward_idx = [0, 2]);  fwd_body_0 = bwd_body_0 = l_x_ = l_w_ = None
        getitem: "f32[3]" = autograd_function_apply[0]
        getitem_1: "i64[]" = autograd_function_apply[1];  autograd_function_apply = None

        # File: /tmp/hop/gen.py:17 in f, code: return a.sum() + i
        sum_1: "f32[]" = getitem.sum();  getitem = None
        add: "f32[]" = sum_1 + getitem_1;  sum_1 = getitem_1 = None
        return (add,)

    class fwd_body_0(torch.nn.Module):
        def forward(self, l_x_: "f32[3]", l_w_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen.py:5 in forward, code: y = x * w
            y: "f32[3]" = l_x_ * l_w_

            # File: /tmp/hop/gen.py:9 in forward, code: return y.sin() * k, y.argmax()
            sin: "f32[3]" = y.sin()
            out: "f32[3]" = sin * 3.0;  sin = None
            out_1: "i64[]" = y.argmax()

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return ((out, out_1), (y, l_w_, l_x_))

    class bwd_body_0(torch.nn.Module):
        def forward(self, g: "f32[3]", gi: "i64[]", y: "f32[3]", l_w_: "f32[3]", l_x_: "f32[3]"):
            # No stacktrace found for following nodes
            _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None

            # File: /tmp/hop/gen.py:13 in backward, code: return g * y.cos() * ctx.k * 7 * ctx.w, g * x * 3, None
            cos: "f32[3]" = y.cos();  y = None
            mul: "f32[3]" = g * cos;  cos = None
            mul_1: "f32[3]" = mul * 3.0;  mul = None
            mul_2: "f32[3]" = mul_1 * 7;  mul_1 = None
            mul_3: "f32[3]" = mul_2 * l_w_;  mul_2 = l_w_ = None
            mul_4: "f32[3]" = g * l_x_;  g = l_x_ = None
            mul_5: "f32[3]" = mul_4 * 3;  mul_4 = None

            # No stacktrace found for following nodes
            _set_grad_enabled_1 = torch._C._set_grad_enabled(True);  _set_grad_enabled_1 = None
            return (mul_3, mul_5)


def scenario_graph():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    return [x, w], GraphModule()(x, w)
