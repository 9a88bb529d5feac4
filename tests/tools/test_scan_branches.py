"""Freezes whose value is chosen in branches and loops: a read sees the
assignments of every branch that can reach it, and none of a branch it
cannot run after (an exclusive sibling: the `else` of its `if`, another
`case`, an `except` beside an `else`), nor last turn's values of a name
the loop sets anew at its head.

Found: a gradient masked in a later `elif` of a chain whose first arm
fills a `None` gradient (TF1 `sparse_mask` per pair, a method; TF2, a
function, a mask of another module), a variable list narrowed in an
`elif` after an arm that empties it for evaluation (a script, a method
reading its flags, another file of the project). Silent: the same shapes
where the mask only feeds an evaluation arm, a mask overwritten on every
path before the apply, last turn's masked gradient only logged.
"""

import ast
import textwrap

import scanned

from tfpartial._tools.scan import _scopes

# TF1, per (gradient, variable) pair, as a graph-embedding trainer writes
# it: a variable frozen whole gets no gradient, one frozen by rows gets
# its sparse gradient's rows dropped.
_TF1_ROWS = '''
import tensorflow as tf

class GraphEmbedding(object):

  def build_train_op(self, loss, frozen=None):
    opt = tf.train.AdagradOptimizer(0.1)
    pairs = opt.compute_gradients(loss)
    kept = []
    for grad, var in pairs:
      if frozen is not None and var in frozen:
        rows = frozen[var]
        if rows is True:
          grad = None
        elif isinstance(grad, tf.IndexedSlices):
          grad = tf.sparse_mask(grad, rows)
      kept.append((grad, var))
    return opt.apply_gradients(kept)
'''


def test_a_sparse_mask_in_an_elif_after_a_none_arm_is_found():
  assert scanned.found(_TF1_ROWS) == [("grads-mask", 16)]


# TF2: `None` gradients filled with zeros first, then a constant mask for
# the dense ones, in a function; the mask made in another module.
_TF2_MASKS = '''
import tensorflow as tf

FROZEN = tf.constant([[0.0], [1.0], [1.0]])
'''

_TF2_STEP = '''
import tensorflow as tf
from masks import FROZEN

def train_step(model, optimizer, x, y):
  with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.square(model(x) - y))
  grads = tape.gradient(loss, model.trainable_variables)
  out = []
  for grad, var in zip(grads, model.trainable_variables):
    if grad is None:
      grad = tf.zeros_like(var)
    elif var.shape.rank == 2:
      grad = grad * FROZEN
    out.append((grad, var))
  optimizer.apply_gradients(out)
'''


def test_a_mask_in_an_elif_after_a_zeros_arm_is_found_across_files():
  assert scanned.in_project({"masks.py": _TF2_MASKS, "step.py": _TF2_STEP}
                            ) == [("grads-mask", "step.py", 14)]


def test_a_mask_in_an_else_after_a_zeros_arm_is_found():
  assert scanned.found('''
      import tensorflow as tf

      MASK = tf.constant([0.0, 1.0, 1.0])

      @tf.function
      def step(model, opt, x, y):
        with tf.GradientTape() as tape:
          loss = model.loss(x, y)
        grads = tape.gradient(loss, model.trainable_variables)
        fixed = []
        for g, v in zip(grads, model.trainable_variables):
          if g is None:
            g = tf.zeros_like(v)
          else:
            g = tf.multiply(g, MASK)
          fixed.append(g)
        opt.apply_gradients(zip(fixed, model.trainable_variables))
      ''') == [("grads-mask", 16)]


def test_a_mask_only_on_an_evaluation_turn_stays_silent():
  # Every hundredth turn logs the masked gradients' norm instead of
  # training: the apply in the `else` never sees them.
  assert scanned.found('''
      import tensorflow as tf

      MASK = tf.constant([0.0, 1.0, 1.0])

      def fit(model, optimizer, data):
        for step, (x, y) in enumerate(data):
          with tf.GradientTape() as tape:
            loss = model.loss(x, y)
          grads = tape.gradient(loss, model.trainable_variables)
          if step % 100 == 0:
            grads = [g * MASK for g in grads]
            tf.print("masked norm", tf.linalg.global_norm(grads))
          else:
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
      ''') == []


