"""Part forty's facenet pruning (40j): a pruning module's helper builds
`tf.assign(w, w * mask)` from numpy masks taken from the weights' values
read out of the session (`w.eval()`), a training script that names no
sink builds that op once per round and passes it, with the train op, to
a function whose loop of steps runs it before and after each step: the
mask is held through the round's steps, so the pruned weights are
frozen at zero: found. The helper module's own `__main__` block, which
applies the masks once with no training, must not hide that caller.
Silent: the mask re-drawn and the op rebuilt inside the loop of steps
(passed in, then rebound there too),
a loop that runs the op beside no step (evaluation), a mask computed in
the graph from the weights (re-drawn with each run; beside weights a
helper returns after running the initialiser too), the op run once
after the round's steps (the weights train freely between), a function
running one step per call while the mask is re-drawn per call."""

import pytest

import scanned

_PRUNING = '''
import numpy as np
import tensorflow as tf


def get_masks(weights, percentile):
    values = np.array([weight.eval() for weight in weights])
    masks = []
    for weight in values:
        low = np.percentile(weight[weight != 0], percentile / 2.0)
        high = np.percentile(weight[weight != 0], 100 - percentile / 2.0)
        masks.append((weight <= low) + (weight >= high))
    return masks


def apply_masks(weights, masks):
    assign_op = [tf.assign(weight, tf.multiply(weight, mask))
                 for weight, mask in zip(weights, masks)]
    return tf.group(*assign_op)
'''

_MAIN = '''

if __name__ == '__main__':
    with tf.Session() as sess:
        weights = tf.trainable_variables()
        for epoch, rate in [(2, 10), (2, 20)]:
            masks = get_masks(weights, rate)
            sess.run(apply_masks(weights, masks))
'''

_MODEL = '''
import tensorflow as tf


def train(loss, global_step):
    opt = tf.train.AdamOptimizer(0.1)
    grads = opt.compute_gradients(loss)
    apply_op = opt.apply_gradients(grads, global_step=global_step)
    with tf.control_dependencies([apply_op]):
        train_op = tf.no_op(name='train')
    return train_op
'''

_PLAIN = '''
import tensorflow as tf


def train(loss, global_step):
    return tf.train.AdamOptimizer(0.1).minimize(loss, global_step)
'''

# The training script: no sink of its own (`flow.calls_of` reads it not).
_TRAIN = '''
import numpy as np
import tensorflow as tf
import model
import pruning


def train_epoch(sess, loss, train_op, epoch_size, assign_all=None):
    batch = 0
    while batch < epoch_size:
        {before}
        err, _ = sess.run([loss, train_op])
        {after}
        batch += 1
    {end}


def main(rates, epoch_size):
    x = tf.placeholder(tf.float32, [None, 4])
    w = tf.get_variable('weights', [4, 2])
    global_step = tf.train.get_or_create_global_step()
    loss = tf.reduce_sum(tf.matmul(x, w))
    train_op = model.train(loss, global_step)
    weights = [w]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        epoch, turn = 0, 0
        while epoch < 100:
            if epoch == 0:
                masks = {masks}
                assign_all = pruning.apply_masks(weights, masks)
            sess.run(assign_all)
            {call}
            epoch += 1
            if epoch % 10 == 0:
                turn += 1
                masks = {masks}
                assign_all = pruning.apply_masks(weights, masks)


if __name__ == '__main__':
    main([10, 20, 30], 1000)
'''

_RUN = "sess.run(assign_all)"
_CALL = "train_epoch(sess, loss, train_op, epoch_size, assign_all)"
_HELD = "pruning.get_masks(weights, rates[turn])"
_IN_GRAPH = "[tf.cast(tf.abs(v) > 0.1, tf.float32) for v in weights]"


def _train(before=_RUN, after=_RUN, end="pass", call=_CALL, masks=_HELD):
  return _TRAIN.replace("{before}", before).replace("{after}", after).replace(
      "{end}", end).replace("{call}", call).replace("{masks}", masks)


def _project(train, main=True, model=_MODEL):
  return {"pruning.py": _PRUNING + (_MAIN if main else ""),
          "model.py": model, "train.py": train}


def _line():
  return next(i for i, text in enumerate(_PRUNING.split("\n"), 1)
              if "tf.assign(" in text)


_FOUND = [("weight-remask", "pruning.py", _line())]

# A project function that runs the initialiser and returns the weights
# themselves: no values read out, the mask still computed in the graph.
_READY = '''

def ready(sess, weights):
    sess.run(tf.global_variables_initializer())
    return weights
'''

