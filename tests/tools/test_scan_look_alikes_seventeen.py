"""`tfpartial scan` stays silent on code that trains every variable, or
writes no trained variable back, in the shapes part fourteen's negatives
and instance trees showed, beside the look-alikes that still freeze: a
helper's scope parameter that every call leaves at `None` (a collection
read without a scope lists every variable) and one some call sets; a
filter naming the whole model in a module that restores
`Saver(tf.global_variables())` (a run resumed whole, no part kept
pretrained) and one restoring a scope; a target network's soft update
(`t * (1 - tau) + s * tau` into a list first copied from its source)
and the same blend with no copy, a copy the other way, or a coefficient
indexed per element; a filtered list handed to a helper with its
complement (one learning rate per list) and the same with the rest
left out or another part beside. Synthetic sources in the shape of real code."""

import pytest
import scanned


_found = scanned.found


_SCOPE_LEFT_AT_NONE = """\
    class Net(object):
      def __init__(self, x, y):
        w = tf.get_variable('w', [8, 2])
        self.loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        self.updates = self.apply_grads(self.loss{scope})

      def apply_grads(self, loss, scope=None):
        optimizer = tf.train.AdadeltaOptimizer(1.0)
        vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
        grads_and_vars = optimizer.compute_gradients(loss, var_list=vars)
        return optimizer.apply_gradients(grads_and_vars)
    """


@pytest.mark.parametrize("source,expected", [
    # Every call leaves the scope out: every trainable variable trains.
    (_SCOPE_LEFT_AT_NONE.format(scope=""), []),
    (_SCOPE_LEFT_AT_NONE.format(scope=", None"), []),
    (_SCOPE_LEFT_AT_NONE.format(scope=", scope=None"), []),
    # A call names a scope: only the variables under it train.
    (_SCOPE_LEFT_AT_NONE.format(scope=", 'head'"), [("var-list-filter", 9)]),
    (_SCOPE_LEFT_AT_NONE.format(scope=", scope='head'"),
     [("var-list-filter", 9)]),
], ids=["left-out", "none", "none-by-keyword", "scoped", "scoped-by-keyword"])
def test_scope_left_at_none(source, expected):
  assert _found(source) == expected


_RESUMED_WHOLE = """\
    def get_trainable_variables(tag=""):
        return [v for v in tf.trainable_variables() if tag in v.name]

    def separator(mix):
        with tf.variable_scope("separator"):
            return tf.layers.dense(mix, 2)

    def train(batch, load_model):
        out = separator(batch["mix"])
        loss = tf.reduce_mean(tf.square(out - batch["y"]))
        chosen = get_trainable_variables("separator")
        step = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=chosen)
        sess = tf.Session()
        restorer = tf.train.Saver({saved})
        restorer.restore(sess, load_model)
        return step
    """


@pytest.mark.parametrize("source,expected", [
    # A run resumed whole: the filter names the whole model it trains.
    (_RESUMED_WHOLE.format(saved="tf.global_variables()"), []),
    (_RESUMED_WHOLE.format(saved="var_list=tf.trainable_variables()"), []),
    # A part restored by its scope: what the filter leaves out stays;
    # shown where the name is handed to the helper (line 11).
    (_RESUMED_WHOLE.format(
        saved="tf.trainable_variables(scope='embedding')"),
     [("var-list-filter", 11)]),
    (_RESUMED_WHOLE.format(saved="var_list=tf.get_collection("
                           "tf.GraphKeys.GLOBAL_VARIABLES, 'embedding')"),
     [("var-list-filter", 11)]),
], ids=["global", "trainable", "scoped", "collection"])
def test_saver_over_every_variable_restores_no_part(source, expected):
  assert _found(source) == expected


