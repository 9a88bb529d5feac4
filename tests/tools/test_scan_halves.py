"""`tfpartial scan` on a model trained whole in halves: a 'full' step
that trains the trunk and the heads of a model it runs (two optimizers,
or one list joining both parts) and a head-only step in a sibling
function (a run that trains only the heads while the loss runs the
trunk). The head-only step is found; the full step, whose lists split
the model into halves of one loss, stays silent, as does a step that
trains the trunk alone for its own stage beside the heads' step.
Synthetic sources in the shape of real code (an Enformer transfer)."""

import pytest
import scanned


_MODEL = """\
    import tensorflow as tf

    class Enformer(tf.Module):
      def __init__(self):
        super().__init__()
        self._trunk = Trunk()
        self._heads = {heads}

      @property
      def trunk(self):
        return self._trunk

      @property
      def heads(self):
        return self._heads

      def __call__(self, x):
        y = self.trunk(x)
        return {{k: h(y) for k, h in self.heads.items()}}
    """

_STEPS = """\
    import tensorflow as tf
    from model import Enformer

    def make_steps(model, optimizers, loss_fn):
      opt_trunk, opt_head = optimizers

      def full_step(x, y):
        with tf.GradientTape(persistent=True) as tape:
          loss = loss_fn(y, model(x)['human'])
        {full}
    {head_step}
      return full_step

    def main():
      model = Enformer()
      return make_steps(model, (tf.keras.optimizers.Adam(),
                                tf.keras.optimizers.Adam()), None)
    """

_HEAD_STEP = """
      def head_step(x, y):
        with tf.GradientTape() as tape:
          loss = loss_fn(y, model(x)['human'])
        grads = tape.gradient(loss, {head})
        opt_head.apply_gradients(zip(grads, {head}))
"""

_HEAD = "model.heads['human'].trainable_variables"
_TRUNK = "model.trunk.trainable_variables"
_DICT = "{'human': Head(), 'mouse': Head()}"
_COMPREHENSION = "{k: Head() for k in ('human', 'mouse')}"

# The full step, written three ways: one gradient over both parts split
# between two optimizers, or one `minimize` per part.
_JOINED = ("grads = tape.gradient(loss, {trunk} + {head})\n"
           "        n = len({trunk})\n"
           "        opt_trunk.apply_gradients(zip(grads[:n], {trunk}))\n"
           "        opt_head.apply_gradients(zip(grads[n:], {head}))")
_TWO = ("opt_trunk.minimize(loss, {trunk}, tape=tape)\n"
        "        opt_head.minimize(loss, {head}, tape=tape)")
# The look-alike: the trunk alone, for its own stage (loss).
_TRUNK_ONLY = "opt_trunk.minimize(loss * 2.0, {trunk}, tape=tape)"


def _found(heads, full, head_step, head=_HEAD, trunk=_TRUNK):
  steps = _STEPS.format(
      full=full.format(trunk=trunk, head=head),
      head_step=_HEAD_STEP.format(head=head) if head_step else "")
  return scanned.in_project({"model.py": _MODEL.format(heads=heads),
                             "steps.py": steps})


@pytest.mark.parametrize("heads, full, line", [
    (_DICT, _JOINED, 18),
    (_COMPREHENSION, _JOINED, 18),
    (_DICT, _TWO, 16),
], ids=["joined", "comprehension", "two-minimize"])
def test_a_head_only_step_beside_a_full_step_is_found(heads, full, line):
  assert _found(heads, full, True) == [("var-list-filter", "steps.py", line)]


@pytest.mark.parametrize("heads, full", [
    (_DICT, _JOINED), (_COMPREHENSION, _JOINED), (_DICT, _TWO),
], ids=["joined", "comprehension", "two-minimize"])
def test_the_full_step_alone_trains_the_model_whole(heads, full):
  assert _found(heads, full, False) == []


def test_the_full_step_written_with_other_weight_lists_is_silent():
  assert _found(_DICT, _JOINED, False, head=(
      "model.heads['human'].trainable_weights"), trunk=(
          "model.trunk.variables")) == []


def test_the_trunk_trained_for_its_own_stage_is_a_pair():
  assert _found(_DICT, _TRUNK_ONLY, True) == []
