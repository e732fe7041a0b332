"""Autograd behaviour scenarios, run under upstream torch and under torchnative (each side
in its own process, tests/test_autograd.py compares). Each scenario returns plain data or
raises; errors are compared by class and message start. Imported by both sides: only
torch, numpy and the standard library."""
import json
import sys

SCENARIOS = {}


def scenario(fn):
    SCENARIOS[fn.__name__] = fn
    return fn


def lst(t):
    return [round(float(v), 6) for v in t.detach().reshape(-1).tolist()]


@scenario
def propagation(torch):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    z = y.sum()
    return {"y_rg": y.requires_grad, "y_leaf": y.is_leaf, "x_leaf": x.is_leaf, "fn": type(y.grad_fn).__name__,
            "z_fn": z.grad_fn.name(), "next": [(type(f).__name__ if f is not None else None, i)
                                               for f, i in z.grad_fn.next_functions],
            "acc": [type(f).__name__ for f, _ in y.grad_fn.next_functions],
            "acc_var_is_x": y.grad_fn.next_functions[0][0].variable is x,
            "same_obj": y.grad_fn is y.grad_fn, "int_rg": (x > 1).requires_grad,
            "isnode": isinstance(y.grad_fn, torch.autograd.graph.Node)}


@scenario
def jacobian(torch):
    x = torch.tensor([1.0, 2.0, 3.0])
    j = torch.autograd.functional.jacobian(lambda t: (t * 3).sum(), x)
    j2 = torch.autograd.functional.jacobian(lambda t: t.exp() * t, x)
    return lst(j) + lst(j2)


@scenario
def hessian_vjp_jvp(torch):
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    h = torch.autograd.functional.hessian(lambda t: (t ** 3).sum() + (t[0] * t[1]), x)
    _, v = torch.autograd.functional.vjp(lambda t: t.sin() * t, x, torch.ones(3, dtype=torch.float64))
    _, jv = torch.autograd.functional.jvp(lambda t: t.tanh() * 2, x, torch.ones(3, dtype=torch.float64))
    hv = torch.autograd.functional.hvp(lambda t: (t.exp() * t).sum(), x, torch.ones(3, dtype=torch.float64))[1]
    return lst(h) + lst(v) + lst(jv) + lst(hv)


@scenario
def double_backward_penalty(torch):
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(5, 4, requires_grad=True)
    y = torch.tanh(x @ w).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    pen = (g ** 2).sum()
    pen.backward()
    return lst(w.grad) + lst(x.grad)


@scenario
def retain_grad_and_accumulate(torch):
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    z = (y * 2).sum()
    z.backward(retain_graph=True)
    first = lst(x.grad)
    z.backward()
    return {"y_grad": lst(y.grad), "retains": y.retains_grad, "first": first, "acc": lst(x.grad)}


@scenario
def hooks(torch):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    hx = x.register_hook(lambda g: g * 10)
    y = x * 3
    y.register_hook(lambda g: seen.append(lst(g)) or g + 1)
    x.register_post_accumulate_grad_hook(lambda p: seen.append(("post", lst(p.grad))))
    y.grad_fn.register_prehook(lambda go: seen.append(("pre", lst(go[0]))))
    y.grad_fn.register_hook(lambda gi, go: seen.append(("node", lst(gi[0]), lst(go[0]))))
    y.sum().backward()
    hx.remove()
    x.grad = None
    (x * 3).sum().backward()
    return {"seen": seen, "after_remove": lst(x.grad)}


@scenario
def queue_callback(torch):
    # Engine.queue_callback (DDP's reducer finalizes through it): callbacks run after every
    # node, in order, including ones queued by a callback; outside backward it raises
    from torch.autograd import Variable
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    log = []

    def hook(g):
        eng = Variable._execution_engine
        eng.queue_callback(lambda: log.append(("cb", lst(x.grad))))
        eng.queue_callback(lambda: eng.queue_callback(lambda: log.append("nested")))
        return g
    y = x * 3
    y.register_hook(hook)
    y.sum().backward()
    try:
        Variable._execution_engine.queue_callback(lambda: None)
        log.append("no error")
    except RuntimeError as e:
        log.append(str(e))
    return log


