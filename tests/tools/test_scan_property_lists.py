"""`tfpartial scan`: a variable list read through a property of a class
of the project (camilonar/incremental-eureka's caffe `Network`: `@property
def trainable_variables(self)` keeps, when transfer learning is on, the
variables of the scopes its `trainable_layers` names, and a trainer
passes `model.trainable_variables` to `minimize(var_list=...)`) is what
the property returns, as a call of the same method would be: a part
filter over a restored base is found. A property that returns every
trainable variable, or the scope that holds the whole model, leaves
nothing out; two properties that split a GAN into halves stay halves;
an object whose class the project does not hold is read as before."""

import pytest

import scanned

_NET = """\
    import tensorflow as tf


    class Network(object):
      def __init__(self, x):
        self.x = x
        with tf.variable_scope("net"):
          self.setup()

      def fc(self, h, n, name):
        with tf.variable_scope(name):
          w = tf.get_variable("w", [h.shape[-1], n])
          return tf.matmul(h, w)

      def setup(self):
        h = self.fc(self.x, 8, "conv1")
        self.out = self.fc(h, 2, "fc8")

      def load(self, path, sess):
        pass

      {decorator}
      def trainable_variables(self):
    {body}

    {use}
    """

_LOOP = """\
        var_list = []
        for layer in ["net/fc8"]:
          var_list.extend(tf.get_collection(
              tf.GraphKeys.TRAINABLE_VARIABLES, scope=layer))
        return var_list"""

_SWITCH = """\
        if self.x is not None:
          var_list = []
          for layer in ["net/fc8"]:
            var_list.extend(tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope=layer))
          return var_list
        return None"""

_ALL = """\
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)"""

_WHOLE_SCOPE = """\
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="net")"""

_SCRIPT = """\
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    net = Network(x)
    loss = tf.reduce_mean((net.out - y) ** 2)
    op = tf.train.AdamOptimizer(0.1).minimize(
        loss, var_list=net.{read})
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      net.load("alexnet.npy", sess)
      for _ in range(10):
        sess.run(op, feed_dict={{x: [[1, 2, 3, 4]], y: [[1, 2]]}})"""


def _net(body, decorator="@property", read="trainable_variables"):
  return _NET.format(decorator=decorator, body=body[4:],
                     use=_SCRIPT.format(read=read).lstrip())


_GAN = """\
    import tensorflow as tf


    class Generator(object):
      def __call__(self, z):
        with tf.variable_scope("G", reuse=tf.AUTO_REUSE):
          return tf.layers.dense(z, 4)

      @property
      def trainable_variables(self):
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="G")


    class Discriminator(object):
      def __call__(self, x):
        with tf.variable_scope("D", reuse=tf.AUTO_REUSE):
          return tf.layers.dense(x, 1)

      @property
      def trainable_variables(self):
        return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="D")


    g, d = Generator(), Discriminator()
    z = tf.placeholder(tf.float32, [None, 2])
    x = tf.placeholder(tf.float32, [None, 4])
    real, fake = d(x), d(g(z))
    d_loss = tf.reduce_mean(fake) - tf.reduce_mean(real)
    g_loss = -tf.reduce_mean(fake)
    d_step = tf.train.AdamOptimizer(1e-4).minimize(
        d_loss, var_list=d.trainable_variables)
    g_step = tf.train.AdamOptimizer(1e-4).minimize(
        g_loss, var_list=g.trainable_variables)
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for _ in range(100):
        sess.run(d_step, feed_dict={z: [[0, 1]], x: [[1, 2, 3, 4]]})
        sess.run(g_step, feed_dict={z: [[0, 1]]})
    """

_UNKNOWN = """\
    import tensorflow as tf
    from somewhere_else import Network

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    net = Network(x)
    loss = tf.reduce_mean((net.out - y) ** 2)
    op = tf.train.AdamOptimizer(0.1).minimize(
        loss, var_list=net.trainable_variables)
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      for _ in range(10):
        sess.run(op, feed_dict={x: [[1, 2, 3, 4]], y: [[1, 2]]})
    """

SILENT = {
    "a property returning every trainable variable": _net(_ALL),
    "a property returning the scope of the whole model": _net(
        _WHOLE_SCOPE),
    "two properties splitting a GAN into its halves": _GAN,
    "an object of a class the project does not hold": _UNKNOWN,
}

# The filter stays shown where the property keeps its part (line 26 of
# the loop form; 27 under the switch): a reader changing what trains
# edits the property, as for a method (`_helper_choice`).
FOUND = {
    "a property keeping the head's scopes": (_net(_LOOP), 26),
    "the same property under a switch, else None": (_net(_SWITCH), 27),
    "the same list from a method, called (found today)": (
        _net(_LOOP, decorator="", read="trainable_variables()"), 26),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_property_leaving_nothing_out_is_silent(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_property_keeping_a_part_is_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


# The same property on an object the flow does not follow: a trainer
# keeps the model it is given (`self.model = model`, `model: Network`)
# and trains `self.model.trainable_variables` (incremental-eureka's
# `Trainer`); the subclass turns transfer learning on and names the head.
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
        return {whole}
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

_TRAINER = """\
    import tensorflow as tf
    {imported}


    class Trainer(object):
      def __init__(self, model: {declared}, y):
        self.model = model
        self.y = y

      def train(self):
        loss = tf.reduce_mean((self.model.out - self.y) ** 2)
        step = tf.train.RMSPropOptimizer(0.1).minimize(
            loss, var_list=self.model.trainable_variables)
        with tf.Session() as sess:
          sess.run(tf.global_variables_initializer())
          self.model.load("alexnet.npy", sess)
          for _ in range(10):
            sess.run(step)
    """

_EXPERIMENT = """\
    import tensorflow as tf
    from alex import AlexNet
    from trainer import Trainer

    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    Trainer(AlexNet(x), y).train()
    """


def _trainer_project(whole="None", imported="from network import Network",
                     declared="Network"):
  return {"network.py": _NETWORK.format(whole=whole), "alex.py": _ALEX,
          "trainer.py": _TRAINER.format(imported=imported,
                                        declared=declared),
          "exp.py": _EXPERIMENT}


def test_a_property_read_through_a_declared_parameter_is_found():
  assert [f for f in scanned.in_project(_trainer_project())
          if f[0] == "var-list-filter"] == [
              ("var-list-filter", "network.py", 30)]


_KERAS_RUN = """\
    import tensorflow as tf
    from trainer import Trainer

    y = tf.placeholder(tf.float32, [None, 2])
    model = tf.keras.applications.MobileNet(weights=None)
    Trainer(model, y).train()
    """

PROJECTS_SILENT = {
    # The parameter's class is a library's, and a library's model is what
    # the run passes: the project's property of the same name is another
    # class's, never read here.
    "a parameter declared as a class the project does not hold":
        {**_trainer_project(imported="from keras import Model",
                            declared="Model"), "exp.py": _KERAS_RUN},
    # Declared as the project's class, but the property returns every
    # trainable variable.
    "a declared class whose property returns every variable": {
        **_trainer_project(), "network.py": _NETWORK.format(
            whole="None").split("        if self.has_transfer")[0] + (
                "        return tf.trainable_variables()\n")},
}


@pytest.mark.parametrize("name", sorted(PROJECTS_SILENT))
def test_a_property_read_leaving_nothing_out_is_silent(name):
  assert [f for f in scanned.in_project(PROJECTS_SILENT[name])
          if f[0] == "var-list-filter"] == []
