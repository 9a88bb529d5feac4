"""`tfpartial scan` after review m39: a module of functions, or one
function, each choosing a step's list from one dict in the two arms of
an `if` (the short arm some of the long arm's entries) costs about the
same per step however many steps there are (the whole scan's work at
`4 * n` steps within six times its work at `n`)."""

import scanned


def _short_arms_in_functions(n):
  """One module: a dict filled with `2 * n` variables, and `n` functions
  each training one or two of them as `online` says."""
  build = "".join(f"  W['a{i}'] = tf.get_variable('a{i}', [4])\n"
                  f"  W['b{i}'] = tf.get_variable('b{i}', [4])\n"
                  for i in range(n))
  return "import tensorflow as tf\n\nW = {}\n\ndef build():\n" + build + (
      "".join(f"\ndef step{i}(loss, online=False):\n"
              f"  if online:\n    vl = [W['a{i}']]\n"
              f"  else:\n    vl = [W['a{i}'], W['b{i}']]\n"
              f"  return tf.train.AdamOptimizer(0.1).minimize(loss, "
              f"var_list=vl)\n" for i in range(n)))


def _short_arms_in_one_function(n):
  """One function: `n` such choices, each with its step."""
  build = "".join(f"  W['a{i}'] = tf.get_variable('a{i}', [4])\n"
                  f"  W['b{i}'] = tf.get_variable('b{i}', [4])\n"
                  for i in range(n))
  return "import tensorflow as tf\n\nW = {}\n\ndef build():\n" + build + (
      "\ndef main(loss, online=False):\n") + "".join(
          f"  if online:\n    vl{i} = [W['a{i}']]\n"
          f"  else:\n    vl{i} = [W['a{i}'], W['b{i}']]\n"
          f"  op{i} = tf.train.AdamOptimizer(0.1).minimize(loss, "
          f"var_list=vl{i})\n" for i in range(n))


def test_short_arms_in_many_functions_cost_the_same_per_step():
  small, large = (scanned.scan_work(_short_arms_in_functions(n)) for n in (8, 32))
  assert large <= 6 * small, (small, large)


def test_short_arms_in_one_function_cost_the_same_per_step():
  small, large = (scanned.scan_work(_short_arms_in_one_function(n)) for n in (8, 32))
  assert large <= 6 * small, (small, large)
