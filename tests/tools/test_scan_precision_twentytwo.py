"""`tfpartial scan` stays silent on a look-alike that part twenty-one's
negative codebases showed.

An asynchronous actor-critic (A3C) whose
workers take gradients on their local copy of a network class and apply
them to the `'global'` instance of that same class, by a collection
under `'global'`, the scope its constructor is handed and opens around
all it builds: the whole global network trains. The twin whose filter
names a part of the global network is still found.

A tagger trained by the collection under the scope opened around all of
it, the collection's key written as a string
(`'trainable_variables'`), which is no scope. Its twin training the
CRF alone is still found.

A loss's padding mask made as a `tf.Variable` anew in each pass of a
loop and zeroed element by element before it is stacked: a buffer, no
weight. A trained weight whose fixed elements are zeroed after each
step is still found. Synthetic sources in the shape of real code."""

import pytest
import scanned


_A3C = """\
    import tensorflow as tf

    class ACNetwork():
      def __init__(self, s_size, a_size, scope, trainer):
        with tf.variable_scope(scope):
          self.state = tf.placeholder(tf.float32, [None, s_size])
          hidden = tf.layers.dense(self.state, 64, name='hidden')
          self.policy = tf.layers.dense(hidden, a_size, name='policy')
          self.value = tf.layers.dense(hidden, 1, name='value')
          self.loss = tf.reduce_mean(tf.square(self.value)) - tf.reduce_mean(
              self.policy)
          if scope != 'global':
            local_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            self.gradients = tf.gradients(self.loss, local_vars)
            grads = self.gradients
            global_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'global{part_text}')
            self.apply_grads = trainer.apply_gradients(
                zip(grads, global_vars))

    def main():
      trainer = tf.train.AdamOptimizer(1e-4)
      with tf.device('/cpu:0'):
        master = ACNetwork(4, 2, 'global', None)
        workers = [ACNetwork(4, 2, 'worker_' + str(i), trainer)
                   for i in range(4)]
      return master, workers
    """


@pytest.mark.parametrize("part_text, expected", [
    ("", []),
    # Only the policy head of the global network trains: a part.
    ("/policy", [("var-list-filter", "a3c.py", 17)]),
], ids=["whole_global_network", "policy_head_only"])
def test_worker_gradients_applied_to_the_global_network(part_text, expected):
  files = {"a3c.py": _A3C.format(part_text=part_text)}
  assert scanned.in_project(files) == expected


# A tagger built whole under `with tf.variable_scope('graph', ...)`, the
# same function called again with an EMA's getter; the step trains the
# collection under `'graph'`, its key written as a string.
_EMA = """\
    import numpy as np
    import tensorflow as tf

    def graph_fn(features, params, reuse=None, getter=None):
      with tf.variable_scope('graph', reuse=reuse, custom_getter=getter):
        glove = np.load(params['glove'])['embeddings']
        variable = tf.Variable(glove, dtype=tf.float32, trainable=False)
        embeddings = tf.nn.embedding_lookup(variable, features)
        output = tf.layers.dense(embeddings, 64)
        logits = tf.layers.dense(output, params['num_tags'])
        crf_params = tf.get_variable('crf', [9, 9], dtype=tf.float32)
      return logits, crf_params

    def ema_getter(ema):
      def _ema_getter(getter, name, *args, **kwargs):
        var = getter(name, *args, **kwargs)
        ema_var = ema.average(var)
        return ema_var if ema_var else var
      return _ema_getter

    def model_fn(features, labels, mode, params):
      logits, crf_params = graph_fn(features, params)
      variables = tf.get_collection('trainable_variables', '{scope}')
      ema = tf.train.ExponentialMovingAverage(0.999)
      ema_op = ema.apply(variables)
      logits_ema, _ = graph_fn(features, params, reuse=True,
                               getter=ema_getter(ema))
      loss = tf.reduce_mean(tf.square(logits - labels))
      train_op = tf.train.AdamOptimizer().minimize(
          loss, global_step=tf.train.get_or_create_global_step(),
          var_list=variables)
      train_op = tf.group([train_op, ema_op])
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    estimator = tf.estimator.Estimator(model_fn, 'results/model')
    """


@pytest.mark.parametrize("scope, expected", [
    ("graph", []),
    # Only the CRF's transitions train: a part of the tagger.
    ("graph/crf", [("var-list-filter", "ema.py", 23)]),
], ids=["whole_tagger", "crf_only"])
def test_a_collection_keyed_by_a_string_under_the_model_scope(scope,
                                                              expected):
  assert scanned.in_project({"ema.py": _EMA.format(scope=scope)}) == expected


# A contrastive loss's padding mask, a `tf.Variable` made anew for each
# sequence of the batch and zeroed element by element past its length,
# then stacked into the loss; the step trains the model's own weights.
_MASK = """\
    import tensorflow as tf

    def build_mask_matrix(seqlen, valid_len_list):
      res_list = []
      base_mask = tf.ones((seqlen, seqlen)) - tf.eye(seqlen)
      for i in range(len(valid_len_list)):
        one_base_mask = tf.Variable(base_mask)
        for j in range(valid_len_list[i], seqlen):
          for k in range(seqlen):
            one_base_mask[k, j].assign(0.)
            one_base_mask[j, k].assign(0.)
        res_list.append(one_base_mask)
      return tf.convert_to_tensor(tf.stack(res_list, 0))

    def contrastive_loss(score_matrix, valid_len_list):
      seqlen = score_matrix.shape[1]
      loss_mask = build_mask_matrix(seqlen, valid_len_list)
      return tf.reduce_sum(tf.nn.relu(0.3 - score_matrix) * loss_mask)

    model = tf.keras.Sequential([tf.keras.layers.Dense(8)])
    optimizer = tf.keras.optimizers.Adam()

    def train_step(x, lengths):
      with tf.GradientTape() as tape:
        score = model(x)
        loss = contrastive_loss(score, lengths)
      grads = tape.gradient(loss, model.trainable_variables)
      optimizer.apply_gradients(zip(grads, model.trainable_variables))
      return loss
    """

_TRAINED_MASK = """\
    import tensorflow as tf

    w = tf.Variable(tf.ones((8, 8)))
    optimizer = tf.keras.optimizers.Adam()

    def train(x, lengths):
      for step in range(100):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.matmul(x, w))
        grads = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(grads, [w]))
        for j in range(lengths, 8):
          for k in range(8):
            w[k, j].assign(0.)
    """


def test_a_buffer_made_anew_for_each_pass():
  assert scanned.in_project({"loss.py": _MASK}) == []


def test_fixed_elements_of_a_trained_weight_zeroed_after_each_step():
  # The weight the step trains, made once: its elements past `lengths`
  # are zeroed after every step, a re-mask.
  assert scanned.in_project({"train.py": _TRAINED_MASK}) == [
      ("weight-remask", "train.py", 14)]
