"""`tfpartial scan` after the review of part twenty-nine's round: the
facts a check reads of a whole function are worked out once (how far the
loops around a step reach, the loop around each `append`, the slices of
an `if`'s arm), so the work grows linearly with the function; an average
of two models mixes them by scalars only, read as the list is built; a
module runs a session when its code calls one, not when its text says
`Session(`."""

import ast

import pytest

import scanned

from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._copies import _averaged

_found = scanned.in_project


def _variables_around_a_step(n):
  """One function: `n` variables made before the step, which trains two
  of them, and `n` made after it (the reviewer's shape, after zht007's
  notebook)."""
  return ("import tensorflow as tf\n\ndef f(x, y):\n" + "".join(
      f"  v{i} = tf.Variable(initial_value={i}.0)\n" for i in range(n)) +
          "  opt = tf.keras.optimizers.SGD(learning_rate=0.01)\n"
          "  with tf.GradientTape() as tape:\n"
          "    loss = tf.reduce_mean(tf.square(v0 * x + v1 - y))\n"
          "  grads = tape.gradient(loss, [v0, v1])\n"
          "  opt.apply_gradients(zip(grads, [v0, v1]))\n" + "".join(
              f"  w{i} = tf.Variable(initial_value={i}.0)\n"
              for i in range(n)))


def _appends_and_writes(n):
  """One function: `n` loops appending to one list, each followed by a
  write of the list into a model."""
  return ("def f(a, b):\n  new = []\n" + "".join(
      "  for t, s in zip(a.get_weights(), b.get_weights()):\n"
      "    new.append(0.5 * t + 0.5 * s)\n"
      "  a.set_weights(new)\n" for _ in range(n)))


def _lists_and_writes(n):
  """One function: `n` lists, each built by a loop of appends and
  written into a model."""
  return "def f(a, b):\n" + "".join(
      f"  new{i} = []\n"
      "  for t, s in zip(a.get_weights(), b.get_weights()):\n"
      f"    new{i}.append(0.5 * t + 0.5 * s)\n"
      f"  a.set_weights(new{i})\n" for i in range(n))


def _steps_in_two_arms(n):
  """One function: `n` steps of one loss on slices of a list that cover
  it in one arm of an `if`, `n` steps of it on every variable in the
  other."""
  return ("import tensorflow as tf\n\n"
          "def f(opt, loss, flag, params):\n  if flag:\n" + "".join(
              f"    a{i} = opt.minimize(loss, var_list=params[{i}:{i + 1}])\n"
              for i in range(n - 1)) +
          f"    a{n} = opt.minimize(loss, var_list=params[{n - 1}:])\n" + "  else:\n" + "".join(
                  f"    b{i} = opt.minimize(loss)\n" for i in range(n)))


def test_work_on_variables_made_after_a_step_grows_linearly():
  # Was quadratic: each later name walked every node of the function.
  small, large = (scanned.scan_work(_variables_around_a_step(n)) for n in (150, 600))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("shape", [_appends_and_writes, _lists_and_writes])
def test_work_reading_averages_grows_linearly(shape):
  # Was quadratic: each append looked at every loop, again per write.
  # The work counted is the judge of averages' own (other judges of a
  # write have their own costs).
  small, large = (scanned.scan_work(shape(n), "_averaged.py") for n in (30, 120))
  assert large <= 6 * small, (small, large)


def test_an_arms_slices_are_read_once_per_step():
  # Was cubic: the slices of the step's arm were read again for each
  # whole step of the other arm. Pairs of steps are still compared:
  # growth stays near quadratic (16), well under cubic (64).
  small, large = (scanned.scan_work(_steps_in_two_arms(n)) for n in (8, 32))
  assert large <= 24 * small, (small, large)


_FRESH = """\
    import tensorflow as tf
    def train(student, teacher, data, opt, a=0.99):
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((student(x) - y) ** 2)
            grads = tape.gradient(loss, student.trainable_variables)
            opt.apply_gradients(zip(grads, student.trainable_variables))
            {read}
            new = []
            {loop}
            teacher.set_weights(new)
    """

_READ = ("tw = teacher.get_weights(); sw = student.get_weights()")
_LOOP = ("for t, s in zip(tw, sw):\n"
         "                new.append(a * t + (1 - a) * s)")


def test_an_average_read_as_the_list_is_built_is_silent():
  assert _found(_FRESH.format(read=_READ, loop=_LOOP)) == []


