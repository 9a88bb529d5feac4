"""mend41 (issue 30): two rules of t56-fix read look-alikes.

A helper of the module makes no variable only when every call in its
body is a pure op on an allowlist (`_helper_makers`): an alias of
`tf.Variable`, a `partial` of `tf.get_variable`, TF1's batch norms, a
class of the module and an RNN cell all may make one, and the
var-list-filter around the convolution is still found (the reviewer's
six cases). A helper that only reshapes or logs still makes none.

`_pinned`'s instance rule (`trainer = Trainer()`, then a loop calling
`trainer.step(x)`) holds only when nothing else binds the name in that
scope: a loop target, `with .. as`, an annotated assignment or an import
binding it to another object stays silent (the reviewer's four cases).
Synthetic sources in the shape of real code."""

import pytest
import scanned
import test_scan_helper_makers as helpers
import test_scan_instance_steps as instances

_MAKERS = [
    ("V = tf.Variable\n\ndef flip(psfs):\n"
     "    return V(tf.zeros([1, 1, 15, 1])) * psfs\n", ""),
    ("make = functools.partial(tf.get_variable, dtype=tf.float32)\n\n"
     "def flip(psfs):\n    return make('w', [1, 1, 15, 1]) * psfs\n",
     "import functools"),
    ("def flip(psfs):\n    return tf.contrib.layers.batch_norm(psfs)\n", ""),
    ("def flip(psfs):\n    return tf.layers.batch_normalization(psfs)\n", ""),
    ("class Bank(object):\n    def __init__(self):\n"
     "        self.w = tf.get_variable('w', [1, 1, 15, 1])\n\n"
     "def flip(psfs):\n    return Bank().w * psfs\n", ""),
    ("def flip(psfs):\n    cell = tf.nn.rnn_cell.LSTMCell(15)\n"
     "    out, _ = tf.nn.dynamic_rnn(cell, psfs, dtype=tf.float32)\n"
     "    return out\n", ""),
]


@pytest.mark.parametrize("helper, imports", _MAKERS)
def test_a_helper_off_the_allowlist_may_make_a_variable(helper, imports):
  assert helpers._found(helper, "flip(psfs)", imports) == helpers._at(
      helper, "flip(psfs)", imports)


@pytest.mark.parametrize("helper", [
    helpers._FLIPS,
    "def flip(psfs):\n    n = psfs.get_shape().as_list()[0]\n"
    "    return tf.nn.relu(tf.transpose(tf.reshape(psfs, [1, 1, n, 1])))\n",
])
def test_a_helper_of_pure_ops_makes_none(helper):
  assert helpers._found(helper, "flip(psfs)") == []


def test_a_bound_answer_is_not_kept_for_a_shallower_question():
  """A chain of six helpers that only reshape: asked from its far end the
  depth bound answers "may make one"; asked later from nearer, the same
  helper is read to its end and makes none."""
  from tfpartial._tools.scan import _scopes
  from tfpartial._tools.scan.idioms._wholes import _helper_makers
  import ast
  chain = "".join(f"def h{i}(k):\n  return h{i + 1}(k)\n" for i in range(6))
  module = _scopes.collect(ast.parse(
      chain + "def h6(k):\n  return tf.reshape(k, [1])\n"))
  ask = lambda name: _helper_makers.called_makes(
      ast.parse(f"{name}(x)").body[0].value, module)
  assert ask("h0") is True  # Past the bound: may make one.
  assert ask("h4") is False


@pytest.mark.parametrize("main", [
    "    trainer = Trainer()\n    trainer.step(data[0])\n"
    "    for trainer in [Evaluator(), Evaluator()]:\n"
    "        trainer.step(data)",
    "    trainer = Trainer()\n    trainer.step(data[0])\n"
    "    with Evaluator() as trainer:\n        for x in data:\n"
    "            trainer.step(x)",
    "    trainer = Trainer()\n    trainer.step(data[0])\n"
    "    trainer: Evaluator = Evaluator()\n    for x in data:\n"
    "        trainer.step(x)",
    "    trainer = Trainer()\n    trainer.step(data[0])\n"
    "    from evals import trainer\n    for x in data:\n"
    "        trainer.step(x)",
])
def test_a_name_bound_otherwise_too_is_no_instance(main):
  assert instances._found(main) == []


def test_the_instance_alone_is_still_found():
  assert instances._found(
      "    trainer = Trainer()\n    for x in data:\n"
      "        trainer.step(x)") == instances._FOUND