# A step function of one step per call; the mask re-drawn per call.
_ONE_STEP = '''
import tensorflow as tf
import model
import pruning


def one_step(sess, train_op, assign_all):
    sess.run(train_op)
    sess.run(assign_all)


def main(weights, loss, global_step):
    train_op = model.train(loss, global_step)
    sess = tf.Session()
    for step in range(1000):
        masks = pruning.get_masks(weights, 50)
        assign_all = pruning.apply_masks(weights, masks)
        one_step(sess, train_op, assign_all)


main(tf.trainable_variables(), None, None)
'''

# The mask re-drawn and the op rebuilt inside the loop of steps.
_REDRAWN = _train(
    before="sess.run(pruning.apply_masks(tf.trainable_variables(), "
    "pruning.get_masks(tf.trainable_variables(), 50)))", after="pass",
    call="train_epoch(sess, loss, train_op, epoch_size)")

def _probe(pruning, train, model=_MODEL):
  return {"pruning.py": pruning + _MAIN, "model.py": model, "train.py": train}


# The facenet code as written: the op run under `if assign_all:` (its
# own test, the same each turn), the step in both arms of an `if`, masks
# appended by name, a layer left whole by `np.ones`.
_AS_WRITTEN = _train(before="if assign_all:\n            sess.run(assign_all)",
                     after="if assign_all:\n            sess.run(assign_all)"
                     ).replace("        err, _ = sess.run([loss, train_op])",
                               """        if batch % 100 == 0:
            err, _ = sess.run([loss, train_op])
        else:
            err, _, n = sess.run([loss, train_op, global_step])""")
_NAMED_MASKS = _PRUNING.replace(
    "        masks.append((weight <= low) + (weight >= high))", """\
        mask = (weight <= low) + (weight >= high)
        if percentile == 0:
            mask = np.ones(weight.shape)
        masks.append(mask)""")
# The step in one arm only, the other evaluating: turns without a step.
_STEP_IN_ONE_ARM = _train().replace(
    "        err, _ = sess.run([loss, train_op])", """\
        if batch % 2 == 0:
            err, _ = sess.run([loss, train_op])
        else:
            err = sess.run(loss)""")

_CASES = [
    pytest.param(_project(_train()), _FOUND, id="facenet-rounds"),
    pytest.param(_project(_train(), model=_PLAIN), _FOUND,
                 id="plain-minimize-step"),
    pytest.param(_project(_train(call=(
        "train_epoch(sess, loss, train_op=train_op, epoch_size=epoch_size, "
        "assign_all=assign_all)"))), _FOUND, id="passed-by-keyword"),
    pytest.param(_project(_train(before="pass")), _FOUND, id="after-only"),
    pytest.param(_project(_train(), main=False), _FOUND, id="no-main-block"),
    pytest.param(_probe(_NAMED_MASKS, _AS_WRITTEN),
                 [("weight-remask", "pruning.py", _line() + 3)],
                 id="facenet-as-written"),
    pytest.param(_project(_STEP_IN_ONE_ARM), [], id="step-in-one-arm"),
    pytest.param(_probe(_PRUNING.replace(
        "masks.append((weight <= low) + (weight >= high))",
        "masks.append(np.ones(weight.shape))"), _train()), [],
                 id="only-masks-of-ones"),
    pytest.param(_project(_REDRAWN), [], id="redrawn-each-step"),
    pytest.param(_project(_train(call=(
        "train_epoch(sess, loss, loss, epoch_size, assign_all)"))), [],
                 id="evaluation-loop"),
    pytest.param(_project(_train(masks=_IN_GRAPH)), [],
                 id="mask-in-graph"),
    pytest.param(_project(_train(before="pass", after="pass", end=_RUN)),
                 [], id="once-after-round"),
    pytest.param(_project(_ONE_STEP), [], id="one-step-per-call"),
    pytest.param(_project(_train(after=(
        "assign_all = pruning.apply_masks(tf.trainable_variables(), "
        "pruning.get_masks(tf.trainable_variables(), 50))")))
                 , [], id="op-rebuilt-in-the-loop"),
    pytest.param(_project(_train(masks=_IN_GRAPH).replace(
        "    weights = [w]\n", "").replace(
            "        epoch, turn = 0, 0\n", "        weights = model.ready("
            "sess, [w])\n        epoch, turn = 0, 0\n"),
        model=_MODEL + _READY), [], id="in-graph-beside-initialised"),
]


@pytest.mark.parametrize("files, expected", _CASES)
def test_round_masks(files, expected):
  found = [f for f in scanned.in_project(files) if f[0] == "weight-remask"]
  assert found == expected


