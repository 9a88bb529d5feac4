"""`tfpartial scan` stays silent on look-alikes part fifteen's negative
code showed: a gradient of a hand-named variable only fetched and
printed, where nothing in the module applies a gradient (a tutorial
showing `tf.gradients`). The same gradient applied is still found.
Synthetic sources in the shape of real code."""

import pytest
import scanned


_found = scanned.found


_FETCHED = """\
    import tensorflow as tf
    w1 = tf.Variable([[1., 2.]])
    w2 = tf.Variable([[3., 4.]])
    b = tf.Variable(2.)
    y = tf.matmul(w1, [[9.], [10.]]) + b
    grads = tf.gradients(y, {listed})
    with tf.Session() as sess:
      sess.run(tf.global_variables_initializer())
      {use}
    """

_SHOWN = "print(sess.run(grads))"
_APPLIED = ("sess.run(tf.train.GradientDescentOptimizer(0.1)"
            ".apply_gradients(zip(grads, [w1])))")


@pytest.mark.parametrize("source, expected", [
    (_FETCHED.format(listed="[w1]", use=_SHOWN), []),
    (_FETCHED.format(
        listed="[v for v in tf.trainable_variables() if 'w1' in v.name]",
        use=_SHOWN), []),
    (_FETCHED.format(listed="[w1]", use=_APPLIED),
     [("var-list-filter", 6)]),
], ids=["fetched", "fetched_by_name", "applied"])
def test_gradient_only_fetched(source, expected):
  assert _found(source) == expected


_OPTIMIZER = """\
    class Adam:
      def __init__(self, learning_rate=0.001, beta1=0.9):
        self.learning_rate = learning_rate
        self.beta1 = beta1
        self.Ms = {{}}

      def compile(self, weights):
        for W in weights:
          self.Ms[id(W)] = [tfe.define_private_variable(np.zeros(w.shape))
                            for w in W]

      def apply_gradients(self, W, G):
        M = self.Ms[id(W)]
        for i in range(len(W)):
          tfe.assign(M[i], {b} * M[i].read_value() + (1 - {b}) * G[i])
          diff = self.learning_rate * M[i].read_value()
          tfe.assign(W[i], W[i].read_value() - diff)


    class Sequential:
      def fit(self, x, y, epochs=1):
        for epoch in range(epochs):
          for layer in self.layers:
            grads = layer.backward(x)
            self._optimizer.apply_gradients(layer.weights, grads)
    """


@pytest.mark.parametrize("source, expected", [
    (_OPTIMIZER.format(b="self.beta1"), []),
    (_OPTIMIZER.format(b="0.9"), []),
    (_OPTIMIZER.format(b="self.mask"), [15]),
], ids=["attribute", "literal", "mask"])
def test_moment_blended_by_a_number(source, expected):
  assert [line for _, line in scanned.in_text(
      source, "write-back")] == expected


_CONSTRAINT = """\
    class WeightClip(Constraint):
      def __init__(self, c=2):
        self.c = c

      def __call__(self, p):
        return {factor} * p / tf.maximum(self.c, tf.abs(p))

    model.add(Dense(16, kernel_constraint=WeightClip(0.992)))
    """


@pytest.mark.parametrize("source, expected", [
    (_CONSTRAINT.format(factor="self.c"), []),
    (_CONSTRAINT.format(factor="self.mask"),
     [("weight-remask", 6)]),
], ids=["by_a_number", "by_a_mask"])
def test_constraint_scaled_by_a_number(source, expected):
  assert _found(source) == expected


_HELPER = """\
    import tensorflow as tf

    def sdae(x, layers, name="SDAE"):
      with tf.variable_scope({opened}):
        w = tf.get_variable("w", [10, layers[0]])
        return tf.matmul(x, w)
    """

_TWO_LISTS = """\
    import tensorflow as tf
    from .cdl import sdae

    class Model:
      def build(self):
        with tf.variable_scope("CDR_Variable"):
          self.U = tf.get_variable(name="U", shape=[10, 4])
        encoded = sdae(self.x, [4], name="SDAE_Variable")
        self.loss = tf.reduce_sum(tf.matmul(encoded, tf.transpose(self.U)))
        cdr = [v for v in tf.trainable_variables() if "CDR_Variable" in v.name]
        ae = [v for v in tf.trainable_variables() if "SDAE_Variable" in v.name]
        self.opt1 = tf.train.AdamOptimizer(0.1).minimize(self.loss, var_list=cdr)
        self.opt2 = tf.train.AdamOptimizer(0.1).minimize(self.loss, var_list=ae)
    """


@pytest.mark.parametrize("opened, expected", [
    ("name", []),
    ('"SDAE"', [("var-list-filter", "m/cdr.py", 11)]),
], ids=["scope_passed_in", "scope_fixed"])
def test_scope_named_by_the_caller(opened, expected):
  assert scanned.in_project({
      "m/__init__.py": "", "m/cdl.py": _HELPER.format(opened=opened),
      "m/cdr.py": _TWO_LISTS}) == expected


_GIVEN = """\
    class Model(object):
      def build(self):
        self.add_generator(name_scope=self.config['name_scope'])
        self.loss = tf.reduce_mean(self.layers[-1])
        self.g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                        scope=self.config['name_scope'])
        self.g_optim = tf.train.AdamOptimizer(1e-3).minimize(
            self.loss, var_list=self.g_vars)

      def add_generator(self, name_scope='SoundNet'):
        with tf.variable_scope(name_scope):
          w = tf.get_variable('w', [4, 4])
          self.layers = [tf.matmul(self.x, w)]
        {after}
    """


@pytest.mark.parametrize("source, expected", [
    (_GIVEN.format(after=""), []),
    (_GIVEN.format(after="self.head = tf.layers.dense(self.layers[0], 4)"),
     [("var-list-filter", 5)]),
], ids=["built_whole", "head_outside"])
def test_scope_given_to_the_builder(source, expected):
  assert _found(source) == expected


def test_builder_handed_features_stays_found():
  source = _GIVEN.format(after="").replace(
      "self.add_generator(name_scope=", "self.add_generator(feats, name_scope=")
  source = source.replace("def add_generator(self, name_scope",
                          "def add_generator(self, feats, name_scope")
  assert _found(source) == [("var-list-filter", 5)]


def test_scope_named_inside_another_stays_a_part():
  inner = _TWO_LISTS.replace(
      '        encoded = sdae(self.x, [4], name="SDAE_Variable")\n',
      '        with tf.variable_scope("model"):\n'
      '          encoded = sdae(self.x, [4], name="SDAE_Variable")\n')
  assert scanned.in_project({
      "m/__init__.py": "", "m/cdl.py": _HELPER.format(opened="name"),
      "m/cdr.py": inner}) == [("var-list-filter", "m/cdr.py", 12)]
