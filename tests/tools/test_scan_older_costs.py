"""`tfpartial scan` after the review of the older costs: the facts a
check reads of a whole function or module (the statement lists of a
function, the assignments of a class's methods, the names a function
stores into by element, the steps of a function) are worked out once,
so the work of each check grows linearly with the function or module,
and a module of many small training functions costs the same per
function however many it holds."""

import ast

import pytest

import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._copies import _own_value


def _calls_made(text, where=""):
  """The Python calls (generator steps too) a scan of `text` makes, from
  the code of files whose path ends with one of `where` (names apart by
  spaces): work, counted, not timed."""
  return scanned.calls_made(lambda: _scan.scan_project(
      [_files.Source("big.py", text)]), tuple(where.split()) or "")[0]


def _steps_of_one_list(n):
  """One function: `n` statements, then `n` steps training one list."""
  return ("import tensorflow as tf\n\ndef f(opt, losses, model):\n"
          "  chosen = [v for v in model.trainable_variables "
          "if 'head' in v.name]\n" + "".join(
              f"  a{i} = losses[{i}] * 2\n" for i in range(n)) + "".join(
                  f"  t{i} = opt.minimize(a{i}, var_list=chosen)\n"
                  for i in range(n)))


def _methods_of_own_lists(n):
  """One class: `n` methods, each training a list of its own kept on
  `self`."""
  return ("import tensorflow as tf\n\nclass Trainer:\n" + "".join(
      f"  def step{i}(self, x):\n"
      f"    self.vl{i} = self.head.trainable_variables\n"
      f"    loss = self.head(self.backbone(x))\n"
      f"    return self.opt.minimize(loss, var_list=self.vl{i})\n"
      for i in range(n)))


def _small_filtered_functions(n):
  """One module: `n` small functions, each training the variables of
  its scope, picked by name."""
  return "import tensorflow as tf\n\n" + "".join(
      f"def train{i}(loss):\n"
      f"  opt = tf.compat.v1.train.AdamOptimizer(0.001)\n"
      f"  chosen = [v for v in tf.compat.v1.trainable_variables() "
      f"if v.name.startswith('head{i}')]\n"
      f"  return opt.minimize(loss, var_list=chosen)\n\n"
      for i in range(n))


def _weights_set_many_times(n):
  """One function: `n` writes of other weights into a model, each set
  back from a whole copy."""
  return ("def f(model, olds, x):\n  backup = model.get_weights()\n" +
          "".join(f"  model.set_weights(olds[{i}])\n"
                  f"  y{i} = model(x)\n"
                  "  model.set_weights(backup)\n" for i in range(n)))


def _rates_annealed(n):
  """One callback method: `n` rates, each read out, changed by a
  setting and written back."""
  return ("from keras import backend as K\n\n"
          "def on_epoch_end(self, epoch, logs=None):\n" + "".join(
              f"  t{i} = K.get_value(self.r{i})\n"
              f"  t{i} = max(t{i} - .01, self.low)\n"
              f"  K.set_value(self.r{i}, K.constant(t{i}))\n"
              for i in range(n)))


def _writes_judged(text):
  """The Python calls of `_own_value` judging each write of `text`'s
  function as a schedule (each must be one)."""
  tree = ast.parse(text)
  scope = list(_scopes.collect(tree).all())[1]
  writes = [n for n in ast.walk(tree.body[-1]) if isinstance(
      n, ast.Call) and _names.call_name(n) == "set_value"]
  count, judged = scanned.calls_made(lambda: [
      _own_value.of_itself(scope, w, w.args[0], w.args[1])
      for w in writes], "_own_value.py")
  assert all(judged), judged
  return count


def test_gathered_lists_are_read_once_per_function():
  # Was quadratic: each step read every statement list of its function.
  small, large = (_calls_made(_steps_of_one_list(n), "_flag_gathered.py")
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)


def test_a_classs_grown_lists_are_read_once_per_method():
  # Was quadratic: each step of a `self.` list read every method.
  small, large = (_calls_made(_methods_of_own_lists(n), "_grown_models.py")
                  for n in (20, 80))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("where", [
    "_steps.py _hand_picked.py _newest_first.py _flag_gathered.py", ""])
def test_small_filtered_functions_cost_the_same_each(where):
  # Checked: already near linear at 9e951d5 (465144 calls at 20, 2372463
  # at 80): the recognisers read each function's own facts. A guard.
  small, large = (_calls_made(_small_filtered_functions(n), where)
                  for n in (20, 80))
  assert large <= 6 * small, (small, large)


def test_writes_set_back_read_the_function_once():
  # Was quadratic: each write listed every statement list again.
  small, large = (_calls_made(_weights_set_many_times(n), "_swapped_back.py")
                  for n in (20, 80))
  assert large <= 6 * small, (small, large)


def test_element_stores_are_read_once_per_function():
  # Was quadratic: each written name, and each read's steps, walked
  # every node of the function.
  small, large = (_writes_judged(_rates_annealed(n)) for n in (20, 80))
  assert large <= 6 * small, (small, large)
