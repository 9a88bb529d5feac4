"""`tfpartial scan` on a class's `get_params` filter by name prefix
(`p.name.startswith('mean_baseline_network') or ...`, less an
optimizer's slots by `'Adam' not in p.name`) that keeps every name the
class hands its makers of trainable variables (`self.create_mlp(name=
...)`, `make_param_layer(name=...)`; its `trainable=False` statistics
aside): the class's own parameters, silent. Beside it, a policy whose
filter leaves out the maker of its std parameter: found."""

import scanned

_BASELINE = {
    "core/utils.py": """\
        import tensorflow as tf

        def make_param_layer(num_units, name, trainable=True):
          return tf.get_variable(name, [num_units], trainable=trainable)
        """,
    "baselines/baseline.py": """\
        import tensorflow as tf
        from core.utils import make_param_layer

        class Baseline(object):
          def __init__(self, obs, returns):
            self._ret_mean = tf.Variable(tf.zeros([1]), name="ret_mean",
                                         trainable=False)
            self.all_params = self.create_mlp(name="mean_baseline_network")
            self.all_params['constant'] = make_param_layer(
                num_units=1, name="output_bas_meta_constant")
            with tf.variable_scope("mean_baseline_network", reuse=True):
              out = tf.layers.dense(obs, 1, name="output")
            self.loss = tf.reduce_mean(tf.square(
                out + self.all_params['constant'] - returns))
            self.train_op = tf.train.AdamOptimizer(1e-3).minimize(
                self.loss, var_list=self.get_params_internal(trainable=True))

          def create_mlp(self, name):
            with tf.variable_scope(name):
              return {'W': tf.get_variable("hidden", [4, 4])}

          def get_params_internal(self, **tags):
            if tags.get('trainable', False):
              params = tf.trainable_variables()
            else:
              params = tf.global_variables()
            params = [p for p in params
                      if p.name.startswith('mean_baseline_network')
                      or p.name.startswith('output_bas_meta_constant')]
            params = [p for p in params if 'Adam' not in p.name]
            return params
        """,
}


def _lists(files):
  return [f[0] for f in scanned.in_project(files)
          if f[0] == "var-list-filter"]


def test_a_filter_keeping_every_name_its_class_makes_is_silent():
  assert _lists(_BASELINE) == []


def test_a_filter_leaving_out_a_maker_of_the_class_is_found():
  # The policy's std parameter: made, never kept.
  files = dict(_BASELINE)
  files["baselines/baseline.py"] = files["baselines/baseline.py"].replace(
      "                      or p.name.startswith('output_bas_meta_constant')]",
      "                      ]")
  assert _lists(files) == ["var-list-filter"]
