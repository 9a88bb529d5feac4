"""Why an optimizer moves elements whose gradient is zeroed: the drift
that the gradient idioms share, with what is in scope."""

from __future__ import annotations

from typing import List

from tfpartial._tools.scan import _context

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