_HELPER = """\
def update(ema, model, {params}):
    {before}
    new = []
    {loop}
    ema.set_weights(new)
"""


def _two_models(params="d=0.99", before="pass", loop=None):
  """`_averaged.from_two_models` of `update`'s write into `ema`."""
  loop = loop or ("for e, w in zip(ema.get_weights(), model.get_weights()):"
                  "\n        new.append(e * d + w * (1 - d))")
  tree = ast.parse(_HELPER.format(params=params, before=before, loop=loop))
  scope = list(_scopes.collect(tree).all())[1]
  return _averaged.from_two_models(scope, ast.Name("ema"), ast.Name("new"))


@pytest.mark.parametrize("params, before, loop, expected", [
    pytest.param("d=0.99", "pass", None, True, id="decay-default"),
    pytest.param("d", "pass", None, True, id="decay-passed"),
    pytest.param("step", "d = min(0.99, (1 + step) / (10 + step))", None,
                 True, id="decay-warmed-up"),
    # Set again from itself (meta-pseudo-labels' `decay = 1.0 if step <
    # start else decay`).
    pytest.param("step", "d = 1.0 - min(0.99, (step + 1.0) / (step + 10.0));"
                 " d = 1.0 if step < 5 else d", None, True,
                 id="decay-set-from-itself"),
    # On one line: the append is in the loop all the same.
    pytest.param("d=0.99", "pass",
                 "for e, w in zip(ema.get_weights(), model.get_weights()): "
                 "new.append(e * d + w * (1 - d))", True, id="one-line-loop"),
    # A mask, not a number: the elements it chooses are put back.
    pytest.param("masks", "d = masks[0]", None, False, id="mask-element"),
    pytest.param("shape", "d = np.ones(shape)", None, False, id="mask-made"),
    pytest.param("d=None", "pass", None, False, id="mask-parameter"),
    # The target's weights read before the list is built: saved values.
    pytest.param("d=0.99", "saved = ema.get_weights()",
                 "for step in range(3):\n"
                 "        for e, w in zip(saved, model.get_weights()):\n"
                 "            new.append(e * d + w * (1 - d))", False,
                 id="saved-before-the-loop"),
    pytest.param("d=0.99", "now = ema.get_weights()",
                 "for e, w in zip(now, model.get_weights()):\n"
                 "        new.append(e * d + w * (1 - d))", True,
                 id="read-beside-the-list"),
])
def test_an_average_mixes_two_live_models_by_scalars(params, before, loop,
                                                     expected):
  assert _two_models(params, before, loop) is expected


def test_a_copy_of_the_target_saved_before_the_loop_is_no_live_model():
  source = _FRESH.replace("    def train(student, teacher, data, opt, a=0.99):\n",
                          "    def train(student, teacher, data, opt, a=0.99):\n"
                          "        tw = teacher.get_weights()\n").format(
      read="sw = student.get_weights()", loop=_LOOP)
  assert _found(source) == [("write-back", "t.py", 13)]


_UNFETCHED = '''\
    """Run it in a tf.Session() of your own."""
    import tensorflow as tf

    def train(d_loss, g_loss, steps):
        opt = tf.compat.v1.train.AdamOptimizer(1e-3)
        t_vars = tf.compat.v1.trainable_variables()
        d_vars = [v for v in t_vars if 'd_' in v.name]
        g_vars = [v for v in t_vars if 'g_' in v.name]
        train_all = opt.minimize(d_loss)
        d_step = opt.minimize(d_loss, var_list=d_vars)
        g_step = opt.minimize(g_loss, var_list=g_vars)
        {runner}
        for _ in range(steps):
            runner.run([d_step, g_step])
    '''


@pytest.mark.parametrize("runner, expected", [
    # A session made: the train op nothing fetches never runs.
    pytest.param("runner = tf.compat.v1.Session()", [], id="session"),
    pytest.param("runner = tf.compat.v1.train.MonitoredTrainingSession()",
                 [], id="monitored-session"),
    # Only the docstring, a string and a comment say `Session(`: no
    # session, the whole step is one, beside the filtered one.
    pytest.param("runner = make_runner()",
                 [("var-list-filter", "t.py", 7)], id="docstring"),
    pytest.param("runner = make_runner('tf.Session()')  # tf.Session()",
                 [("var-list-filter", "t.py", 7)], id="string-and-comment"),
])
def test_a_session_is_a_call_not_a_word(runner, expected):
  assert _found(_UNFETCHED.format(runner=runner)) == expected
