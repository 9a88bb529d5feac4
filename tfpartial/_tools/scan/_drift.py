"""The catalogue: what each idiom is, why it drifts with what is in scope,
its port, and the migration guide's section for it."""

from __future__ import annotations

from typing import Dict, List, Tuple

from tfpartial._tools.scan import _context

# The guide's page in the repository (and in the docs site built from it).
# No published address is known, so SARIF gets no `helpUri` (an absolute
# URI there would be a guess); each rule's help names this page instead.
GUIDE = "docs/migration.md"

# idiom -> (short description, the guide's anchor, the port in words).
CATALOGUE: Dict[str, Tuple[str, str, str]] = {
    "grads-mask": (
        "gradients multiplied by a mask (or rebuilt with tf.where or "
        "IndexedSlices) between computing and applying them",
        "gradient-masks",
        "drop the mask; apply with `spec.apply_gradients(optimizer, ...)` "
        "(or `optimizer = spec.wrap(optimizer)`), `spec = "
        "tfpartial.freeze(variable, index)`"),
    "stop-gradient-mix": (
        "a variable rebuilt as `m * x + (1 - m) * tf.stop_gradient(x)` in "
        "the forward pass", "tfstop_gradient-mixing",
        "use the variable itself; `tfpartial.train_only(x, mask)` and "
        "`spec.minimize(optimizer, loss)` (or a wrapped optimizer)"),
    "shadow-variable": (
        "a copy of the frozen values written back into the variable after "
        "the step", "a-shadow-variable-and-control_dependencies",
        "`tfpartial.freeze(x, index).minimize(optimizer, loss)`; drop the "
        "copy and its write"),
    "write-back": (
        "saved values written into the variable after (or beside) the "
        "train step", "saved-values-written-back-after-the-step",
        "`tfpartial.freeze(x, index)` on the train step; drop the write"),
    "var-list-filter": (
        "`var_list` built by filtering variables by name or scope (whole "
        "variables only)", "var_list-filtering-slims-trainable_scopes",
        "keep the filter (it is exact); to keep part of a variable too, "
        "`spec.minimize(optimizer, loss, var_list=var_list)`, or write the "
        "filter as a spec file (`{\"scope/**\": {\"freeze\": \"...\"}}`)"),
    "weight-remask": (
        "weights re-multiplied by a mask in a callback, a constraint or a "
        "hook", "weights-re-multiplied-by-a-mask",
        "`tfpartial.train_only(w, mask != 0)` on the optimizer "
        "(`spec.wrap(optimizer)` in `compile`); drop the re-masking"),
}


def link(idiom: str) -> str:
  """The guide's section for `idiom`, as a path in the repository.

  >>> link("grads-mask")
  'docs/migration.md#gradient-masks'
  """
  return f"{GUIDE}#{CATALOGUE[idiom][1]}"


def optimizer_drift(optimizer: _context.Optimizer | None,
                    nan: bool) -> List[str]:
  """Why an optimizer moves elements whose gradient is zero.

  >>> optimizer_drift(_context.Optimizer("AdamW", 3,
  ...     {"weight_decay": "0.004"}), nan=False)[0]
  '`AdamW` (line 3) `weight_decay=0.004` still decays the elements whose gradient is zeroed: the decay acts on the variable, not on the gradient'
  """
  reasons = []
  if optimizer is not None:
    name, settings = f"`{optimizer.name}` (line {optimizer.line})", \
        optimizer.settings
    lower = optimizer.name.lower()
    decay = settings.get("weight_decay")
    if decay or lower.startswith("adamw") or "decoupled" in lower:
      setting = f"`weight_decay={decay}`" if decay else "weight decay"
      reasons.append(
          f"{name} {setting}"
          " still decays the elements whose gradient is zeroed: the decay "
          "acts on the variable, not on the gradient")
    if "ftrl" in lower:
      l1 = settings.get("l1_regularization_strength")
      reasons.append(
          f"{name} computes each weight from its accumulators, not from its "
          "last value: a weight with a zero gradient is not kept"
          + (f" (`l1_regularization_strength={l1}` sets it to 0)" if l1
             else ""))
    elif "proximal" in lower:
      reasons.append(f"{name} shrinks weights whose gradient is zero "
                     "(its l1/l2 terms act on the weight)")
    if settings.get("momentum") not in (None, "0", "0.0") or any(
        k in lower for k in ("momentum", "adam", "rmsprop", "nadam",
                             "lion", "lamb")):
      reasons.append(
          f"{name} keeps moving the \"frozen\" elements by the "
          "momentum they carry (from a restored checkpoint's slots, or "
          "from before the mask took effect): their gradient is zeroed, "
          "not their update")
  if nan:
    reasons.append("an Inf or NaN gradient in a frozen element becomes NaN "
                   "(0 * Inf) and is written into it")
  return reasons
