"""`tfpartial scan`'s `var-list-filter` on lists that leave variables
out in ways part eighteen's real code showed: variables kept by their
shape (the output layers' width); two filters at their own learning
rates (Keras 2's `get_updates(loss, params)`) that name some of the
scopes their function builds layers in and leave the backbones' scopes
out; a filter keeping the top of a hub backbone beside a head list that
is the model less the whole backbone, in a training function written
twice (a mixup variant). Each beside a twin that trains everything,
silent."""

from tests.tools import scanned

_found = scanned.found

_BY_SHAPE = """
import tensorflow as tf

def main(num_classes, lr, images, labels):
    loss = tf.reduce_mean(tf.square(build(images) - labels))
    every = tf.trainable_variables()
    last = [v for v in every if v.shape[-1] == (5 + num_classes) * 3]
    train_op = tf.train.AdamOptimizer(lr).minimize(loss, var_list=last)
    with tf.Session() as sess:
        for _ in range(100):
            sess.run(train_op)
"""


def test_variables_kept_by_their_shape_are_found():
  assert _found(_BY_SHAPE) == [("var-list-filter", 7)]


def test_shapes_compared_with_each_other_are_silent():
  # `g.shape == v.shape` checks a pair, it chooses nothing.
  code = _BY_SHAPE.replace("v.shape[-1] == (5 + num_classes) * 3",
                           "v.shape == v.shape")
  assert _found(code) == []


_SCOPES = """
import tensorflow as tf
from tensorflow.keras.layers import GRU, Dense


def main(lr, x_rgb, x_depth, y):
    with tf.variable_scope('rgb'):
        model_rgb = ResNet(x_rgb)
    with tf.variable_scope('depth'):
        model_depth = ResNet(x_depth)
    with tf.variable_scope('conv1x1'):
        joined = tf.layers.conv2d(
            tf.concat([model_rgb.out, model_depth.out], -1), 64, 1)
    with tf.variable_scope('rnn'):
        preds = Dense(10)(GRU(32)(joined))
    head = [v for v in tf.trainable_variables(scope='rnn')]
    fusion = [v for v in tf.trainable_variables(scope='conv1x1')]
    loss = tf.reduce_mean(tf.square(preds - y))
    step_head = tf.keras.optimizers.RMSprop(lr=lr).get_updates(
        loss=loss, params=head)
    step_fusion = tf.keras.optimizers.RMSprop(lr=lr * 2).get_updates(
        loss=loss, params=fusion)
    with tf.Session() as sess:
        sess.run([step_head, step_fusion])
"""


def test_filters_leaving_out_scopes_built_beside_are_found():
  assert _found(_SCOPES) == [("var-list-filter", 16)]


def test_filters_naming_every_scope_built_with_layers_are_silent():
  # The other scopes hold no layer: inputs joined, an optimizer made.
  code = _SCOPES.replace("model_rgb = ResNet(x_rgb)", "a = x_rgb + 1").replace(
      "model_depth = ResNet(x_depth)",
      "opt = tf.keras.optimizers.RMSprop(lr=lr)").replace(
          "model_rgb.out, model_depth.out", "a, x_depth")
  assert _found(code) == []


_HUB = """
import tensorflow as tf
import tensorflow_hub as hub


def build(handle, names, keep):
    backbone = hub.KerasLayer(handle, trainable=True)
    inputs = tf.keras.Input(shape=(16000,))
    out = tf.keras.layers.Dense(10)(backbone(inputs))
    model = tf.keras.Model(inputs, out)
    every_backbone = list(backbone.trainable_variables)
    top = [v for v in every_backbone if any(n in v.name for n in names[-keep:])]
    return model, backbone, top


class Trainer(object):
    def __init__(self, model, backbone, top):
        self.model = model
        self.top = top
        self.head = [v for v in model.trainable_variables
                     if v not in backbone.trainable_variables]
        self.update = self.top + self.head
        self.opt_top = tf.keras.optimizers.Adam(1e-5)
        self.opt_head = tf.keras.optimizers.Adam(1e-3)

    @tf.function
    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.update)
        n = len(self.top)
        self.opt_top.apply_gradients(zip(grads[:n], self.top))
        self.opt_head.apply_gradients(zip(grads[n:], self.head))
        return loss

    @tf.function
    def train_step_mixup(self, x, y, w):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(w * tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.update)
        n = len(self.top)
        self.opt_top.apply_gradients(zip(grads[:n], self.top))
        self.opt_head.apply_gradients(zip(grads[n:], self.head))
        return loss


def main(handle, names, x, y, w):
    model, backbone, top = build(handle, names, 6)
    trainer = Trainer(model, backbone, top)
    trainer.train_step(x, y)
    trainer.train_step_mixup(x, y, w)
"""


def test_top_of_a_backbone_beside_the_model_less_it_is_found():
  assert _found(_HUB) == [("var-list-filter", 12)]


def test_the_whole_backbone_beside_the_model_less_it_is_silent():
  # Every backbone variable kept: the two lists are the whole model.
  code = _HUB.replace(
      "top = [v for v in every_backbone if any(n in v.name for n in "
      "names[-keep:])]", "top = every_backbone")
  assert _found(code) == []


_ACTOR_CRITIC = """
import tensorflow as tf


class Agent(object):
    def __init__(self, model):
        self.model = model
        self.actor = [v for v in model.trainable_variables if 'actor' in v.name]
        self.critic = [v for v in model.trainable_variables
                       if 'critic' in v.name]
        self.opt = tf.keras.optimizers.Adam(1e-3)

    def train_actor(self, x):
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(self.model.q(x, self.model.pi(x)))
        grads = tape.gradient(loss, self.actor)
        self.opt.apply_gradients(zip(grads, self.actor))

    def train_critic(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model.q(x, None) - y))
        grads = tape.gradient(loss, self.critic)
        self.opt.apply_gradients(zip(grads, self.critic))
"""


def test_an_actor_and_a_critic_trained_apart_stay_silent():
  # Two functions training lists of their own: halves, no twins.
  assert _found(_ACTOR_CRITIC) == []


_NESTED = """
import tensorflow as tf


class Generator(object):
    def build(self, x):
        with tf.variable_scope('encoder'):
            self.code = tf.layers.dense(x, 64)
        with tf.variable_scope('decoder'):
            self.out = tf.layers.dense(self._attention(self.code), 10)

    def _attention(self, code):
        with tf.variable_scope('attention'):
            return tf.layers.dense(code, 64)

    def init_optimizer(self, lr):
        params = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                   scope='encoder')
        params += tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                    scope='decoder')
        grads = tf.gradients(self.loss, params)
        self.update = tf.train.AdamOptimizer(lr).apply_gradients(
            zip(grads, params))
        self.pre_grads = tf.gradients(self.pre_loss, params)
        self.pre_update = tf.train.AdamOptimizer(lr).apply_gradients(
            zip(self.pre_grads, params))
"""


def test_scopes_nested_in_a_kept_scope_by_a_call_are_silent():
  # `attention` is opened inside `decoder`: the two lists hold it.
  assert _found(_NESTED) == []
