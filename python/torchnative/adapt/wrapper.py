"""adapt.wrap: a model served with a test-time adaptation delta over its frozen base.

How a delta enters the forward (docs/ADAPT.md, "The delta"): the wrapper records, once,
every module's parameter and buffer *objects* (the base table). Applying a delta replaces
entries of the modules' `_parameters` / `_buffers` dicts by the delta's own tensors (one
dict store per adapted tensor), sets the module attributes and training flags the method
asks for, and points the LoRA forward hooks at the delta's factors; removing it stores
the base objects back. The base tensors are never written, never copied, and remain
shared by every delta and every user; the forward of a model with no delta applied runs
exactly the base module's code (LoRA hooks return None), so reset() is bit-identical."""
import contextlib
import os
import weakref

import torch
import torch.nn.functional as F

from . import events
from .delta import Delta, DeltaError, hash_tensors, read_delta_file, save_delta, verify_delta_file
from .guard import CollapseGuard
from .lifetimes import Discard, HandTo, Keep, Persistent, Save, as_destination, as_lifetime

_MISSING = object()
_DEFAULT = object()


def _split(name):
    mod, _, attr = name.rpartition(".")
    return mod, attr


class Adapted:
    """The wrapped model (see adapt.wrap). Public state:
    model        the base module (its weights are never written)
    method       the adaptation method
    user         whose delta is served
    delta        the served delta (None: the base)
    deltas       {user: Delta} held in memory
    kept         {user: Delta} deltas whose lifetime ended with the "keep" destination
    counters     expiries, saves, hand-offs, collapse resets, NaN discards, steps"""

    def __init__(self, model, method, lifetime=None, on_expiry="discard", guard=_DEFAULT, user="default"):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"adapt.wrap needs a torch.nn.Module, got {type(model).__name__}")
        from .methods import Method
        if not isinstance(method, Method):
            raise TypeError(f"method must be an adapt method instance (adapt.Tent(), ...), got {method!r}")
        self.model = model
        self.method = method
        self.lifetime = as_lifetime(lifetime if lifetime is not None else method.default_lifetime())
        self.on_expiry = as_destination(on_expiry)
        self.guard = CollapseGuard() if guard is _DEFAULT else guard
        self.user = user
        self.deltas = {}
        self.kept = {}
        self.counters = {"steps": 0, "expired": 0, "saved": 0, "handed": 0, "collapse_resets": 0,
                         "nan_discards": 0, "method_resets": 0}
        self._online = False
        self._active = None
        self._restore = None  # what apply() changed besides the base table: attrs, modes
        self._base_hash = None
        self._mods = dict(model.named_modules())
        self._base = {}
        for mname, m in self._mods.items():
            for k, v in m._parameters.items():
                self._base[f"{mname}.{k}" if mname else k] = v
            for k, v in m._buffers.items():
                self._base[f"{mname}.{k}" if mname else k] = v
        self._param_names = {f"{mn}.{k}" if mn else k for mn, m in self._mods.items() for k in m._parameters}
        for p in model.parameters():  # the base is frozen: gradients go to delta tensors only
            p.requires_grad_(False)
        self._hooked = set()
        self._hook_handles = []
        self._sub = events.subscribe(events.ANY, self._on_event, weak=True)
        method.setup(self)

    # ---- base ---------------------------------------------------------------------------
    @property
    def base_hash(self):
        """Identity of the base weights (blake2b over names, dtypes, shapes, bytes); computed
        once, from the recorded base objects (never from a delta)."""
        if self._base_hash is None:
            self._base_hash = hash_tensors(self._base)
        return self._base_hash

    def base_tensor(self, name):
        """The base parameter/buffer `name` ("<module>.<attr>"), whatever is applied."""
        return self._base[name]

    def verify_base(self):
        """True when the base weights still hash to the value recorded at the first hash."""
        h = self.base_hash
        return hash_tensors(self._base) == h

    def linears(self):
        return {n: m for n, m in self._mods.items() if isinstance(m, torch.nn.Linear)}

    # ---- serving ------------------------------------------------------------------------
    def online(self):
        """Adapt as it serves: every forward may update the current user's delta."""
        self._online = True
        return self

    def offline(self):
        """Serve the current delta as it is; stop adapting."""
        self._online = False
        return self

    @property
    def is_online(self):
        return self._online

    @property
    def delta(self):
        return self._active

    def forward(self, *args, **kwargs):
        """One forward of the model with whatever delta is applied (no adaptation)."""
        return self.model(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        if not self._online:
            if self._active is None:
                return self.model(*args, **kwargs)
            return self.method.predict(self, *args, **kwargs)
        d = self._ensure_delta()
        out = self.method.adapt(self, *args, **kwargs)
        d.steps += 1
        d.samples += self.method.batch_size(*args, **kwargs)
        self.counters["steps"] += 1
        if not d.finite():
            # the update produced NaN/Inf: the delta is dropped (the base is untouched) and
            # this request is answered by the base
            self.counters["nan_discards"] += 1
            self._forget(d)
            return self._base_forward(*args, **kwargs)
        if self._active is d and self.guard is not None and self.guard.observe(self.method.logits(out)):
            self.counters["collapse_resets"] += 1
            self._forget(d)
        if self.lifetime.per_request and self._active is d:
            self._expire(d, "request")
        return out

    def _base_forward(self, *args, **kwargs):
        with self.using(None), torch.no_grad():
            return self.model(*args, **kwargs)

    # ---- lifetimes ----------------------------------------------------------------------
    def reset(self, all_users=False):
        """Back to the base, bit for bit: the current user's delta (every user's with
        all_users=True) is dropped without going to its destination."""
        for u in (list(self.deltas) if all_users else [self.user]):
            d = self.deltas.get(u)
            if d is not None:
                self._forget(d)
        if self.guard is not None:
            self.guard.reset()
        return self

    def method_reset(self):
        """The method's own recovery (SAR's model recovery): drop the delta; the next step
        starts a fresh one."""
        self.counters["method_resets"] += 1
        if self._active is not None:
            self._forget(self._active)

    def end_session(self):
        """Ends the session (as the "session_end" event does, for this wrapper only)."""
        self._on_event("session_end", {})

    def switch_user(self, user):
        """Serve `user`'s delta (made on their first adapted request, or loaded from their
        Persistent file). The outgoing delta is parked in memory, unless the lifetime ends
        on "user_switch". Costs one dict store per tensor of the two deltas."""
        if user == self.user:
            return
        if self._active is not None:
            self._remove()
        self.user = user
        d = self.deltas.get(user)
        if d is None and isinstance(self.lifetime, Persistent):
            path = self.lifetime.path_for(user)
            if os.path.exists(path):
                d = self.load(path, apply=False)
                self.deltas[user] = d
        if d is not None:
            self._apply(d)
        if self.guard is not None:
            self.guard.reset()

    def _on_event(self, name, payload):
        lt = self.lifetime
        if isinstance(lt, Persistent) and name in lt.save_on:
            for u, d in list(self.deltas.items()):
                self._save(d, lt.path_for(u))
        if lt.ends_on(name):
            for d in list(self.deltas.values()):
                self._expire(d, name)
        if name == "user_switch" and "user" in payload:
            self.switch_user(payload["user"])

    def _expire(self, d, reason):
        self.counters["expired"] += 1
        dest = self.on_expiry
        if isinstance(dest, Keep):
            self.kept[d.user] = d
        elif isinstance(dest, Save):
            self._save(d, dest.path.format(user=d.user, event=reason, n=self.counters["expired"]))
        elif isinstance(dest, HandTo):
            update, meta = self.update_of(d, reason)
            dest.sink(update, meta)
            self.counters["handed"] += 1
        else:
            assert isinstance(dest, Discard)
        self._forget(d)

    def restore(self, user=None):
        """Re-applies a delta the "keep" destination kept (for `user`, default the current)."""
        user = self.user if user is None else user
        if user not in self.kept:
            raise KeyError(f"no kept delta for user {user!r}")
        d = self.kept.pop(user)
        old = self.deltas.get(user)
        if old is not None:
            self._forget(old)
        self.deltas[user] = d
        if user == self.user:
            self._apply(d)
        return d

    def update_of(self, d, reason="request"):
        """The federated hand-off of delta `d`: (update, meta) as lifetimes.py documents."""
        update, kinds = {}, {}
        with torch.no_grad():
            for k, v in d.tensors.items():
                b = self._base[k]
                if v.is_floating_point():
                    update[k] = (v.detach() - b).clone()
                    kinds[k] = "full_diff"
            for k, (a, b) in d.lora.items():
                update[f"{k}.lora_A"] = a.detach().clone()
                update[f"{k}.lora_B"] = b.detach().clone()
                kinds[f"{k}.lora_A"], kinds[f"{k}.lora_B"] = "lora_A", "lora_B"
        meta = {"base_hash": self.base_hash, "method": d.method, "user": d.user, "steps": d.steps,
                "samples": d.samples, "lora_scale": d.lora_scale, "reason": reason, "kinds": kinds}
        return update, meta

    # ---- files --------------------------------------------------------------------------
    def save(self, path, user=None):
        """Writes the current (or `user`'s) delta to `path` with the base hash."""
        d = self.deltas.get(self.user if user is None else user)
        if d is None:
            raise DeltaError(f"user {self.user if user is None else user!r} has no delta to save")
        self._save(d, path)

    def _save(self, d, path):
        save_delta(d, path, self.base_hash)
        self.counters["saved"] += 1

    def load(self, path, user=None, apply=True):
        """Reads a delta file, verifies it against this base (hash, names, shapes, method)
        and makes it `user`'s (default: the current user's) delta; raises
        BaseMismatchError / DeltaFormatError / FileNotFoundError before touching anything."""
        meta, tensors = read_delta_file(path)
        full, nulls, lora, scale = verify_delta_file(meta, tensors, path, self.base_hash, self.method.name,
                                                     self._base, self.linears())
        user = self.user if user is None else user
        d = self.method.new_delta(self, user=user, init=False)
        for k, v in full.items():
            if k not in d.tensors:
                raise DeltaError(f"{path}: {k!r} is not adapted by {self.method.name}")
            with torch.no_grad():
                d.tensors[k].copy_(v)
        for k, (a, b) in lora.items():
            if k not in d.lora:
                raise DeltaError(f"{path}: {k!r} has no LoRA factors under {self.method.name}")
            if d.lora[k][0].shape != a.shape:
                raise DeltaError(f"{path}: LoRA rank of {k!r} is {a.shape[0]}, the method's is {d.lora[k][0].shape[0]}")
            with torch.no_grad():
                d.lora[k][0].copy_(a)
                d.lora[k][1].copy_(b)
        d.lora_scale = scale
        d.steps = int(meta.get("steps", 0))
        d.samples = int(meta.get("samples", 0))
        self.method.init_state(self, d)
        if apply:
            old = self.deltas.get(user)
            if old is not None:
                self._forget(old)
            self.deltas[user] = d
            if user == self.user:
                self._apply(d)
        return d

    # ---- memory -------------------------------------------------------------------------
    def memory(self):
        """Bytes per user's delta: {"user": {"delta": tensors, "with_state": + method state}}."""
        return {u: {"delta": d.nbytes(state=False), "with_state": d.nbytes(state=True)} for u, d in self.deltas.items()}

    # ---- applying -----------------------------------------------------------------------
    def _ensure_delta(self):
        if self._active is None:
            d = self.deltas.get(self.user)
            if d is None:
                d = self.method.new_delta(self, user=self.user)
                self.method.init_state(self, d)
                self.deltas[self.user] = d
            self._apply(d)
        return self._active

    def _set(self, name, value):
        mname, attr = _split(name)
        m = self._mods[mname]
        if name in self._param_names:
            m._parameters[attr] = value
        else:
            m._buffers[attr] = value

    def _apply(self, d):
        """Puts `d` into the model: O(size of d) dict stores, no copy."""
        if self._active is not None:
            self._remove()
        for k, v in d.tensors.items():
            self._set(k, v)
        for k in d.nulls:
            self._set(k, None)
        attrs = []
        for (mname, attr), v in d.attrs.items():
            m = self._mods[mname]
            attrs.append((m, attr, m.__dict__.get(attr, _MISSING)))
            object.__setattr__(m, attr, v)
        modes = []
        if d.train is not None:
            for mname in d.train:
                m = self._mods[mname]
                modes.append((m, m.training))
                m.training = True
        for k in d.lora:
            if k not in self._hooked:
                self._hook_lora(k)
        self._restore = (attrs, modes)
        self._active = d

    def _remove(self):
        d = self._active
        if d is None:
            return
        for k in d.tensors:
            self._set(k, self._base[k])
        for k in d.nulls:
            self._set(k, self._base[k])
        attrs, modes = self._restore
        for m, attr, old in reversed(attrs):
            if old is _MISSING:
                m.__dict__.pop(attr, None)
            else:
                object.__setattr__(m, attr, old)
        for m, was in reversed(modes):
            m.training = was
        self._restore = None
        self._active = None

    def _forget(self, d):
        if self._active is d:
            self._remove()
        if self.deltas.get(d.user) is d:
            del self.deltas[d.user]

    @contextlib.contextmanager
    def using(self, d):
        """Temporarily serves delta `d` (None: the base) — CoTTA's teacher and anchor."""
        prev = self._active
        if prev is d:
            yield
            return
        self._remove()
        if d is not None:
            self._apply(d)
        try:
            yield
        finally:
            self._remove()
            if prev is not None:
                self._apply(prev)

    def _hook_lora(self, name):
        wr = weakref.ref(self)

        def hook(module, args, out):
            w = wr()
            d = w._active if w is not None else None
            if d is None:
                return None
            f = d.lora.get(name)
            if f is None:
                return None
            a, b = f
            return out + F.linear(F.linear(args[0], a), b) * d.lora_scale

        self._hook_handles.append(self._mods[name].register_forward_hook(hook))
        self._hooked.add(name)

    def close(self):
        """Detaches from the model: base restored, hooks and event subscription removed."""
        self.reset(all_users=True)
        for h in self._hook_handles:
            h.remove()
        self._hook_handles.clear()
        self._hooked.clear()
        self._sub.cancel()

    def __repr__(self):
        return (f"Adapted({type(self.model).__name__}, method={self.method!r}, lifetime={self.lifetime!r}, "
                f"on_expiry={self.on_expiry!r}, user={self.user!r}, online={self._online})")


def wrap(model, method, lifetime=None, on_expiry="discard", guard=_DEFAULT, user="default"):
    """Wraps `model` for test-time adaptation with `method` (adapt.Tent(), ...).

    lifetime   Episodic() / Session() / Until(*events) / Persistent(path); default: the
               method's own (MEMO: Episodic, others: Session)
    on_expiry  "discard" (default), "keep", Save(path), HandTo(sink) or a callable sink
    guard      a CollapseGuard (default: diversity below 0.2), or None
    user       the first user served
    The model's parameters are frozen (requires_grad False); its values are never written."""
    return Adapted(model, method, lifetime=lifetime, on_expiry=on_expiry, guard=guard, user=user)