def test_a_mask_overwritten_on_every_path_stays_silent():
  assert scanned.found('''
      import tensorflow as tf

      MASK = tf.constant([0.0, 1.0, 1.0])

      def step(model, optimizer, x, y, clip):
        with tf.GradientTape() as tape:
          loss = model.loss(x, y)
        grads = tape.gradient(loss, model.trainable_variables)
        shown = [g * MASK for g in grads]
        tf.summary.histogram("masked", shown[0])
        if clip:
          shown, _ = tf.clip_by_global_norm(grads, 5.0)
        else:
          shown = list(grads)
        optimizer.apply_gradients(zip(shown, model.trainable_variables))
      ''') == []


def test_last_turns_masked_gradient_only_logged_stays_silent():
  # The loop sets `grad` anew at its head: the apply of each pair never
  # sees the masked copy the previous turn made for the summary.
  assert scanned.found('''
      import tensorflow as tf

      def build(loss, mask):
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        ops = []
        for grad, var in opt.compute_gradients(loss):
          ops.append(opt.apply_gradients([(grad, var)]))
          grad = grad * mask
          tf.summary.histogram(var.op.name + "/masked", grad)
        return tf.group(*ops)
      ''') == []


def test_a_loop_whose_turns_mask_then_apply_is_found():
  # The same loop, masking before the apply of the pair: found.
  assert scanned.found('''
      import tensorflow as tf

      def build(loss, mask):
        opt = tf.train.MomentumOptimizer(0.1, 0.9)
        ops = []
        for grad, var in opt.compute_gradients(loss):
          grad = grad * mask
          tf.summary.histogram(var.op.name + "/masked", grad)
          ops.append(opt.apply_gradients([(grad, var)]))
        return tf.group(*ops)
      ''') == [("grads-mask", 8)]


# A variable list narrowed in an `elif`, after an arm that empties it (an
# evaluation run trains nothing).
_NARROWED = '''
import tensorflow as tf

FLAGS = tf.app.flags.FLAGS

def train(loss):
  opt = tf.train.AdamOptimizer(1e-3)
  train_vars = tf.trainable_variables()
  if FLAGS.mode == "eval":
    train_vars = []
  elif FLAGS.freeze_embeddings:
    train_vars = [v for v in train_vars if "embedding" not in v.name]
  return opt.minimize(loss, var_list=train_vars)
'''


def test_a_list_narrowed_in_an_elif_after_an_emptying_arm_is_found():
  assert scanned.found(_NARROWED) == [("var-list-filter", 12)]


def test_a_list_narrowed_by_a_method_in_another_file_is_found():
  assert ("var-list-filter", "model.py", 15) in scanned.in_project({
      "model.py": '''
          import tensorflow as tf

          class Model(object):

            def __init__(self, config):
              self.config = config

            def train_op(self, loss):
              optimizer = tf.train.GradientDescentOptimizer(0.1)
              variables = tf.trainable_variables()
              if self.config.evaluate_only:
                variables = None
              elif self.config.frozen:
                variables = [v for v in variables if "emb" not in v.name]
              return optimizer.minimize(loss, var_list=variables)
          ''',
      "run.py": '''
          import model

          def main(config, loss):
            return model.Model(config).train_op(loss)
          '''})


def test_a_list_narrowed_only_for_an_evaluation_restore_stays_silent():
  # The filtered list feeds the evaluation arm's Saver; training, in the
  # `else`, takes every variable.
  assert scanned.found('''
      import tensorflow as tf

      FLAGS = tf.app.flags.FLAGS

      def build(loss):
        opt = tf.train.AdamOptimizer(1e-3)
        train_vars = tf.trainable_variables()
        if FLAGS.mode == "eval":
          train_vars = [v for v in train_vars if "embedding" not in v.name]
          return tf.train.Saver(var_list=train_vars)
        else:
          return opt.minimize(loss, var_list=train_vars)
      ''') == []


def test_a_gans_two_lists_chosen_in_branches_stay_silent():
  assert scanned.found('''
      import tensorflow as tf

      def build(g_loss, d_loss, which):
        tvars = tf.trainable_variables()
        if which == "generator":
          var_list = [v for v in tvars if v.name.startswith("gen")]
          return tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=var_list)
        else:
          var_list = [v for v in tvars if v.name.startswith("disc")]
          return tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=var_list)
      ''') == []


