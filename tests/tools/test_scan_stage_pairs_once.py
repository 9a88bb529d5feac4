"""`tfpartial scan`'s `var-list-filter` reads a function's stage tests and
where its steps' ops are kept once, not once per pair of its steps: an
Estimator's `model_fn` building many stages' steps and picking one by
the stage (`op_s1 if stage == 1 else op_s2`) is read in work linear in
its steps (part twenty-three's combinetf2 spent most of its scan
here)."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan.idioms._runs import _chosen_stage


def _model_fn(steps):
  made = "".join(f"""\
      loss_s{i} = tf.reduce_mean(tf.square(out['s{i}'] - labels))
      op_s{i} = tf.train.AdamOptimizer(0.001).minimize(
          loss_s{i}, var_list=tf.get_collection(
              tf.GraphKeys.TRAINABLE_VARIABLES, 's{i}'))
""" for i in range(steps))
  return textwrap.dedent("""\
    def model_fn(features, labels, mode, stage, model_class):
      out = model_class()(features)
""") + textwrap.indent(textwrap.dedent(made), "  ") + textwrap.indent(
      textwrap.dedent("""\
        train_op = op_s0 if stage == 0 else op_s1
        return tf.estimator.EstimatorSpec(mode, loss=loss_s0,
                                          train_op=train_op)
"""), "  ")


def _model(steps):
  built = "".join(
      f"    with tf.variable_scope('s{i}'):\n"
      f"      out_{i} = tf.layers.dense({f'out_{i - 1}' if i else 'x'}, 2)\n"
      for i in range(steps))
  kept = ", ".join(f"'s{i}': out_{i}" for i in range(steps))
  return ("class Model(object):\n  def __call__(self, x):\n" + built +
          f"    return {{{kept}}}\n")


def _counted(monkeypatch, steps):
  calls = {"_choices": 0, "_kept_as": 0}
  for name in calls:
    real = getattr(_chosen_stage, name)

    def counting(*args, real=real, name=name):
      calls[name] += 1
      return real(*args)
    monkeypatch.setattr(_chosen_stage, name, counting)
  scanned.in_project({"model.py": _model(steps),
                      "run.py": _model_fn(steps)})
  monkeypatch.undo()
  return calls


@pytest.mark.parametrize("steps", [4, 12])
def test_stage_tests_read_once_per_function(monkeypatch, steps):
  calls = _counted(monkeypatch, steps)
  assert calls["_choices"] <= 2  # `picks`, then the pairs' one reading.
  assert calls["_kept_as"] <= steps  # Each step's op, once.
