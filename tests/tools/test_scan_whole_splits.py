"""`tfpartial scan` on lists split apart and trained whole: fields picked
from towers' returned tuples (`zip(*towers)[-2:]`: columns, never rows),
a GAN's pairs sliced into halves each applied in one branch of a
`tf.cond` the step counter picks (both branches run in a training), an
optimizer wrapper that splits its pairs into sharded and replicated
groups and joins both back in one list. Each stays silent; the
look-alikes that do leave variables out (a slice of the pairs
themselves, one half in a branch beside a no-op, one group of the split
applied, the rest never trained) stay found, as does a wide part's
variable left out of one list and taken back by position (the position
may name another variable). Paraphrased from real code (FOTS
multigpu_train.py, analytics-zoo gan_estimator.py, HybridBackend
optimizer.py, AutoInt model.py)."""

import scanned


_TOWERS = """\
    import tensorflow as tf

    def tower(opt, scope):
      x = tf.placeholder(tf.float32, [None, 3])
      loss = build(x)
      updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)
      grads = opt.compute_gradients(loss{tower_list})
      return x, loss, updates, grads

    def average(tower_grads):
      out = []
      for pairs in zip(*tower_grads):
        g = tf.reduce_mean(tf.stack([g for g, _ in pairs]), 0)
        out.append((g, pairs[0][1]))
      return out

    def main():
      opt = tf.train.AdamOptimizer(0.1)
      towers = []
      for i in range(2):
        towers.append(tower(opt, 'tower_%d' % i))
      losses, updates, tower_grads = {fields}
      grads = average(tower_grads)
      return opt.apply_gradients({grads})
    """


def test_fields_of_towers_picked_by_a_slice_train_every_variable():
  code = _TOWERS.format(fields="zip(*towers)[-3:]", grads="grads",
                        tower_list="")
  assert scanned.found(code) == []


def test_fields_of_towers_picked_from_a_list_of_the_zip_are_silent():
  code = _TOWERS.format(fields="list(zip(*towers))[1:]", grads="grads",
                        tower_list="")
  assert scanned.found(code) == []


def test_a_tower_training_the_last_variables_is_found():
  code = _TOWERS.format(fields="zip(*towers)[-3:]", grads="grads",
                        tower_list=", var_list=tf.trainable_variables()[-2:]")
  assert scanned.found(code) == [("var-list-filter", 7)]


_GAN = """\
    import tensorflow as tf
{flags}
    def train(gen_fn, dis_fn, g_opt, d_opt, z, real):
      counter = tf.train.get_or_create_global_step()
      dis_phase = {phase}
      with tf.variable_scope("Generator"):
        fake = gen_fn(z)
      with tf.variable_scope("Discriminator"):
        d_fake = dis_fn(fake)
      with tf.variable_scope("Discriminator", reuse=True):
        d_real = dis_fn(real)
      g_loss = -tf.reduce_mean(d_fake)
      d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(d_real)
      gen_vars = tf.trainable_variables("Generator")
      dis_vars = tf.trainable_variables("Discriminator")

      def gen_grads():
        gv = g_opt.compute_gradients(g_loss, var_list=gen_vars)
        return [g for g, v in gv] + [tf.zeros_like(v) for v in dis_vars]

      def dis_grads():
        gv = d_opt.compute_gradients(d_loss, var_list=dis_vars)
        return [tf.zeros_like(v) for v in gen_vars] + [g for g, v in gv]

      grads = tf.cond(dis_phase, dis_grads, gen_grads)
      grads_vars = list(zip(grads, gen_vars + dis_vars))
      gen_gv = grads_vars[:len(gen_vars)]
      dis_gv = grads_vars[len(gen_vars):]
{apply}
      with tf.control_dependencies([train_op]):
        return tf.assign_add(counter, 1)
    """

_BOTH = """\
      train_op = tf.cond(dis_phase,
                         lambda: d_opt.apply_gradients(dis_gv),
                         lambda: g_opt.apply_gradients(gen_gv))
"""

_NAMED = """\
      def gen_step():
        return g_opt.apply_gradients(gen_gv)

      def dis_step():
        return d_opt.apply_gradients(dis_gv)

      train_op = tf.cond(dis_phase, dis_step, gen_step)
"""

# The look-alike: the generator's half only, beside a step that does
# nothing; the discriminator never trains.
_ONE_HALF = """\
      train_op = tf.cond(dis_phase, lambda: tf.no_op(),
                         lambda: g_opt.apply_gradients(gen_gv))
"""


# The phase of the GAN's two steps: every other step, by the counter.
COUNTER_PHASE = "tf.less(tf.mod(counter, 2), 1)"


def gan(phase=COUNTER_PHASE, apply=_BOTH, flags=False):
  """The GAN of two halves, its phase given (`flags`: a `FLAGS` line
  after the import, as the scripts that read a flag have)."""
  return _GAN.format(phase=phase, apply=apply,
                     flags="    FLAGS = tf.app.flags.FLAGS\n" if flags else "")