# The assignments each read sees, construct by construct: each read of
# `x` on a line marked `# read`, as the lines of the assignments it sees
# (several reads of a line in the order they are written).
def _seen(code, function=None):
  tree = ast.parse(textwrap.dedent(code))
  module = _scopes.collect(tree)
  scope = module if function is None else next(
      s for s in module.all() if s.name == function)
  lines = textwrap.dedent(code).splitlines()
  reads = sorted((n.lineno, n.col_offset, n) for n in ast.walk(tree) if (
      isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and (
          n.id == "x") and "# read" in lines[n.lineno - 1]))
  defs = scope.defs["x"]
  found = {}
  for line, _, node in reads:
    found.setdefault(line, []).append(sorted(
        defs[i].end[0] for i in scope.reaching("x", node)))
  return {line: seen[0] if len(seen) == 1 else seen
          for line, seen in found.items()}


def test_an_else_does_not_see_its_ifs_body():
  assert _seen('''
      x = 0
      if c:
        x = 1
        f(x)  # read
      elif d:
        f(x)  # read
        x = 2
      else:
        f(x)  # read
        x = 3
      f(x)  # read
      ''') == {5: [4], 7: [2], 10: [2], 12: [4, 8, 11]}


def test_an_arm_that_returns_or_raises_reaches_nothing_after():
  assert _seen('''
      def f(c, d):
        x = 0
        if c:
          x = 1
          return x  # read
        elif d:
          x = 2
          raise ValueError(x)  # read
        else:
          x = 3
        g(x)  # read
      ''', "f") == {6: [5], 9: [8], 12: [11]}


def test_a_loop_head_sees_the_turns_before_and_the_target_kills():
  assert _seen('''
      x = 0
      for item in items:
        f(x)  # read
        x = item
      f(x)  # read
      for x in items:
        f(x)  # read
        x = x * 2  # read
      f(x)  # read
      ''') == {4: [2, 5], 6: [2, 5], 8: [7], 9: [7], 10: [2, 5, 9]}


def test_break_and_continue_cut_the_paths_they_leave():
  assert _seen('''
      x = 0
      while True:
        x = 1
        if a:
          x = 2
          break
        if b:
          x = 3
          continue
        f(x)  # read
        x = 4
      f(x)  # read
      ''') == {11: [4], 13: [6]}


def test_try_handlers_see_the_body_and_else_sees_it_whole():
  assert _seen('''
      x = 0
      try:
        x = 1
        x = 2
      except ValueError:
        f(x)  # read
        x = 3
      except KeyError:
        f(x)  # read
      else:
        f(x)  # read
        x = 4
      f(x)  # read
      ''') == {7: [2, 4, 5], 10: [2, 4, 5], 12: [5], 14: [2, 4, 5, 8, 13]}


def test_a_finally_sees_every_path_and_after_it_the_ones_that_go_on():
  assert _seen('''
      def f():
        x = 0
        try:
          x = 1
        except ValueError:
          x = 2
          return None
        finally:
          g(x)  # read
        return x  # read
      ''', "f") == {10: [3, 5, 7], 11: [5]}


def test_match_cases_are_exclusive():
  assert _seen('''
      x = 0
      match mode:
        case "a":
          x = 1
        case "b":
          f(x)  # read
          x = 2
        case _:
          x = 3
      f(x)  # read
      ''') == {7: [2], 11: [5, 8, 10]}


def test_a_with_block_runs_its_body_once():
  assert _seen('''
      x = 0
      with scope():
        x = 1
      f(x)  # read
      with open(x) as x:  # read
        f(x)  # read
      ''') == {5: [4], 6: [4], 7: [6]}


def test_a_comprehension_binds_its_name_for_itself_alone():
  # Its element reads its own name, its first iterable the one before;
  # after it, the name is what the statement assigned (`x += [x]` adds
  # to `x` twice: itself, and the list the comprehension went over).
  assert _seen('''
      x = [1]
      x = [x + 1 for x in x]  # read
      x += [x]  # read
      f(x)  # read
      ''') == {3: [[3], [2]], 4: [3], 5: [3, 4, 4]}


def test_a_long_elif_chain_is_walked_as_one_list_of_arms():
  # Generated dispatch code: nine hundred arms and an `else`, each its
  # own `x`; the read after the chain sees every arm, not the value
  # before it; the read in an arm sees only the value before the chain.
  arms = "".join(f"elif k == {i}:\n  x = {i}\n" for i in range(1, 900))
  code = ("x = None\nif k == 0:\n  f(x)  # read\n  x = 0\n" + arms +
          "else:\n  x = -1\nf(x)  # read\n")
  seen = _seen(code)
  last = 4 + 2 * 899 + 2
  assert seen[3] == [1]
  assert seen[last + 1] == [4] + [2 * i + 4 for i in range(1, 900)] + [last]
