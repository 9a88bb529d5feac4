"""`tfpartial scan`'s `var-list-filter` where the filtered list reaches
the step as a field of a record built by keywords (`Namespace(loss=loss,
training_list=training_list)`): part twenty-four's Estimator model
(CristinaMa0917 universal_user_embedding) returns its `startswith`
filter that way from a model object's `__call__`, and `model_fn` hands
the record to the method that makes the step. The finding is at the
filter. Each source is synthetic."""

import scanned

_RETURNED = """\
    import tensorflow as tf
    from argparse import Namespace


    def build(x):
      with tf.variable_scope("bert"):
        h = tf.layers.dense(x, 8)
      with tf.variable_scope("head"):
        logits = tf.layers.dense(h, 2)
      loss = tf.reduce_mean(logits)
      training_list = []
      for var in tf.trainable_variables():
        if not var.op.name.startswith("bert"):
          training_list.append(var)
      return Namespace(loss=loss, training_list=training_list)


    def model_fn(features, labels, mode):
      out = build(features)
      train_op = tf.train.AdamOptimizer(0.1).minimize(
          out.loss, var_list=out.training_list)
      return tf.estimator.EstimatorSpec(mode, loss=out.loss,
                                        train_op=train_op)
    """

_ESTIMATOR = """\
    import tensorflow as tf
    from argparse import Namespace


    class Encoder:

      def __call__(self, x):
        training_list = []
        with tf.variable_scope("bert"):
          h = tf.layers.dense(x, 8)
        with tf.variable_scope("head"):
          logits = tf.layers.dense(h, 2)
        loss = tf.reduce_mean(logits)
        for var in tf.trainable_variables():
          if not var.op.name.startswith("bert"):
            training_list.append(var)
        return Namespace(loss=loss, training_list=training_list)


    class Net:

      def _train(self, model_output):
        train_op = tf.train.AdamOptimizer(0.1).minimize(
            model_output.loss, var_list=model_output.training_list)
        return tf.estimator.EstimatorSpec(
            "train", loss=model_output.loss, train_op=train_op)

      def _build(self, features):
        encoder = Encoder()
        model_output = encoder(features)
        model_output.ids = features["id"]
        return model_output

      def model_fn(self, features, labels, mode):
        model_output = self._build(features)
        if mode == tf.estimator.ModeKeys.TRAIN:
          return self._train(model_output)
    """


def test_a_returned_namespace_field_is_the_filter():
  assert scanned.found(_RETURNED) == [("var-list-filter", 14)]


def test_an_estimator_model_objects_record_passed_to_the_step_method():
  assert scanned.found(_ESTIMATOR) == [("var-list-filter", 16)]


def test_a_simple_namespace_built_by_a_list_comprehension():
  text = """\
      import types
      import tensorflow as tf


      def build(x):
        with tf.variable_scope("bert"):
          h = tf.layers.dense(x, 8)
        with tf.variable_scope("head"):
          logits = tf.layers.dense(h, 2)
        trained = [v for v in tf.global_variables()
                   if not v.name.startswith("bert/")]
        return types.SimpleNamespace(loss=tf.reduce_mean(logits),
                                     trained=trained)


      def train(x):
        out = build(x)
        return tf.train.AdamOptimizer(0.1).minimize(
            out.loss, var_list=out.trained)
      """
  assert scanned.found(text) == [("var-list-filter", 10)]


def test_a_namedtuple_record_built_where_the_step_is():
  text = """\
      import collections
      import tensorflow as tf

      Parts = collections.namedtuple("Parts", ["loss", "train_vars"])


      def train(x):
        with tf.variable_scope("backbone"):
          h = tf.layers.dense(x, 8)
        with tf.variable_scope("head"):
          logits = tf.layers.dense(h, 2)
        loss = tf.reduce_mean(logits)
        parts = Parts(loss=loss, train_vars=[
            v for v in tf.trainable_variables() if "head" in v.name])
        return tf.train.AdamOptimizer(0.1).minimize(
            parts.loss, var_list=parts.train_vars)
      """
  assert scanned.found(text) == [("var-list-filter", 13)]


def test_the_whole_field_beside_a_filtered_one_is_silent():
  text = _RETURNED.replace(
      "return Namespace(loss=loss, training_list=training_list)",
      "return Namespace(loss=loss, training_list=training_list,"
      " all_vars=tf.trainable_variables())").replace(
          "var_list=out.training_list", "var_list=out.all_vars")
  assert scanned.found(text) == []


def test_a_gans_two_fields_trained_by_their_own_losses_are_silent():
  text = """\
      import tensorflow as tf
      from argparse import Namespace


      def build(z, x):
        with tf.variable_scope("generator"):
          fake = tf.layers.dense(z, 4)
        with tf.variable_scope("discriminator"):
          real_score = tf.layers.dense(x, 1)
          fake_score = tf.layers.dense(fake, 1, reuse=True)
        tvars = tf.trainable_variables()
        return Namespace(
            d_loss=tf.reduce_mean(fake_score - real_score),
            g_loss=-tf.reduce_mean(fake_score),
            g_vars=[v for v in tvars if v.name.startswith("generator")],
            d_vars=[v for v in tvars if v.name.startswith("discriminator")])


      def train(z, x):
        net = build(z, x)
        opt = tf.train.AdamOptimizer(1e-4)
        d_step = opt.minimize(net.d_loss, var_list=net.d_vars)
        g_step = opt.minimize(net.g_loss, var_list=net.g_vars)
        return d_step, g_step
      """
  assert scanned.found(text) == []


def test_a_target_networks_field_synced_from_the_online_one_is_silent():
  text = """\
      import tensorflow as tf
      from argparse import Namespace


      def build(s):
        with tf.variable_scope("online"):
          q = tf.layers.dense(s, 4)
        with tf.variable_scope("target"):
          q_next = tf.layers.dense(s, 4)
        tvars = tf.trainable_variables()
        return Namespace(
            q=q, q_next=q_next,
            online=[v for v in tvars if v.name.startswith("online")],
            target=[v for v in tvars if v.name.startswith("target")])


      def train(s, r):
        net = build(s, r)
        loss = tf.reduce_mean((r + tf.stop_gradient(net.q_next) - net.q) ** 2)
        step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=net.online)
        sync = [t.assign(o) for t, o in zip(net.target, net.online)]
        return step, sync
      """
  assert scanned.found(text) == []