@scenario
def preserve_version_counter(torch):
    # DDP's buffer broadcast writes under _unsafe_preserve_version_counter
    x = torch.zeros(3)
    v = x.view(3)
    before = x._version
    with torch.autograd._unsafe_preserve_version_counter(x):
        x.add_(1)
        x.mul_(2)
    during = x._version
    torch._C._autograd._unsafe_set_version_counter((x,), (7,))
    return [before, during, x._version, v._version, lst(x)]


@scenario
def module_hooks(torch):
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    got = []
    lin.register_full_backward_pre_hook(lambda m, go: got.append(("pre", lst(go[0]))))
    lin.register_full_backward_hook(lambda m, gi, go: got.append(("full", lst(gi[0]), lst(go[0]))))
    x = torch.randn(4, 3, requires_grad=True)
    lin(x).pow(2).sum().backward()
    return {"hooks": got, "w": lst(lin.weight.grad), "x": lst(x.grad)}


@scenario
def custom_function(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x ** 3 * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.k, None

    class TwoOut(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.set_materialize_grads(True)
            return x * 2, idx

        @staticmethod
        def backward(ctx, g, gidx):
            return g * 2

    class Inplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)
    y = Cube.apply(x, 2.0)
    name = type(y.grad_fn).__name__
    needs = None

    class Needs(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            nonlocal needs
            needs = ctx.needs_input_grad
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    z = Needs.apply(y, torch.ones(3))
    v, i = TwoOut.apply(z)
    w = Inplace.apply(v.clone())
    w.sum().backward()
    return {"name": name, "needs": list(needs), "grad": lst(x.grad), "idx_rg": i.requires_grad,
            "next": [type(f).__name__ for f, _ in y.grad_fn.next_functions]}


@scenario
def once_differentiable(torch):
    from torch.autograd.function import once_differentiable as od

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @od
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    x = torch.tensor([0.1, 0.2], requires_grad=True)
    (g,) = torch.autograd.grad(F.apply(x).sum(), x, create_graph=True)
    try:
        g.sum().backward()
        return "no error"
    except RuntimeError as e:
        return ["RuntimeError", str(e)[:40], lst(g)]


@scenario
def grad_modes(torch):
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2
    with torch.inference_mode():
        c = x * 2
    torch.set_grad_enabled(False)
    d = x * 2
    torch.set_grad_enabled(True)

    @torch.no_grad()
    def f(t):
        return t * 2

    return [a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, f(x).requires_grad,
            torch.is_grad_enabled(), (x * 2).requires_grad]


@scenario
def detach(torch):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    d = y.detach()
    y2 = x * 3
    y2.detach_()
    return [d.requires_grad, d.is_leaf, y2.requires_grad, y2.grad_fn is None, y.requires_grad]


@scenario
def inputs_and_unused(torch):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    c = torch.tensor([5.0], requires_grad=True)
    loss = (a * b).sum()
    loss.backward(inputs=[a], retain_graph=True)
    ga, gb = lst(a.grad), b.grad
    g = torch.autograd.grad(loss, [b, c], allow_unused=True)
    g2 = torch.autograd.grad((a * b).sum(), [b, c], materialize_grads=True)
    return {"a": ga, "b_none": gb is None, "g": [lst(g[0]), g[1] is None], "mat": [lst(t) for t in g2]}


@scenario
def accumulate_steals_unshared_grads(torch):
    # AccumulateGrad keeps a gradient nobody else holds (no copy: a training step's weight
    # gradient is not copied again) and copies one that is shared (the caller's grad_outputs,
    # the same tensor flowing to two leaves).
    x = torch.randn(8, 4, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    seen = {}
    x.register_hook(lambda g: seen.__setitem__("x", g.data_ptr()))
    w.register_hook(lambda g: seen.__setitem__("w", g.data_ptr()))
    torch.nn.functional.linear(x, w).sum().backward()
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    g = torch.ones(5)
    (a + b).backward(g)
    return [seen["x"] == x.grad.data_ptr(), seen["w"] == w.grad.data_ptr(),
            a.grad.data_ptr() != g.data_ptr(), b.grad.data_ptr() != g.data_ptr(),
            a.grad.data_ptr() != b.grad.data_ptr()]


@scenario
def function_saved_tensor_hooks(torch):
    # saved-tensor hooks see a custom Function's saved tensors (pack at save, unpack at
    # every saved_tensors access), as they see every built-in node's
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    log = []

    def pack(t):
        log.append(("pack", list(t.shape)))
        return t * 2  # the unpack hook undoes it: a wrong pairing shows in the gradient

    def unpack(p):
        log.append(("unpack", list(p.shape)))
        return p / 2

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = Cube.apply(x).sum()
    y.backward()
    return {"grad": lst(x.grad), "log": log}


@scenario
def checkpointing(torch):
    import torch.utils.checkpoint as cp
    torch.manual_seed(0)
    lin = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    x = torch.randn(3, 4, requires_grad=True)
    out = {}
    for mode in (None, True, False):
        lin.zero_grad()
        x.grad = None
        y = lin(x) if mode is None else cp.checkpoint(lin, x, use_reentrant=mode)
        y.pow(2).sum().backward()
        out[str(mode)] = lst(lin[0].weight.grad) + lst(x.grad)
    return out


@scenario
def gradcheck(torch):
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    fns = [lambda a, b: (a @ b).tanh(), lambda a, b: torch.nn.functional.softmax(a, 1) @ b,
           lambda a, b: torch.nn.functional.layer_norm(a, (4,)) @ b]
    ok = [torch.autograd.gradcheck(f, (x, w)) for f in fns]
    ok += [torch.autograd.gradgradcheck(f, (x, w)) for f in fns[:2]]
    return ok


@scenario
def inplace_on_views(torch):
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 2
    y[1:3].mul_(torch.tensor([3.0, 4.0]))
    out = torch.zeros(2, 3)
    w = torch.ones(3, requires_grad=True)
    out[0] = w * 2
    out[1, :2] = w[:2] ** 2
    v = out.t()[2]
    v.add_(w[:2].exp())
    loss = y.sum() + (out * torch.arange(6.0).view(2, 3)).sum() + (y * y).sum()
    loss.backward()
    return {"x": lst(x.grad), "w": lst(w.grad), "y_fn": type(y.grad_fn).__name__,
            "out_fn": type(out.grad_fn).__name__, "out_rg": out.requires_grad, "v_fn": type(v.grad_fn).__name__}


@scenario
def err_view_of_leaf_inplace(torch):
    x = torch.ones(3, requires_grad=True)
    x[0:2].mul_(2)


@scenario
def err_second_backward(torch):
    x = torch.ones(2, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()


@scenario
def batchnorm_twice_before_backward(torch):
    # Two training forwards through one BatchNorm, one backward: the running statistics
    # the first forward saved are updated by the second, and upstream leaves their version
    # counters alone (TTT's two heads, SAM's two passes, joint training)
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(3)
    bn.train()
    x = torch.randn(4, 3, 2, 2, requires_grad=True)
    v0 = bn.running_mean._version
    loss = bn(x).pow(2).sum() + bn(x * 2).sum()
    loss.backward()
    return {"grad": lst(x.grad), "w": lst(bn.weight.grad), "version_moved": bn.running_mean._version - v0,
            "rm": lst(bn.running_mean)}


@scenario
def err_saved_modified(torch):
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


@scenario
def err_saved_output_modified(torch):
    x = torch.ones(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()


@scenario
def graph_task_ids(torch):
    """torch._C._current_graph_task_id: -1 outside backward, one id per pass (consecutive),
    a nested pass its own, the outer id back after it."""
    ids = []
    x = torch.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.register_hook(lambda g: ids.append(torch._C._current_graph_task_id()))
    outside = torch._C._current_graph_task_id()
    y.backward(retain_graph=True)
    y.backward()

    def nested(g):
        ids.append(torch._C._current_graph_task_id())
        with torch.enable_grad():
            w = (x * 4).sum()
        w.register_hook(lambda g2: ids.append(torch._C._current_graph_task_id()))
        torch.autograd.grad(w, x)
        ids.append(torch._C._current_graph_task_id())

    z = (x * 3).sum()
    z.register_hook(nested)
    z.backward()
    return {"outside": outside, "after": torch._C._current_graph_task_id(), "first_nonneg": ids[0] >= 0,
            "relative": [i - ids[0] for i in ids]}


@scenario
def checkpoint_recomputes_each_region_once(torch):
    """Non-reentrant torch.utils.checkpoint recomputes a region once per backward pass, on
    the first unpack of its saved tensors (it keys the recomputation on the graph task id),
    then once more in a second pass; the gradients equal the plain ones."""
    from torch.utils.checkpoint import checkpoint

    calls = []

    def region(t, w):
        calls.append(1)
        return (t @ w).tanh().exp() * t.sin()

    torch.manual_seed(0)
    x = torch.randn(4, 4, requires_grad=True)
    w = torch.randn(4, 4, requires_grad=True)
    y = checkpoint(region, checkpoint(region, x, w, use_reentrant=False), w, use_reentrant=False).sum()
    forward_calls = len(calls)
    y.backward(retain_graph=True)
    first = len(calls) - forward_calls
    y.backward()
    second = len(calls) - forward_calls - first
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    region(region(x, w), w).sum().mul(2).backward()
    return {"forward": forward_calls, "first_pass": first, "second_pass": second,
            "grads_equal_plain": bool(torch.allclose(gx, x.grad) and torch.allclose(gw, w.grad))}


@scenario
def err_nonscalar(torch):
    x = torch.ones(3, requires_grad=True)
    (x * 2).backward()


@scenario
def err_grad_no_requires(torch):
    x = torch.ones(3, requires_grad=True)
    u = torch.ones(3)
    torch.autograd.grad((x * u).sum(), [u])


@scenario
def err_unused(torch):
    x = torch.ones(3, requires_grad=True)
    u = torch.ones(3, requires_grad=True)
    torch.autograd.grad((x * 2).sum(), [u])


@scenario
def err_leaf_inplace(torch):
    x = torch.ones(3, requires_grad=True)
    x.add_(1)


@scenario
def err_grad_output_shape(torch):
    x = torch.ones(3, requires_grad=True)
    torch.autograd.grad(x * 2, x, grad_outputs=torch.ones(4))


@scenario
def err_requires_grad_nonleaf(torch):
    x = torch.ones(3, requires_grad=True)
    (x * 2).requires_grad_(False)


@scenario
def err_int_requires_grad(torch):
    torch.ones(3, dtype=torch.int64).requires_grad_()


@scenario
def err_backward_no_graph(torch):
    torch.ones(3).sum().backward()


@scenario
def err_out_with_grad(torch):
    x = torch.ones(3, requires_grad=True)
    torch.mul(x, 2, out=torch.empty(3))


def run_all():
    import torch
    res = {}
    for name, fn in SCENARIOS.items():
        try:
            res[name] = ["ok", fn(torch)]
        except Exception as e:
            res[name] = ["err", type(e).__name__, str(e)]
    return res


if __name__ == "__main__":
    out = run_all()
    sys.stdout.write(json.dumps(out, default=str) + "\n")