def test_a_gans_halves_applied_in_the_branches_of_a_cond_are_silent():
  assert scanned.found(gan()) == []


def test_a_gans_halves_applied_by_named_branches_are_silent():
  assert scanned.found(gan(apply=_NAMED)) == []


def test_halves_that_leave_a_gap_between_them_are_found():
  code = gan().replace(
      "grads_vars[len(gen_vars):]", "grads_vars[len(gen_vars) + 1:]")
  assert scanned.found(code) == [("var-list-filter", 27),
                                 ("var-list-filter", 28)]


def test_one_half_applied_beside_a_no_op_is_found():
  assert scanned.found(gan(apply=_ONE_HALF)) == [
      ("var-list-filter", 27)]


_WRAPPER = """\
    import tensorflow as tf

    def wraps(cls):
      class Synced(cls):
        def __init__(self, *args, **kwargs):
          super().__init__(*args, **kwargs)
          self._replica_vars = []
          self._shard_vars = []

        def _aggregate(self, grads_and_vars):
          shard_grads = []
          shard_idx = []
          rep_grads = []
          rep_idx = []
          sharded = tf.get_collection_ref("sharded_variables")
          sharded += tf.get_collection_ref("not_replicated")
          for i, gv in enumerate(grads_and_vars):
            if gv[0] is None:
              continue
            if gv[1] in sharded:
              shard_idx.append(i)
              shard_grads.append(gv[0])
              self._shard_vars.append(gv[1])
            else:
              rep_idx.append(i)
              rep_grads.append(gv[0])
              self._replica_vars.append(gv[1])
          rep_grads, shard_grads = all_reduce(rep_grads, shard_grads)
          indexed = []
{shard}
          for i, g in enumerate(rep_grads):
            indexed.append((rep_idx[i], (g, self._replica_vars[i])))
          _, grads_and_vars = zip(*sorted(indexed))
          return grads_and_vars

        def apply_gradients(self, grads_and_vars, global_step=None,
                            name=None):
          grads_and_vars = self._aggregate(grads_and_vars)
          return super().apply_gradients(grads_and_vars, global_step,
                                         name=name)
      return Synced
    """

_SHARD = """\
          for i, g in enumerate(shard_grads):
            indexed.append((shard_idx[i], (g, self._shard_vars[i])))
"""


def test_a_wrapper_joining_both_groups_of_its_split_is_silent():
  assert scanned.found(_WRAPPER.format(shard=_SHARD)) == []


def test_a_wrapper_applying_one_group_of_its_split_is_found():
  assert scanned.found(_WRAPPER.format(shard="")) == [
      ("var-list-filter", 32)]


_WIDE = """\
    import tensorflow as tf

    class Model:
      def build(self, x, y):
        self.weights = self._init_weights()
        out = tf.matmul(x, self.weights["dense"]) + self.weights["bias"]
        self.loss = tf.losses.log_loss(y, tf.nn.sigmoid(out))
        self.var1 = [v for v in tf.trainable_variables()
                     if v.name != 'feature_bias:0']
        self.var2 = [tf.trainable_variables()[1]]
        if self.optimizer_type == "adam":
          if self.has_wide:
            opt1 = tf.train.AdamOptimizer(0.01)
            opt2 = tf.train.GradientDescentOptimizer(0.1)
{steps}
          else:
            self.train_op = tf.train.AdamOptimizer(0.01).minimize(self.loss)
        else:
          self.train_op = tf.train.AdagradOptimizer(0.01).minimize(self.loss)
    """

_TWO_OPTIMIZERS = """\
            var_list1 = self.var1
            var_list2 = self.var2
            grads = tf.gradients(self.loss, var_list1 + var_list2)
            grads1 = grads[:len(var_list1)]
            grads2 = grads[len(var_list1):]
            op1 = opt1.apply_gradients(zip(grads1, var_list1))
            op2 = opt2.apply_gradients(zip(grads2, var_list2))
            self.train_op = tf.group(op1, op2)
"""

# The look-alike: the bias left out, and never trained.
_ONE_OPTIMIZER = """\
            grads = tf.gradients(self.loss, self.var1)
            self.train_op = opt1.apply_gradients(zip(grads, self.var1))
"""


def test_a_variable_taken_back_by_position_is_found():
  # A position names the dropped variable only if the order the project
  # makes its variables is known; the scan does not read it, so the list
  # by position may train another variable twice (fr38e).
  assert scanned.found(_WIDE.format(steps=_TWO_OPTIMIZERS)) == [
      ("var-list-filter", 8)]


def test_a_variable_taken_from_another_collection_is_found():
  code = _WIDE.format(steps=_TWO_OPTIMIZERS).replace(
      "[tf.trainable_variables()[1]]", "[tf.global_variables()[1]]")
  assert scanned.found(code) == [("var-list-filter", 8)]


def test_a_left_out_variable_never_trained_is_found():
  assert scanned.found(_WIDE.format(steps=_ONE_OPTIMIZER)) == [
      ("var-list-filter", 8)]
