"""`tfpartial scan` reads a helper as a tower of `compute_gradients`
pairs (`_towers._returns_pairs`) when every return of it that gives a
value gives them: a way out that gives no value (an `if` without
`else`, a loop, a handler that passes) returns None, and the transpose
of a list holding None raises, so every run that works got pairs from
each tower and the slice keeps some variables, found. A name bound
again (a loop, `:=`, `except ... as`, `with ... as`) after the call may
hold something else, so the helper is no tower: a slice of the
transpose then picks fields, silent. Helpers that end in a return on
every path (`if`/`else`, `with`, `try` whose handlers raise) are
towers too. Built on test_scan_tower_helpers' program (a
`tower_loss`/`average_gradients` pair, the helper's body `%s`)."""

import pytest

import scanned
import test_scan_tower_helpers as tower_helpers


def _found(body):
  return scanned.found(tower_helpers._HELPER % body)


@pytest.mark.parametrize("body, line", [
    ("if loss is not None:\n        return opt.compute_gradients(loss)", 12),
    ("for _ in range(1):\n        return opt.compute_gradients(loss)", 12),
    ("try:\n        return opt.compute_gradients(loss)\n"
     "      except ValueError:\n        pass", 14),
    ("while loss is not None:\n        return opt.compute_gradients(loss)",
     12),
], ids=["if_without_else", "loop", "handler_passes", "while"])
def test_a_helper_that_may_fall_off_its_end_is_a_tower(body, line):
  assert _found(body) == [("var-list-filter", line)]


@pytest.mark.parametrize("body", [
    "grads = opt.compute_gradients(loss)\n"
    "      for grads in [(grads, loss)]:\n        pass\n      return grads",
    "grads = opt.compute_gradients(loss)\n"
    "      if (grads := (grads, loss)):\n        pass\n      return grads",
    "grads = opt.compute_gradients(loss)\n      try:\n        pass\n"
    "      except ValueError as grads:\n        pass\n      return grads",
], ids=["loop_target", "walrus", "except_as"])
def test_a_returned_name_bound_again_is_no_tower(body):
  assert _found(body) == []


@pytest.mark.parametrize("body, line", [
    ("if loss is not None:\n        return opt.compute_gradients(loss)\n"
     "      else:\n        return opt.compute_gradients(loss * 0)", 14),
    ("with tf.name_scope('tower'):\n"
     "        return opt.compute_gradients(loss)", 12),
    ("try:\n        return opt.compute_gradients(loss)\n"
     "      except ValueError:\n        raise", 14),
    ("if loss is None:\n        raise ValueError('no loss')\n"
     "      return opt.compute_gradients(loss)", 13),
], ids=["both_arms", "with", "handler_raises", "raise_then_return"])
def test_a_helper_returning_pairs_on_every_path_is_a_tower(body, line):
  assert _found(body) == [("var-list-filter", line)]