_SOFT_UPDATE = """\
    import tensorflow as tf

    class RL:
      def train_step(self, data, optimizer):
        with tf.GradientTape() as tape:
          loss = self(*data)
        gradients = tape.gradient(loss, self.param)
        optimizer.apply_gradients(zip(gradients, self.param))

      def train(self, data, optimizer):
        for batch in data:
          self.train_step(batch, optimizer)
          self.update_param()

    class DDPG(RL):
      def __init__(self, actor, target_actor, tau):
        self.actor = actor
        self.target_actor = target_actor
        {copy}
        self.param = [self.actor.param]
        self.tau = tau

      def __call__(self, s, q):
        return tf.reduce_mean((self.actor(s) - q) ** 2)

      def update_param(self):
        for target_param, param in zip(self.target_actor.param,
                                       self.actor.param):
          target_param.assign({blend})
    """
_COPIED = "nn.assign_param(self.target_actor.param, self.actor.param)"
_POLYAK = "target_param * (1.0 - self.tau) + param * self.tau"


@pytest.mark.parametrize("source,expected", [
    # A copy of the source made to follow it by one coefficient: a target
    # network's soft update.
    (_SOFT_UPDATE.format(copy=_COPIED, blend=_POLYAK), []),
    (_SOFT_UPDATE.format(copy=_COPIED, blend=(
        "self.tau * param + (1 - self.tau) * target_param")), []),
    # No copy made first: the written list may be the one trained.
    (_SOFT_UPDATE.format(copy="pass", blend=_POLYAK),
     [("write-back", 29)]),
    # The copy goes the other way: the original is written from it.
    (_SOFT_UPDATE.format(copy=(
        "nn.assign_param(self.actor.param, self.target_actor.param)"),
                         blend=_POLYAK), [("write-back", 29)]),
    # A coefficient indexed per element: a mask, not one blend.
    (_SOFT_UPDATE.format(copy=_COPIED, blend=(
        "target_param * (1.0 - self.tau[0]) + param * self.tau[0]")),
     [("write-back", 29)]),
], ids=["copied", "copied-reordered", "not-copied", "copied-back",
        "indexed"])
def test_soft_update_of_a_copy(source, expected):
  assert _found(source) == expected


_WITH_ITS_REST = """\
    import tensorflow as tf

    def adam_list_lr(loss, list_lrs, list_train_vars):
        train_vars = []
        for v in list_train_vars:
            train_vars.extend(v)
        grads = tf.gradients(loss, train_vars)
        offset = 0
        ops = []
        for i, v in enumerate(list_train_vars):
            g = grads[offset:offset + len(v)]
            opt = tf.train.AdamOptimizer(learning_rate=list_lrs[i])
            ops.append(opt.apply_gradients(list(zip(g, v))))
            offset += len(v)
        return tf.group(*ops)

    def train(net, pretrain_params):
        train_vars1 = [v for v in tf.trainable_variables()
                       if v.name in pretrain_params]
        train_vars2 = {rest}
        return adam_list_lr(loss=net.loss, list_lrs=[1e-6, 1e-4],
                            list_train_vars={lists})
    """


@pytest.mark.parametrize("source,expected", [
    # The pretrained part and the rest, each at its own rate: all train.
    (_WITH_ITS_REST.format(
        rest="list(set(tf.trainable_variables()) - set(train_vars1))",
        lists="[train_vars1, train_vars2]"), []),
    (_WITH_ITS_REST.format(
        rest="[v for v in tf.trainable_variables() if v not in train_vars1]",
        lists="[train_vars1, train_vars2]"), []),
    # The rest left out of the lists, or another part beside: a freeze.
    (_WITH_ITS_REST.format(
        rest="list(set(tf.trainable_variables()) - set(train_vars1))",
        lists="[train_vars1]"), [("var-list-filter", 18)]),
    (_WITH_ITS_REST.format(
        rest="[v for v in tf.trainable_variables() if 'fc' in v.name]",
        lists="[train_vars1, train_vars2]"), [("var-list-filter", 18)]),
], ids=["set-difference", "not-in", "rest-left-out", "another-part"])
def test_filter_passed_with_its_rest(source, expected):
  assert _found(source) == expected
