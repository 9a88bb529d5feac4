"""`tfpartial scan` on part 28's and 29's last false positives and
misses. A scope a class's own method opens from its parameter, named by
a literal where the class calls it (`self._encoder(x, name='teacher')`),
is a root scope as `with tf.variable_scope('teacher')` is: a step that
trains the two scopes of a distillation teacher trains that whole
model (part 29's prob-kd-tf). The same names given inside a scope of
the model, or to a method that builds one layer (`self.fc(h,
name='fc8')`), stay parts, and training one of them is still found.
Synthetic sources in the shape of real code."""

import pytest
import scanned

_found = scanned.found


# A teacher built by two methods of its class, each opening the scope
# its caller names; the teacher's step trains the scopes it names.
_TEACHER = """\
    import tensorflow as tf

    class CNN(object):
      def build_model(self, x, reuse=False):
        {opened}z = self._encoder(x, reuse=reuse, name='teacher')
        {opened}logits = self._classifier(z, reuse=reuse, name='class-teacher')
        self.loss = tf.reduce_mean(logits)
        return logits

      def _classifier(self, z, name="cnn", reuse=False):
        with tf.variable_scope(name, reuse=reuse):
          return tf.layers.dense(z, 5, name='d8')

      def _encoder(self, x, name='encoder', reuse=False):
        with tf.variable_scope(name, reuse=reuse):
          h = tf.layers.conv2d(x, 16, 3, name='c1')
          return tf.layers.dense(h, 8, name='z_mu')

      def _optimizer(self, loss):
        teacher = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                    scope="teacher/")
        head = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                 scope="class-teacher/")
        var_list = {var_list}
        opt = tf.train.AdamOptimizer(1e-3)
        grads = opt.compute_gradients(loss, var_list=var_list)
        return opt.apply_gradients(grads)
    """

_INSIDE = "with tf.variable_scope('model'):\n          "


@pytest.mark.parametrize("source, expected", [
    (_TEACHER.format(opened="", var_list="head + teacher"), []),
    (_TEACHER.format(opened="", var_list="teacher + head"), []),
    # The same names given under the model's own scope: parts of it, and
    # the classifier trained alone on the encoder is found.
    (_TEACHER.replace("        {opened}z", "        " + _INSIDE + "z").replace(
        "        {opened}logits", "          logits").format(
            var_list="head"), [("var-list-filter", 23)]),
], ids=["teacher_scopes", "teacher_scopes_reversed", "named_inside_model"])
def test_scopes_named_for_the_class_own_methods(source, expected):
  assert _found(source) == expected


# One layer per call of a method of the class (`fc6`, `fc7`, `fc8`):
# each name a layer, not a model; training the last is fine-tuning.
_LAYERS = """\
    import tensorflow as tf

    class AlexNet(object):
      def create(self, x):
        h = self.fc(x, 4096, name='fc6')
        h = self.fc(h, 4096, name='fc7')
        self.logits = self.fc(h, 10, name='fc8')

      def fc(self, x, units, name):
        with tf.variable_scope(name):
          w = tf.get_variable('w', [4096, units])
          b = tf.get_variable('b', [units])
          return tf.matmul(x, w) + b

      def train(self, loss):
        var_list = [v for v in tf.trainable_variables()
                    if v.name.split('/')[0] in ['fc8']]
        return tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, var_list=var_list)
    """


def test_layers_named_for_the_class_own_method_stay_layers():
  assert _found(_LAYERS) == [("var-list-filter", 16)]
