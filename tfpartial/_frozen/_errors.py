"""One function per user mistake: each message is worded once, here.

Every family and entry point raises the same words for the same mistake,
so a user learns one sentence, and the tests pin it once
(`tests/guarantees/test_errors.py`).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from tfpartial._frozen import _variables
from tfpartial._frozen._types import Variable


def not_trained(missing: Sequence[Variable],
                trained: Iterable[Variable]) -> ValueError:
  """The spec names variables that the step or optimizer does not train."""
  named = ", ".join(_variables.describe(v) for v in missing)
  given = ", ".join(_variables.checkpoint_name(v) for v in trained) or "none"
  verb = "is" if len(missing) == 1 else "are"
  return ValueError(
      f"the spec names {named}, which {verb} not among the variables being "
      f"trained ({given}); was the spec built for another model or graph, or "
      "is the variable not trainable? To train with nothing frozen, use the "
      "optimizer without the spec.")


def nothing_to_train(argument: str,
                     variables: Iterable[Variable]) -> ValueError:
  """Every variable given to a step is fully frozen."""
  names = ", ".join(_variables.checkpoint_name(v) for v in variables)
  return ValueError(
      f"every variable in `{argument}` is fully frozen by the spec ({names}); "
      "there is nothing to train.")


def unbound(optimizer_class: type) -> ValueError:
  """A wrapped optimizer loaded from a config has no variables to bind to."""
  return ValueError(
      f"{optimizer_class.__name__} was loaded from a config; its spec binds "
      "to the variables it is first built or stepped on.")


def unbound_late(optimizer_class: type) -> ValueError:
  """A wrapped optimizer whose spec binds at its first step, asked before
  any step told it the variables."""
  return ValueError(
      f"the {optimizer_class.__name__}'s spec was loaded without variables; "
      "it binds by checkpoint name to the variables of its first step.")


def late_needs_variables(what: str, names: Iterable[str]) -> ValueError:
  """Something a spec loaded without variables cannot answer yet."""
  return ValueError(
      f"{what} needs the spec's variables, and this spec "
      f"({', '.join(names)}) was loaded without them: it binds by "
      "checkpoint name when it first steps. Pass `variables` to "
      "`tfpartial.load_spec` to ask it before then.")


def late_union(optimizer_class: type) -> ValueError:
  """Wrapping again where a spec binds only at its first step."""
  return ValueError(
      f"cannot wrap the {optimizer_class.__name__} again: a spec loaded "
      "without variables binds only at its first step, so it has no "
      "variables to combine with yet; load both specs with `variables`, or "
      "combine them in one spec file.")


def no_keyword_arguments(what: str, kwargs: Iterable[str]) -> TypeError:
  """Keyword arguments an entry point does not take."""
  return TypeError(f"{what} takes no keyword arguments; got {sorted(kwargs)}.")


def needs_var_list(family: str) -> TypeError:
  """`minimize` without `var_list` where the family needs one."""
  return TypeError(f"`var_list` is required with a {family} optimizer.")


def misaligned(gradients: int, variables: int) -> ValueError:
  """`spec.mask` given lists of different lengths."""
  return ValueError(
      f"`gradients` has {gradients} entries and `variables` {variables}; "
      "`spec.mask` pairs them by position, so they must be the same length.")


def loss_scale_outside(optimizer_class: type, package: str) -> ValueError:
  """Keras put a LossScaleOptimizer around a wrapped optimizer; `package`
  is the Keras package of its class (`keras` or `tf_keras`)."""
  return ValueError(
      f"a LossScaleOptimizer wraps the tfpartial optimizer "
      f"{optimizer_class.__name__} (Keras does this in `compile` under a "
      "mixed_float16 policy); its overflow check would see the frozen "
      "gradients and skip steps where only they overflow. Wrap the "
      "loss-scale optimizer instead: "
      f"`spec.wrap({package}.mixed_precision.LossScaleOptimizer(optimizer))`.")


def dropped_by_mask_gradients(mismatch: str,
                              frozen: Iterable[Variable]) -> ValueError:
  """A gradient of the wrong shape, among pairs with a fully frozen
  variable: likely `mask_gradients`' result zipped with every variable."""
  names = ", ".join(f"'{_variables.checkpoint_name(v)}'" for v in frozen)
  return ValueError(
      f"{mismatch} The spec freezes {names} entirely, and "
      "`spec.mask_gradients` leaves such variables' pairs out, so its "
      "gradients do not line up with a list of every variable: "
      "`spec.mask(gradients, variables)` keeps one gradient per variable, "
      "in order.")
