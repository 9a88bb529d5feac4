"""`tfpartial scan` after the review of part thirty-six's lists (issue
30): a network counts as built from published MatConvNet weights only
when a value it reads with `scipy.io.loadmat` reaches a variable's
initial value (`tf.Variable(kernel)`); a data set or a mean image read
the same way does not make a head over a random network a partial
freeze. Whether a head helper makes its weights through a helper of its
own is read once per helper, each callee name once, so a helper calling
another many times costs about the same as one calling it once."""

import ast

import scanned

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _project as project_index
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._wholes import _frozen_backbone

from test_scan_part36_lists import (  # The same project.
    _VGG, _found, _line, _project)


_RANDOM = _VGG.replace("data = loadmat(param_path)", "data = {'layers': [[]]}")


def test_a_head_over_weights_read_from_a_matlab_file_is_found():
  files = _project()
  assert _found(files) == [("model/transfer.py", _line(
      files["model/transfer.py"], "var_to_train = tf.get_collection"))]


def test_a_random_network_over_images_read_from_a_matlab_file_is_silent():
  # SVHN and many face and EEG sets ship as `.mat`: data, not weights.
  files = _project(vgg=_RANDOM)
  files["model/transfer.py"] = files["model/transfer.py"].replace(
      "import tensorflow as tf\n",
      "import tensorflow as tf\nfrom scipy.io import loadmat\n", 1).replace(
      "    network, weights = vgg_face(",
      "    images = loadmat('svhn.mat')['X']\n    network, weights = vgg_face(")
  assert "loadmat('svhn.mat')" in files["model/transfer.py"]
  assert _found(files) == []


def test_a_random_network_over_images_read_by_np_load_is_silent():
  # The final read's x10: arrays handed to a network may be data; a head
  # made through a helper's helper counts only over a network whose own
  # function reads published weights into its variables.
  files = _project(vgg=_RANDOM)
  files["model/transfer.py"] = files["model/transfer.py"].replace(
      "import tensorflow as tf\n",
      "import numpy as np\nimport tensorflow as tf\n", 1).replace(
      "    network, weights = vgg_face(",
      "    images = np.load('faces.npz')['X']\n    network, weights = vgg_face(")
  assert "np.load('faces.npz')" in files["model/transfer.py"]
  assert _found(files) == []


def test_a_random_network_less_a_mean_image_from_a_file_is_silent():
  # A MatConvNet port's mean image: read from disk, never a weight.
  files = _project(vgg=_RANDOM.replace(
      "    current = x\n",
      "    current = x - loadmat('mean_image.mat')['mean']\n"))
  assert "mean_image" in files["model/vgg.py"]
  assert _found(files) == []


def test_a_head_helpers_own_parameter_is_not_the_modules_helper():
  # `make_w` is the helper's parameter: it does not name the module's
  # `new_weights`-like function of the same name, which makes variables.
  files = _project()
  files["model/layers.py"] = files["model/layers.py"].replace(
      "def new_fc_layer(layer_last, num_inputs, num_outputs):\n"
      "    weights = new_weights(",
      "def new_fc_layer(layer_last, num_inputs, num_outputs, "
      "new_weights=lambda shape: 1.0):\n    weights = new_weights(").replace(
      "    biases = new_biases(length=num_outputs)\n",
      "    biases = 0.0\n")
  assert _found(files) == []


def _deep(n):
  """A loaded backbone; one call in the kept scope to `post`, which calls
  `norm` `n` times; `norm` has `n` statements and makes no variable."""
  return ("import numpy as np\nimport tensorflow as tf\n\n"
          "def backbone(x):\n  w = tf.Variable(np.load('w.npy'))\n"
          "  return tf.matmul(x, w)\n\n"
          "def norm(h):\n" + "".join(
              f"  h = h * {i}.0 + tf.reduce_mean(h)\n" for i in range(n))
          + "  return h\n\ndef post(h):\n"
          + "".join("  h = norm(h)\n" for _ in range(n)) + "  return h\n\n"
          "def train(x, y):\n  feat = backbone(x)\n"
          "  with tf.variable_scope('head'):\n    out = post(feat)\n"
          "  loss = tf.reduce_mean(tf.square(out - y))\n"
          "  hv = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, 'head')\n"
          "  return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=hv)\n")


def _asked_often(n):
  """The work of asking `n` times whether `post(feat)` builds a layer,
  two project calls deep."""
  project = project_index.Project([_files.Source("m.py", _deep(n))])
  top = project.parsed(project.modules[0])
  train = next(c for c in top.children if c.node.name == "train")
  node = next(n for n in train.nodes if isinstance(n, ast.Call) and getattr(
      n.func, "id", "") == "post")
  analysis = Analysis(project)
  return scanned.calls_made(lambda: [_frozen_backbone._builds_layer(
      analysis, train, node, 2) for _ in range(n)], "")[0]


def test_a_helper_calling_another_many_times_is_read_once():
  # Was quadratic and more: each call site of `norm` walked `norm` again,
  # and each question walked both again (x15 for 4 times the size).
  small, large = (_asked_often(n) for n in (20, 80))
  assert large <= 6 * small, (small, large)


def test_a_scan_of_a_helper_calling_another_often_grows_linearly():
  small, large = (scanned.scan_work(_deep(n)) for n in (20, 80))
  assert large <= 6 * small, (small, large)