# Look-alikes an independent read found reported (each must stay silent).
_GIVEN = "assign_all = pruning.apply_masks(weights, masks)"
# A: the mask computed in the graph; another argument (a step number)
# read out of the session.
_STEP_NUMBER = _probe(
    _PRUNING.replace("def apply_masks(weights, masks):",
                     "def apply_masks(weights, masks, step=0):"),
    _train(masks=_IN_GRAPH).replace(_GIVEN, (
        "step = model.current_step(sess, global_step)\n"
        "                assign_all = pruning.apply_masks(weights, masks, "
        "step)")), _MODEL + '''

def current_step(sess, global_step):
    step = sess.run(global_step)
    return step
''')
# B: a project method spelled `run` drawing a fresh mask in the graph.
_SAMPLED = _probe(_PRUNING.replace(
    _PRUNING[_PRUNING.index("def get_masks"):_PRUNING.index(
        "def apply_masks")], '''class Sampler(object):
    def run(self, weight, rate):
        return tf.cast(tf.random_uniform(tf.shape(weight)) > rate, tf.float32)


def get_masks(weights, percentile):
    sampler = Sampler()
    masks = [sampler.run(w, percentile / 100.0) for w in weights]
    return masks


'''), _train())
# C: the op run at a round's first step only; D: only in another arm.
_FIRST_STEP = _probe(_PRUNING, _train(
    before="if batch == 0:\n            sess.run(assign_all)", after="pass"))
_OTHER_ARM = _probe(_PRUNING, _train(before="pass", after="pass").replace(
    "err, _ = sess.run([loss, train_op])",
    "if assign_all is None:\n            err, _ = sess.run([loss, train_op])"
    "\n        else:\n            sess.run(assign_all)\n"
    "            err = sess.run(loss)"))
# E: mask variables the loop of steps reassigns from the weights.
_MASK_VARIABLES = _probe(_PRUNING.replace(
    "zip(weights, masks)]", "zip(weights, mvars)]").replace(
        '''    assign_op = [''', '''    mvars = [tf.Variable(m, trainable=False,
                         collections=['masks']) for m in masks]
    assign_op = [''') + '''

def update_masks(weights, threshold):
    return tf.group(*[m.assign(tf.cast(tf.abs(w) > threshold, tf.float32))
                      for w, m in zip(weights, tf.get_collection('masks'))])
''', _train(before="sess.run(update)\n        sess.run(assign_all)").replace(
    "assign_all=None):", "assign_all=None, update=None):").replace(
        _GIVEN + "\n            sess.run(assign_all)", _GIVEN + (
            "\n                update = pruning.update_masks(weights, 0.1)"
            "\n            sess.run(assign_all)")).replace(
                _CALL, _CALL[:-1] + ", update)"))
# F: placeholder masks fed with each step from the current weights.
_FED = _probe(_PRUNING + '''

def placeholders(sess, weights):
    shapes = sess.run([tf.shape(w) for w in weights])
    return [tf.placeholder(tf.float32, s) for s in shapes]
''', _train(before=(
    "sess.run(assign_all, feed_dict={p: (np.abs(v) > 0.1) for p, v in "
    "zip(phs, sess.run(weights))})"), after="pass").replace(
        "assign_all=None):", "assign_all=None, phs=None, weights=None):"
    ).replace("masks = pruning.get_masks(weights, rates[turn])\n"
              "                " + _GIVEN,
              "phs = pruning.placeholders(sess, weights)\n"
              "                assign_all = pruning.apply_masks(weights, phs)"
              ).replace(_CALL, _CALL[:-1] + ", phs, weights)"))
# H: a scalar rescale from numbers read out: no mask.
_RESCALED = _probe(_PRUNING.replace(
    "masks.append((weight <= low) + (weight >= high))",
    "masks.append(float(percentile) / (np.abs(weight).max() + 1e-8))"),
    _train())

_PROBES = [
    pytest.param(_STEP_NUMBER, id="A-in-graph-mask-step-read-out"),
    pytest.param(_SAMPLED, id="B-project-run-random-mask"),
    pytest.param(_FIRST_STEP, id="C-round-first-step-only"),
    pytest.param(_OTHER_ARM, id="D-op-in-another-arm"),
    pytest.param(_MASK_VARIABLES, id="E-mask-variables-reassigned"),
    pytest.param(_FED, id="F-placeholder-fed-each-step"),
    pytest.param(_RESCALED, id="H-scalar-rescale"),
    pytest.param(_probe(_PRUNING.replace(
        "masks.append((weight <= low) + (weight >= high))",
        "masks.append(weight.max() > percentile)"), _train()),
                 id="H-one-comparison-of-a-maximum"),
    pytest.param(_probe(_PRUNING.replace(
        "masks.append((weight <= low) + (weight >= high))",
        "top = weight.max()\n        masks.append(top > percentile)"),
                        _train()), id="H-a-named-maximum-compared"),
]


@pytest.mark.parametrize("files", _PROBES)
def test_round_mask_look_alikes_silent(files):
  assert files != _project(_train())  # Each probe changes the found case.
  assert [f for f in scanned.in_project(files)
          if f[0] == "weight-remask"] == []
