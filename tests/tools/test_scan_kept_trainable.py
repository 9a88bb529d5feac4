"""`tfpartial scan`: a hand-kept list of "trainable" variables that a
variable maker fills only when its caller says `trainable`, while the
variable itself is made trainable all the same (remega/OMCNN_2CLSTM's
`BasicNet._variable_on_cpu`: `tf.get_variable(name, shape)`, then `if
trainable: self.trainable_var_collection.append(var)`; the YOLO front-end
built with `trainable=False`, and `compute_gradients(loss,
var_list=self.trainable_var_collection)`): the front-end is in the loss
and never trains. A maker that hands `trainable` to `get_variable` too
(a frozen front-end made untrainable), one no caller tells False, or a
list no step trains over, leaves nothing out."""

import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _scan

_NET = """\
    import tensorflow as tf

    class BasicNet:
      def __init__(self):
        self.trainable_var_collection = []

      def _variable_on_cpu(self, name, shape, trainable=True):
        with tf.device("/cpu:0"):
          var = tf.get_variable(name, shape{handed})
        if trainable:
          self.trainable_var_collection.append(var)
        return var

      def conv_layer(self, name, x, n, trainable=True):
        with tf.variable_scope(name):
          w = self._variable_on_cpu("weights", [3, 3, 8, n], trainable)
          return tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")

    class Saliency(BasicNet):
      def build(self, x, y):
        cnntrainable = {front}
        h = self.conv_layer("conv1", x, 8, trainable=cnntrainable)
        out = self.conv_layer("head", h, 1, trainable=True)
        self.loss = tf.reduce_mean(tf.square(out - y))
        opt = tf.train.AdamOptimizer(1e-4)
        grads = opt.compute_gradients(self.loss, var_list={chosen})
        return opt.apply_gradients(grads)
    """

SILENT = {
    "the maker hands the flag to get_variable": _NET.format(
        handed=", trainable=trainable", front="False",
        chosen="self.trainable_var_collection"),
    "no caller says False": _NET.format(
        handed="", front="True", chosen="self.trainable_var_collection"),
    "the step trains every variable": _NET.format(
        handed="", front="False", chosen="None"),
}

FOUND = {
    "a front-end told untrainable, made trainable, left off the list": (
        _NET.format(handed="", front="False",
                    chosen="self.trainable_var_collection"), 11),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_list_kept_of_every_trainable_variable_is_silent(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_list_skipping_trainable_variables_is_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


def test_the_message_names_the_test_that_keeps_it():
  code, _ = FOUND[
      "a front-end told untrainable, made trainable, left off the list"]
  [finding] = [f for f in _scan.scan_text("t.py", textwrap.dedent(code))
               if f.idiom == "var-list-filter"]
  assert "a variable is added only `if trainable` (line 10)" \
      in finding.message


def _many_nets(n):
  """`n` copies of the net, each pair of classes its own."""
  one = textwrap.dedent(FOUND[
      "a front-end told untrainable, made trainable, left off the list"][0]
                        ).split("\n", 2)[2]
  return "import tensorflow as tf\n\n" + "".join(
      one.replace("BasicNet", f"BasicNet{i}").replace(
          "Saliency", f"Saliency{i}") for i in range(n))


def test_the_makers_of_many_classes_are_read_once_each():
  # The calls of a maker's name found once, not once per class asking.
  small, large = (scanned.scan_work(_many_nets(n), "_kept_trainable.py")
                  for n in (10, 40))
  assert 0 < large <= 4.5 * small, (small, large)
  assert len(scanned.in_text(_many_nets(10), "var-list-filter")) == 10


def test_many_makers_no_caller_tells_false_stay_linear():
  # Each maker's name asked once: not every class's maker weighing every
  # call of the name (all of them, none False).
  def nets(n):
    return _many_nets(n).replace("cnntrainable = False",
                                 "cnntrainable = True")
  small, large = (scanned.scan_work(nets(n), "_kept_trainable.py")
                  for n in (10, 40))
  assert 0 < large <= 4.5 * small, (small, large)
  assert scanned.in_text(nets(10), "var-list-filter") == []
