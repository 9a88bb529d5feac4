"""`tfpartial scan`: a step trained over the values of one dict of
variables while the model is built from that dict and a second one
(ShHsLin/Neural-Network-Quantum-State's `tf_FCN.py`: `self.weights` and
`self.biases`, both passed to `conv_net`, and `para_list =
self.weights.values()` the only list any step trains): the second dict's
trainable variables reach the loss and never train. A list that covers
both dicts, a GAN whose other step trains the second dict, a second dict
of `trainable=False` variables, or one the model never reads, leaves
nothing out."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _scan

_NET = """\
    import numpy as np
    import tensorflow as tf

    class Net:
      def __init__(self, x):
        self.weights = {{
            "w1": tf.Variable(tf.random_normal([4, 8])),
            "w2": tf.Variable(tf.random_normal([8, 1])),
        }}
        self.biases = {{
            "b1": tf.Variable(np.zeros([8], dtype=np.float32){flag}),
            "b2": tf.Variable(np.zeros([1], dtype=np.float32){flag}),
        }}
        self.amp = self.net(x, self.weights, {second})
        self.para_list = {chosen}
        self.grads = tf.gradients(tf.log(self.amp), self.para_list)
        opt = tf.train.AdamOptimizer(1e-3)
        self.train_op = opt.apply_gradients(zip(self.grads, self.para_list))

      def net(self, x, weights, biases):
        h = tf.nn.relu(tf.matmul(x, weights["w1"]) + biases["b1"])
        return tf.exp(tf.matmul(h, weights["w2"]) + biases["b2"])
    """

_GAN = """\
    import tensorflow as tf

    def build(z, x):
      g_w = {"g1": tf.Variable(tf.random_normal([4, 8])),
             "g2": tf.Variable(tf.random_normal([8, 4]))}
      d_w = {"d1": tf.Variable(tf.random_normal([4, 8])),
             "d2": tf.Variable(tf.random_normal([8, 1]))}
      d_loss, g_loss = gan_losses(z, x, g_w, d_w)
      d_step = tf.train.AdamOptimizer(1e-4).minimize(
          d_loss, var_list=list(d_w.values()))
      g_step = tf.train.AdamOptimizer(1e-4).minimize(
          g_loss, var_list=list(g_w.values()))
      return d_step, g_step
    """

_LOCAL = """\
    import tensorflow as tf

    def build(x, y):
      weights = {"h1": tf.Variable(tf.random_normal([4, 8])),
                 "out": tf.Variable(tf.random_normal([8, 2]))}
      biases = {"h1": tf.Variable(tf.zeros([8])),
                "out": tf.Variable(tf.zeros([2]))}
      logits = mlp(x, weights, biases)
      loss = tf.reduce_mean(tf.square(logits - y))
      return tf.train.GradientDescentOptimizer(0.1).minimize(
          loss, var_list=%s)
    """

SILENT = {
    "both dicts listed": _NET.format(
        flag="", second="self.biases",
        chosen="list(self.weights.values()) + list(self.biases.values())"),
    "biases made untrainable": _NET.format(
        flag=", trainable=False", second="self.biases",
        chosen="self.weights.values()"),
    "biases never passed to the model": _NET.format(
        flag="", second="None", chosen="self.weights.values()"),
    "a GAN's two dicts, each trained by its step": _GAN,
    "a local list of both dicts": _LOCAL % (
        "list(weights.values()) + list(biases.values())"),
    "every variable trained": _LOCAL % "None",
}

FOUND = {
    "the weights' dict only, the biases' left out": (_NET.format(
        flag="", second="self.biases", chosen="self.weights.values()"), 15),
    "a local dict's values only": (
        _LOCAL % "list(weights.values())", 11),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_list_covering_what_the_model_reads_is_silent(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_one_dict_of_two_the_model_reads_is_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


def test_the_message_names_the_dict_left_out():
  code, _ = FOUND["the weights' dict only, the biases' left out"]
  [finding] = [f for f in _scan.scan_text("t.py", textwrap.dedent(code))
               if f.idiom == "var-list-filter"]
  assert "built by hand from `self.weights.values()`, while `self.biases`" \
      in finding.message


def _many_nets(n):
  """`n` copies of the net, each class its own dicts and step."""
  one = textwrap.dedent(FOUND["the weights' dict only, the biases' left "
                              "out"][0]).split("\n", 3)[3]
  return "import numpy as np\nimport tensorflow as tf\n\n" + "".join(
      one.replace("class Net:", f"class Net{i}:") for i in range(n))


def test_the_dicts_of_many_classes_are_read_once_each():
  # Each function's dicts and calls read once, however many steps ask.
  small, large = (scanned.scan_work(_many_nets(n), "_dict_halves.py")
                  for n in (20, 80))
  assert 0 < large <= 4.5 * small, (small, large)
  assert len(scanned.in_text(_many_nets(20), "var-list-filter")) == 20
