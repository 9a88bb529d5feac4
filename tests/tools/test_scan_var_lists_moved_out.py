"""`tfpartial scan`'s `var-list-filter` where entries are taken out of a
chosen list (`weight_list.remove(w)`) to train in a step of their own at
another rate (part twenty-five's TFMatch solver: `update_var_scope`
chooses the scopes, `adjust_lr` moves some of their variables to steps
at a scaled rate): nothing is left out by the `remove`, so the finding
is at the filter that chose the list. The look-alikes: entries taken out
that no step trains (the `remove` is the choice), and a list of every
variable whose removed entries train in their own step (silent). Each
source is synthetic, in the shape of real code."""

import pytest
import scanned


_found = scanned.found

POSITIVE = {
    # TFMatch: scopes chosen by the configuration, some of their
    # variables moved to steps at their own rates.
    "entries moved to steps at their own rates, scopes configured": ("""\
        import tensorflow as tf

        def solver(config, loss):
          if config['update_var_scope'] is not None:
            weight_list = []
            for scope in config['update_var_scope'].split(','):
              weight_list.extend(tf.get_collection(
                  tf.GraphKeys.TRAINABLE_VARIABLES, scope))
          else:
            weight_list = tf.trainable_variables()
          all_adjust, all_lr = [], []
          for item in config['adjust_lr']:
            scope, lr = item.split(',')
            adjust = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            all_adjust.append(adjust)
            all_lr.append(float(lr))
            for w in adjust:
              if w in weight_list:
                weight_list.remove(w)
          opt = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=weight_list)
          for i in range(len(all_adjust)):
            step = tf.train.AdamOptimizer(1e-3 * all_lr[i]).minimize(
                loss, var_list=all_adjust[i])
            opt = tf.group(opt, step)
          return opt
        """, [("var-list-filter", 7)]),
    # Another team: per-scope rates from hyperparameters, each scope's
    # variables trained by its own step inside the loop.
    "entries moved to a step in the same loop, scopes from hyperparameters": (
        """\
        import tensorflow as tf

        def build(hp, loss):
          trainable = []
          for scope in hp.train_scopes:
            trainable += tf.trainable_variables(scope)
          ops = []
          for scope, rate in hp.scope_rates.items():
            scoped = tf.trainable_variables(scope)
            for v in scoped:
              if v in trainable:
                trainable.remove(v)
            ops.append(tf.train.GradientDescentOptimizer(rate).minimize(
                loss, var_list=scoped))
          ops.append(tf.train.GradientDescentOptimizer(hp.lr).minimize(
              loss, var_list=trainable))
          return tf.group(*ops)
        """, [("var-list-filter", 6)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_entries_moved_to_their_own_step_are_not_the_choice(name):
  text, expected = POSITIVE[name]
  assert _found(text) == expected


def test_entries_taken_out_that_no_step_trains_are_the_choice():
  # The same solver with the taken-out scopes skipped, not trained.
  assert _found("""\
      import tensorflow as tf

      def solver(config, loss):
        if config['update_var_scope'] is not None:
          weight_list = []
          for scope in config['update_var_scope'].split(','):
            weight_list.extend(tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope))
        else:
          weight_list = tf.trainable_variables()
        for scope in config['skip_scopes']:
          skipped = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
          for w in skipped:
            if w in weight_list:
              weight_list.remove(w)
        return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=weight_list)
      """) == [("var-list-filter", 15)]


def test_every_variable_with_entries_moved_to_their_own_step_is_silent():
  assert _found("""\
      import tensorflow as tf

      def train_ops(loss):
        train_vars = tf.trainable_variables()
        bn_vars = [v for v in train_vars if 'BatchNorm' in v.name]
        for v in bn_vars:
          train_vars.remove(v)
        main = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=train_vars)
        bn = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=bn_vars)
        return tf.group(main, bn)
      """) == []
