"""`tfpartial scan`: a method a base class calls on itself (`self.m(...)`)
runs, for an object of a subclass of the project, that subclass's
override of `m`, with the arguments of that call: the override's
parameters take what the base class passes (camilonar/incremental-
eureka's `Trainer.__prepare` calls `self._create_optimizer(config, loss,
self.model.trainable_variables)`, and `RMSPropTrainer._create_optimizer`
passes its `var_list` to `minimize`). A call in a sibling class, or in a
class the override's class does not derive from, reaches no override of
it; a list that leaves nothing out stays silent."""

import pytest

import scanned

_NETWORK = """\
    import tensorflow as tf


    class Network(object):
      def __init__(self, x):
        self.x = x
        self.setup()

      def fc(self, h, n, name):
        with tf.variable_scope(name):
          w = tf.get_variable("w", [h.shape[-1], n])
          return tf.matmul(h, w)

      def load(self, path, sess):
        pass

      @property
      def trainable_layers(self):
        return []

      @property
      def has_transfer_learning(self):
        return False

      @property
      def trainable_variables(self):
        if self.has_transfer_learning:
          var_list = []
          for layer in self.trainable_layers:
            var_list.extend(tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope=layer))
          return var_list
        return None
    """

_ALEX = """\
    from network import Network


    class AlexNet(Network):
      def setup(self):
        h = self.fc(self.x, 8, "conv1")
        self.out = self.fc(h, 2, "fc8")

      @property
      def has_transfer_learning(self):
        return True

      @property
      def trainable_layers(self):
        return ["fc8"]
    """

# The base class builds the step through a hook its subclasses override.
_BASE = """\
    import tensorflow as tf
    from network import Network


    class Trainer(object):
      def __init__(self, model: Network, y):
        self.model = model
        self.y = y
        self.__prepare()

      def __prepare(self):
        self.loss = tf.reduce_mean((self.model.out - self.y) ** 2)
        self.step = {call}
    {hook}
      def train(self):
        with tf.Session() as sess:
          sess.run(tf.global_variables_initializer())
          self.model.load("alexnet.npy", sess)
          for _ in range(10):
            sess.run(self.step)
    """

_CALL = "self._create_optimizer(self.loss, self.model.trainable_variables)"
_HOOK = """
      def _create_optimizer(self, loss, var_list=None):
        raise NotImplementedError("the subclass makes the optimizer")
"""

_RMS = """\
    import tensorflow as tf
    from trainer import {parent}


    class RMSPropTrainer({parent}):
      def _create_optimizer(self, loss, var_list=None):
        return tf.train.RMSPropOptimizer(0.1).minimize(
            {given})
    """

_EXPERIMENT = """\
    import tensorflow as tf
    from alex import AlexNet
    from rms import RMSPropTrainer

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    RMSPropTrainer(AlexNet(x), y).train()
    """


def _project(call=_CALL, hook=_HOOK, parent="Trainer",
             given="loss, var_list=var_list", base_extra="",
             network=_NETWORK):
  return {"network.py": network, "alex.py": _ALEX,
          "trainer.py": _BASE.format(call=call, hook=hook) + base_extra,
          "rms.py": _RMS.format(parent=parent, given=given),
          "exp.py": _EXPERIMENT}


# A middle class between the base and the override.
_MIDDLE = """\


    class Middle(Trainer):
      def train(self):
        Trainer.train(self)
    """

# A sibling of the override's class calls the hook with a filtered list;
# the override is never run with it (its object is no sibling), and the
# base class passes the whole list.
_SIBLING = """\


    class Sibling(Trainer):
      def again(self):
        return self._create_optimizer(
            self.loss, self.model.trainable_variables)
    """

# An unrelated class of the project calls a method of the same name on
# itself: its `self` is never an RMSPropTrainer.
_UNRELATED = """\


    class Evaluator(object):
      def __init__(self, model: Network):
        self.model = model

      def _create_optimizer(self, loss, var_list=None):
        return None

      def go(self, loss):
        return self._create_optimizer(loss, self.model.trainable_variables)
    """

_WHOLE_NETWORK = _NETWORK.split("        if self.has_transfer")[0] + (
    "        return tf.trainable_variables()\n")



def _one_module(given):
  """The override written in the base class's module (`list(var_list)`:
  a copy, not a list passed on, so its parameter takes what the calls of
  the method pass)."""
  files = _project(given=given)
  rms = files.pop("rms.py").replace("from trainer import Trainer\n", "")
  files["trainer.py"] += "\n" + rms.split("import tensorflow as tf\n")[1]
  files["exp.py"] = files["exp.py"].replace("from rms import",
                                            "from trainer import")
  return files


FOUND = {
    "the override copies the list, in the base class's module": _one_module(
        "loss, var_list=list(var_list)"),
    "the base class calls the subclass's override": _project(),
    "the base class declares no such method": _project(hook=""),
    "the list passed by keyword": _project(
        call=_CALL.replace("self.loss, ", "self.loss, var_list=")),
    "the override two classes down": {
        **_project(parent="Middle", base_extra=_MIDDLE),
        "rms.py": _RMS.format(parent="Middle",
                              given="loss, var_list=var_list")},
}

SILENT = {
    # The base class passes every variable: nothing left out.
    "the base class passes None": _project(
        call="self._create_optimizer(self.loss, None)"),
    # The override drops the list it is given.
    "the override ignores the list": _project(given="loss"),
    # Only a sibling class passes the filtered list.
    "a sibling class passes the list": _project(
        call="self._create_optimizer(self.loss, None)",
        base_extra=_SIBLING),
    # A class outside the override's bases calls a method of that name.
    "an unrelated class calls a method of that name": _project(
        call="self._create_optimizer(self.loss, None)",
        base_extra=_UNRELATED),
    # The property returns every trainable variable.
    "the property returns every variable": _project(
        network=_WHOLE_NETWORK),
}


def _filters(files):
  return [f for f in scanned.in_project(files) if f[0] == "var-list-filter"]


@pytest.mark.parametrize("name", sorted(FOUND))
def test_an_override_takes_what_its_base_class_passes(name):
  assert _filters(FOUND[name]) == [("var-list-filter", "network.py", 30)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_an_override_not_reached_with_a_filter_is_silent(name):
  assert _filters(SILENT[name]) == []
