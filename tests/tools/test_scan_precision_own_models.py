"""`tfpartial scan` stays silent on a `var_list` that is the whole of one
model, as part 27's negatives spell it, and still finds the lists that
leave part of a model out.

A model class whose `__init__` opens its own scope (`with
tf.variable_scope(self.name): self._build_graph()`) and whose
`get_vars(self, name=None)` keeps `name in v.name` after `name = name
or self.name`: no call passes a name, so the list is the object's own
scope, all of it (few-shot music generation's LSTM baseline). A
few-shot classifier built under its scope on a placeholder of features
and trained on a loss of its outputs and of its own regularisation
terms (`self.used_regs = [r for r in all_regs if 'fsl_cls' in
r.name]`): the hallucinator beside it, restored from a checkpoint, is
another network this loss never reads. The twins pass another scope,
build a part outside the object's scope, feed the classifier the
hallucinator's output, or fill the regularisation list later. Synthetic
sources in the shape of real code."""

import pytest
import scanned

_found = scanned.found


_OWN_SCOPE = """\
    import tensorflow as tf

    class TFModel(object):
        def __init__(self, config):
            self.name = config['name']
            with tf.variable_scope(self.name):
                self._global_step = tf.Variable(0, trainable=False)
                self._build_graph()
            {outside}
            self._saver = tf.train.Saver(self.get_vars(only_trainable=False))

        def get_vars(self, name=None, only_trainable=True):
            name = name or self.name
            if only_trainable:
                return [v for v in tf.trainable_variables() if name in v.name]
            else:
                return [v for v in tf.global_variables() if name in v.name]


    class LSTMBaseline(TFModel):
        def _build_graph(self):
            embedding = tf.get_variable('embedding', [10, 4])
            softmax_w = tf.get_variable('softmax_w', [4, 10])
            logits = tf.matmul(
                tf.nn.embedding_lookup(embedding, self._words), softmax_w)
            self._loss = tf.reduce_mean(logits)
            optimizer = tf.train.AdamOptimizer(1e-3)
            grads, _ = tf.clip_by_global_norm(
                tf.gradients(self._loss, self.get_vars({passed})), 5.0)
            self._train_op = optimizer.apply_gradients(
                zip(grads, self.get_vars({passed})), self._global_step)
    """

_OUTSIDE = """with tf.variable_scope('encoder'):
                self._build_encoder()"""


_CLASSIFIER = """\
    import tensorflow as tf
    from ops import *


    class FSL(object):
        def build_model(self):
            self.features = tf.placeholder(tf.float32, [None, 512])
            self.fine_labels = tf.placeholder(tf.float32, [None, 100])
            self.triplet_features = tf.placeholder(tf.float32, [None, 1536])
            self.hallucinated_features = self.build_hallucinator(
                self.triplet_features)
            self.logits = self.build_fsl_classifier({fed})
            self.loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
                labels=self.fine_labels, logits=self.logits))
            self.all_vars_hal = [v for v in tf.global_variables()
                                 if 'hal' in v.name]
            self.trainable_vars = tf.trainable_variables()
            self.trainable_vars_fsl_cls = [v for v in self.trainable_vars
                                           if 'fsl_cls' in v.name]
            self.all_regs = tf.get_collection(
                tf.GraphKeys.REGULARIZATION_LOSSES)
            self.used_regs = [r for r in self.all_regs if 'fsl_cls' in r.name]
            {more_regs}
            self.opt_fsl_cls = tf.train.AdamOptimizer(1e-3).minimize(
                self.loss + sum(self.used_regs),
                var_list=self.trainable_vars_fsl_cls)
            self.saver_hal = tf.train.Saver(var_list=self.all_vars_hal)

        def build_fsl_classifier(self, input_):
            with tf.variable_scope('fsl_cls',
                                   regularizer=l2_regularizer(self.l2scale)):
                self.dense14_ = linear(input_, 512, name='dense14_')
                self.relu14_ = tf.nn.relu(self.dense14_)
                self.dense16_ = linear(self.relu14_, 100, name='dense16_')
            return self.dense16_

        def build_hallucinator(self, input_):
            with tf.variable_scope('hal',
                                   regularizer=l2_regularizer(self.l2scale)):
                self.dense1 = linear(input_, 512, name='dense1')
                self.relu1 = tf.nn.relu(self.dense1)
            return self.relu1

        def load_hal(self, init_from):
            ckpt = tf.train.get_checkpoint_state(init_from)
            self.saver_hal.restore(self.sess, ckpt.model_checkpoint_path)
    """


@pytest.mark.parametrize("source, expected", [
    (_OWN_SCOPE.format(outside="", passed=""), []),
    (_CLASSIFIER.format(fed="self.features", more_regs=""), []),
], ids=["own_scope_by_default", "classifier_on_fed_features"])
def test_a_list_of_one_whole_model_is_silent(source, expected):
  assert _found(source) == expected


@pytest.mark.parametrize("source, expected", [
    # Another scope passed: a part, found.
    (_OWN_SCOPE.format(outside="", passed="'decoder'"),
     [("var-list-filter", 15)]),
    # A scope of its own by default: not the object's.
    (_OWN_SCOPE.format(outside="", passed="").replace(
        "name=None", "name='decoder'"), [("var-list-filter", 15)]),
    # A part built outside the object's scope is left out.
    (_OWN_SCOPE.format(outside=_OUTSIDE, passed=""),
     [("var-list-filter", 16)]),
    # The classifier fed the restored hallucinator's output: left out.
    (_CLASSIFIER.format(fed="self.hallucinated_features", more_regs=""),
     [("var-list-filter", 18)]),
    # The loss's list filled later: not followed, found as before.
    (_CLASSIFIER.format(fed="self.features",
                        more_regs="self.used_regs.append(self.extra)"),
     [("var-list-filter", 18)]),
], ids=["other_scope_passed", "other_scope_by_default",
        "part_outside_own_scope",
        "classifier_on_hallucinated", "regularisers_filled_later"])
def test_a_list_leaving_part_of_a_model_out_is_still_found(source, expected):
  assert _found(source) == expected
