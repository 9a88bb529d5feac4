"""`tfpartial scan`'s speed round: questions asked once per filtered
list of the whole module, or of every module, now read each module once
and answer every list from what they kept (work counted at N and 4N,
never timed)."""

import ast

import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _built_outside
from tfpartial._tools.scan.idioms._wholes import _every_layer


def _scoped_functions(n):
  """`n` functions each building a backbone in one scope and a head
  reading it in a sibling scope, and `n` each opening a scope with no
  model built before it."""
  return ("import tensorflow as tf\n"
          "def backbone(x):\n"
          "  w = tf.get_variable('w', [3, 3, 3, 64])\n"
          "  return tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')\n" +
          "".join(f"def build{i}(images):\n"
                  f"  with tf.variable_scope('encoder{i}'):\n"
                  f"    feats = backbone(images)\n"
                  f"  with tf.variable_scope('classifier{i}'):\n"
                  f"    return tf.layers.dense(feats, 10)\n"
                  f"def plain{i}(x):\n"
                  f"  y = tf.nn.relu(x)\n"
                  f"  with tf.variable_scope('head{i}'):\n"
                  f"    return tf.layers.dense(y, 10)\n"
                  for i in range(n)))


def _asked(n):
  """Whether each of the `n` heads and `n` plain scopes is built on a
  model outside it, asked once per scope as the filtered lists ask."""
  project = _project.Project([_files.Source("m.py", _scoped_functions(n))])
  analysis = Analysis(project)
  top = project.parsed(project.modules[0])
  return [_built_outside.built_outside(analysis, {name}, top)
          for i in range(n) for name in (f"classifier{i}", f"head{i}")]


def test_scopes_built_outside_are_read_once_per_module():
  # Was quadratic: each list walked every function of its module, and
  # every function of every module naming its scope, again.
  (small, answers), (large, _) = (scanned.calls_made(
      lambda n=n: _asked(n), "_built_outside.py") for n in (20, 80))
  assert answers == [True, False] * 20
  assert large <= 6 * small, (small, large)


def _layered_modules(n):
  """`n` modules, each building two layers named `fc_lt` and `conv_lt`
  under a root scope of its own."""
  return [_files.Source(f"m{i}.py", "import tensorflow as tf\n"
                        f"with tf.variable_scope('model{i}'):\n"
                        "  h = fc(x, 'fc_lt')\n"
                        "  y = conv(h, 'conv_lt')\n") for i in range(n)]


def _every_layer_asked(n):
  """Whether a name filter keeps every layer, asked once for each of the
  `n` filtered lists of a project of `n` modules."""
  project = _project.Project(_layered_modules(n))
  analysis = Analysis(project)
  test = ast.parse("'lt' in v.name", mode="eval").body
  return [_every_layer.keeps_all(analysis, test, []) for _ in range(n)]


def test_every_layers_names_are_read_once_per_scan():
  # Was quadratic: each list read the layers of every module again.
  (small, answers), (large, _) = (scanned.calls_made(
      lambda n=n: _every_layer_asked(n), "_every_layer.py")
                                  for n in (20, 80))
  assert answers == [True] * 20
  assert large <= 6 * small, (small, large)
