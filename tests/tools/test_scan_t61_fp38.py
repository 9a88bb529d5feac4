"""`tfpartial scan`, part thirty-eight: gradients a model class hands
back for some of its weights (`return tf.gradients(self.loss, [w for w
in weights if 'kernel' in w.name])`) are found, whether the project
calls and applies them or the class trains nothing itself (a library's
helper, whose caller is outside). The branch's silences (such gradients
beside a whole Keras compile; a Saver over the trained scope) were
removed: they hid real freezes (tests/tools/test_scan_m44_fp38.py)."""

import pytest

import scanned

_MODEL = """\
    import tensorflow as tf
    from tensorflow import keras


    class Net(object):

      def __init__(self, n):
        self.x = tf.placeholder(tf.float32, [None, 8])
        self.y = tf.placeholder(tf.float32, [None, n])
        self.model = self.build(n)
        self.loss = keras.losses.categorical_crossentropy(
            self.y, self.model(self.x))
    {compile}

      def build(self, n):
        i = keras.layers.Input((8,))
        h = keras.layers.Dense(16, activation="relu")(i)
        return keras.models.Model(i, keras.layers.Dense(n)(h))

      def weights_of_interest(self):
        return [w for w in self.model.trainable_weights if "kernel" in w.name]

      def grad_loss(self):
        return tf.gradients(self.loss, self.weights_of_interest())
    """

_COMPILE = """\

      def train(self, xs, ys):
        self.model.compile(loss="categorical_crossentropy",
                           optimizer=keras.optimizers.Adam(0.001))
        self.model.fit(xs, ys, epochs=3)
"""

_APPLIES = """\
    import tensorflow as tf
    from net import Net

    net = Net(10)
    opt = tf.train.AdamOptimizer(0.01)
    step = opt.apply_gradients(zip(net.grad_loss(),
                                   net.weights_of_interest()))
    """

FOUND = {
    "called by the project and applied": {
        "net.py": _MODEL.format(compile=_COMPILE), "train.py": _APPLIES},
    "returned by a class that trains nothing itself": {
        "net.py": _MODEL.format(compile="")},
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_same_gradients_applied_or_given_out_stay_found(name):
  assert [f for f in scanned.in_project(FOUND[name])
          if f[0] == "var-list-filter"] != []

