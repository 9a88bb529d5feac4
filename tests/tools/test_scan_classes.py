"""`tfpartial scan` on the classes of real code it was measured on: each
(source, expected) pair is synthetic, written in the shape of what the
public files do (docs/guides/scan.md, "How precise it is"): the forms of
hand-made freezing it must find, and the training code around them that
freezes nothing (GANs, actor-critics, TRPO, target networks, scheduled
sampling, straight-through estimators, soft updates, a library's tests).
"""

import pytest

import scanned


_found = scanned.in_project


POSITIVE = {
    # Variables gathered from the project's own collections (adapters and
    # a head): the body stays at its pretrained values.
    "var-list-filter: custom collections": ("""\
        def create_optimizer(loss, optimizer):
          tvars = []
          for collection in ["adapters", "layer_norm", "head"]:
            tvars += tf.get_collection(collection)
          grads = tf.gradients(loss, tvars)
          return optimizer.apply_gradients(zip(grads, tvars))
        """, [("var-list-filter", "t.py", 4)]),
    # A loop adds the modules of a fixed path to the list under an `if`
    # on a choice table (PathNet), the variables from helpers elsewhere.
    "var-list-filter: a loop that adds under a choice": ("""\
        def train(cross_entropy, weights, biases, out_w, out_b):
          fixed_list = np.ones((L, M), dtype=str)
          var_list_to_learn = [] + out_w + out_b
          for i in range(L):
            for j in range(M):
              if fixed_list[i, j] == '0':
                var_list_to_learn += weights[i, j] + biases[i, j]
          opt = tf.train.GradientDescentOptimizer(0.1)
          return opt.minimize(cross_entropy, var_list=var_list_to_learn)
        """, [("var-list-filter", "t.py", 7)]),
    # A first stage trains the heads chosen by their scope through a local
    # name; a second stage trains everything with the same loss.
    "var-list-filter: two stages of one loss": ("""\
        class YOLO:
          def build(self):
            self.first_stage = []
            for var in tf.trainable_variables():
              parts = str(var.op.name).split('/')
              if parts[0] in ['conv_sbbox', 'conv_mbbox', 'conv_lbbox']:
                self.first_stage.append(var)
            first = tf.train.AdamOptimizer(1e-4).minimize(
                self.loss, var_list=self.first_stage)
            second = tf.train.AdamOptimizer(1e-4).minimize(
                self.loss, var_list=tf.trainable_variables())
            return first, second
        """, [("var-list-filter", "t.py", 7)]),
    # Batch-norm scales left out of every group; the groups are trained at
    # three learning rates from one `tf.gradients`: one finding.
    "var-list-filter: layers at several learning rates": ("""\
        def main(loss):
          all_trainable = [v for v in tf.trainable_variables()
                           if 'beta' not in v.name and 'gamma' not in v.name]
          fc = [v for v in all_trainable if 'fc' in v.name]
          conv = [v for v in all_trainable if 'fc' not in v.name]
          fc_w = [v for v in fc if 'weights' in v.name]
          fc_b = [v for v in fc if 'biases' in v.name]
          grads = tf.gradients(loss, conv + fc_w + fc_b)
          grads_conv = grads[:len(conv)]
          grads_w = grads[len(conv):len(conv) + len(fc_w)]
          grads_b = grads[len(conv) + len(fc_w):]
          ops = [tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
                     zip(grads_conv, conv)),
                 tf.train.MomentumOptimizer(lr * 10, 0.9).apply_gradients(
                     zip(grads_w, fc_w)),
                 tf.train.MomentumOptimizer(lr * 20, 0.9).apply_gradients(
                     zip(grads_b, fc_b))]
          return tf.group(*ops)
        """, [("var-list-filter", "t.py", 2)]),  # The filter leaving BN out.
    # slim's `--trainable_scopes` helper imported from a sibling module, the
    # list handed to `model_deploy.optimize_clones`.
    "var-list-filter: an imported helper and optimize_clones": ({
        "train/train_utils.py": """\
            def _get_variables_to_train():
              if FLAGS.trainable_scopes is None:
                return tf.trainable_variables()
              scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
              variables_to_train = []
              for scope in scopes:
                variables_to_train.extend(
                    tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
              return variables_to_train
            """,
        "train/train.py": """\
            from train_utils import _get_variables_to_train
            def main(clones, optimizer):
              variables_to_train = _get_variables_to_train()
              total_loss, grads = model_deploy.optimize_clones(
                  clones, optimizer, var_list=variables_to_train)
              return optimizer.apply_gradients(grads)
            """}, [("var-list-filter", "train/train_utils.py", 8)]),
    # A regex from the configuration drops variables in a helper whose
    # flag chooses between keeping and dropping.
    "var-list-filter: a regex from the config in a helper": ("""\
        import re
        def filter_variables(variables, variable_regex, is_whitelist):
          if is_whitelist:
            return [v for v in variables if variable_regex is None or
                    re.match(variable_regex, v.name)]
          return [v for v in variables if variable_regex is None or
                  not re.match(variable_regex, v.name)]

        class Model:
          def __init__(self, params):
            self._frozen_var_prefix = params.frozen_variable_prefix
          def train(self, loss, optimizer):
            train_var_list = filter_variables(
                tf.trainable_variables(), self._frozen_var_prefix, False)
            grads_and_vars = optimizer.compute_gradients(loss, train_var_list)
            return optimizer.apply_gradients(grads_and_vars)
        """, [("var-list-filter", "t.py", 13)]),
    # tfmot-style: the pruning object's weights, masked and assigned back
    # through a compat `assign`, in a method a wrapper calls each step.
    "weight-remask: a pruning object's assign": ("""\
        class Pruning(object):
          def __init__(self, pruning_vars):
            self._pruning_vars = pruning_vars
          def _weight_assign_objs(self):
            assign_objs = []
            for weight, mask, _ in self._pruning_vars:
              masked_weight = tf.dtypes.cast(
                  tf.math.multiply(weight, mask), dtype=weight.dtype)
              assign_objs.append(tf_compat.assign(weight, masked_weight))
            return assign_objs
        """, [("weight-remask", "t.py", 9)]),
    # Non-trainable copies of every weight blended back after the
    # optimizer's own step: a shadow copy, not a re-mask.
    "shadow-variable: copies blended back after super()": ("""\
        class PartialTuning(tf.keras.optimizers.Optimizer):
          def __init__(self, model):
            self._weights = list(model.trainable_weights)
            originals = [tf.Variable(tf.cast(w, w.dtype), trainable=False)
                         for w in self._weights]
            masks = [tf.Variable(tf.cast(tf.equal(w, 0.), w.dtype),
                                 trainable=False) for w in self._weights]
            self._vars = list(zip(self._weights, originals, masks))
          def apply_gradients(self, grads_and_vars, name=None):
            result = super().apply_gradients(grads_and_vars, name)
            for weight, original, mask in self._vars:
              weight.assign(original * (1. - mask) + weight * mask)
            return result
        """, [("shadow-variable", "t.py", 12)]),
    # Pruning: every gradient goes on, masked or not, by an if/else on
    # the variable's name: a mask, and no var_list filter.
    "grads-mask: an if/else that keeps every variable": ("""\
        def calc_grads_pruned(grads_origin, maskable, masks):
          grads_pruned = []
          for grad in grads_origin:
            if grad[1].name not in maskable:
              grads_pruned.append(grad)
            else:
              grads_pruned.append((grad[0] * masks[grad[1].name], grad[1]))
          return grads_pruned

        def build(optimizer, loss, trainable_vars):
          grads_origin = optimizer.compute_gradients(loss, trainable_vars)
          grads_pruned = calc_grads_pruned(grads_origin, MASKABLE, MASKS)
          return optimizer.apply_gradients(grads_pruned)
        """, [("grads-mask", "t.py", 7)]),  # And no var_list filter.
    # Some rows put back after each epoch's training (outside its loop
    # over batches): a write-back, though not after every step.
    "write-back: rows put back after each epoch": ("""\
        def train(model, data, epochs):
          frozen = model.layers[0].get_weights()
          for epoch in range(epochs):
            model.fit(data, epochs=1)
            w = model.layers[0].get_weights()
            w[0][:10] = frozen[0][:10]
            model.layers[0].set_weights(w)
        """, [("write-back", "t.py", 7)]),
    # Transfer learning: the last layers' variables, by position.
    "var-list-filter: the last variables by a slice": ("""\
        def step(model, x, y, opt):
          with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
          last = model.trainable_variables[-4:]
          grads = tape.gradient(loss, last)
          opt.apply_gradients(zip(grads, last))
        """, [("var-list-filter", "t.py", 4)]),
    # Pretrained rows kept by a stop_gradient on their slice.
    "stop-gradient-mix: a variable's rows stopped in a concat": ("""\
        emb = tf.get_variable("emb", [10000, 128])
        table = tf.concat([tf.stop_gradient(emb[:n_pretrained]),
                           emb[n_pretrained:]], axis=0)
        out = tf.nn.embedding_lookup(table, ids)
        """, [("stop-gradient-mix", "t.py", 2)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_class_of_real_code_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


NEGATIVE = {
    # A stateful layer's state (a variable nothing trains) reset where a
    # sequence starts, with `tf.where` or a product.
    "rnn state reset by a mask": """\
        class StatefulCell(tf.keras.layers.Layer):
          def build(self, shape):
            self.state = self.add_weight("state", [32, 8], trainable=False)
            self.kernel = self.add_weight("kernel", [shape[-1], 8])
          def call(self, x, reset_mask):
            self.state.assign(tf.where(reset_mask[:, None],
                                       tf.zeros_like(self.state), self.state))
            self.state.assign(self.state * (1.0 - reset_mask[:, None]))
            return tf.matmul(x, self.kernel) + self.state
        """,
    # Magnitude pruning each epoch: the weights below a threshold, chosen
    # from their own values each time, are zeroed (no mask is kept).
    "pruning by magnitude each epoch": """\
        class MagnitudePrune(keras.callbacks.Callback):
          def on_epoch_end(self, epoch, logs=None):
            for layer in self.model.layers:
              weights = layer.get_weights()
              weights[0][np.abs(weights[0]) < self.threshold] = 0.0
              layer.set_weights(weights)
        """,
    # A GAN's two models trained each on its own layer's weights.
    "gan layers chosen by name, each with its optimizer": """\
        d_vars = gan.get_layer("discriminator").trainable_weights
        g_vars = gan.get_layer("generator").trainable_weights
        for x in ds:
          with tf.GradientTape(persistent=True) as tape:
            d_loss, g_loss = losses(x)
          d_opt.apply_gradients(zip(tape.gradient(d_loss, d_vars), d_vars))
          g_opt.apply_gradients(zip(tape.gradient(g_loss, g_vars), g_vars))
        """,
    # An accumulator zeroed where an episode starts (a metric's reset,
    # chosen by the data, not a mask).
    "accumulator reset by tf.where on data": """\
        class AverageReturn(tf.Module):
          def call(self, trajectory):
            self._acc.assign(tf.where(trajectory.is_first(),
                                      tf.zeros_like(self._acc), self._acc))
            self._acc.assign_add(trajectory.reward)
        """,
    # Initial weights loaded once before training (`Variable.load`), a
    # file read with `np.load`, a summary over (gradient, variable) pairs.
    "variable loads at initialization": """\
        weights = np.load("init.npy", allow_pickle=True)
        train_op = optimizer.apply_gradients(
            optimizer.compute_gradients(loss, model.trainable_weights))
        for name, v in optimizer.compute_gradients(loss):
          tf.summary.histogram(v.name, v)
        sess = tf.InteractiveSession()
        for i, w in enumerate(model.trainable_weights):
          w.load(weights[i], session=sess)
        for step in range(100):
          sess.run(train_op)
        """,
    # Small weights zeroed in a copy of a trained model to evaluate it:
    # nothing trains after.
    "weights zeroed to evaluate a pruned copy": """\
        model.fit(x, y, epochs=3)
        for layer in model.layers:
          weights = layer.get_weights()
          weights[0][np.abs(weights[0]) < 0.01] = 0
          layer.set_weights(weights)
        print(model.evaluate(x_test, y_test))
        """,
    # Scheduled sampling: a random draw picks between two activations, a
    # straight-through estimator beside it.
    "stop-gradient-mix: scheduled sampling beside straight-through": """\
        def bottleneck(x, bits_pred, p):
          w = tf.get_variable("w", [4, 4])
          b = tf.get_variable("b", [4])
          bits_clean = tf.matmul(x, w) + b
          bits_pred = bits_clean + tf.stop_gradient(bits_pred - bits_clean)
          which = tf.random_uniform(tf.shape(bits_clean))
          return tf.where(which < p, bits_pred, bits_clean)
        """,
    # A `tf.where` whose branches are activations computed from variables,
    # one of them stopped: no variable is rebuilt from its stopped self.
    "stop-gradient-mix: a where over activations": """\
        def layer(self, x, mask):
          w = tf.get_variable("w", [4, 4])
          b = tf.get_variable("b", [4])
          h = tf.matmul(x, w) + b
          return tf.where(mask, h, tf.stop_gradient(h * 2.0))
        """,
    # A2C: the helper's scope is the one the whole model is built under.
    "var-list-filter: the model's root scope through a helper": {
        "utils.py": """\
            def find_trainable_variables(key):
              return tf.trainable_variables(key)
            """,
        "a2c.py": """\
            from utils import find_trainable_variables
            class Model:
              def __init__(self, policy, loss):
                with tf.variable_scope('a2c_model', reuse=tf.AUTO_REUSE):
                  self.model = policy()
                params = find_trainable_variables("a2c_model")
                grads = tf.gradients(loss, params)
                self.train = tf.train.RMSPropOptimizer(7e-4).apply_gradients(
                    list(zip(grads, params)))
            """},
    # DDPG/HER: an actor and a critic filtered by one helper, each with its
    # own loss, and the target network blended from the main one.
    "var-list-filter: an actor and a critic": """\
        class DDPG:
          def _vars(self, scope):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope=self.scope + '/' + scope)
          def _build(self):
            q_grads = tf.gradients(self.q_loss, self._vars('main/Q'))
            pi_grads = tf.gradients(self.pi_loss, self._vars('main/pi'))
            self.q_adam = MpiAdam(self._vars('main/Q'))
            self.pi_adam = MpiAdam(self._vars('main/pi'))
            return q_grads, pi_grads
        """,
    # TRPO: the policy's and the value function's variables filtered by
    # name, each differentiated for its own loss through a project helper.
    "var-list-filter: a policy and its value function": {
        "tf_util.py": """\
            def flatgrad(loss, var_list, clip_norm=None):
              grads = tf.gradients(loss, var_list)
              return tf.concat([tf.reshape(g, [-1]) for g in grads], 0)
            """,
        "trpo.py": """\
            import tf_util as U
            def learn(pi, optimgain, vferr, dist):
              all_var_list = pi.get_trainable_variables()
              var_list = [v for v in all_var_list
                          if v.name.startswith("pi/pol")]
              vf_var_list = [v for v in all_var_list
                             if v.name.startswith("pi/vf")]
              klgrads = tf.gradients(dist, var_list)
              g = U.flatgrad(optimgain, var_list)
              vfg = U.flatgrad(vferr, vf_var_list)
              return klgrads, g, vfg
            """},
    # A library's train-op builder, and its test training a subset.
    "var-list-filter: a library exercised by its test": {
        "lib/training.py": """\
            def create_train_op(total_loss, optimizer, variables_to_train=None):
              if variables_to_train is None:
                variables_to_train = tf.trainable_variables()
              grads = optimizer.compute_gradients(total_loss,
                                                  variables_to_train)
              return optimizer.apply_gradients(grads)
            """,
        "lib/training_test.py": """\
            from lib import training
            def test_train_only_the_weights(total_loss, optimizer):
              weights = [v for v in tf.trainable_variables()
                         if 'weights' in v.name]
              return training.create_train_op(
                  total_loss, optimizer, variables_to_train=weights)
            """},
    # DQN: the online network's scope trained, the target's synced.
    "var-list-filter: a target network synced": """\
        def build_train(loss, optimizer):
          q_vars = tf.trainable_variables("q_func")
          target_vars = tf.trainable_variables("target_q_func")
          train = optimizer.minimize(loss, var_list=q_vars)
          update = [t.assign(q) for q, t in zip(sorted(q_vars), sorted(
              target_vars))]
          return train, tf.group(*update)
        """,
    # Biases' gradients doubled under a configuration flag: scaling.
    "var-list-filter: gradients scaled under a config flag": """\
        def train(optimizer, loss):
          gvs = optimizer.compute_gradients(loss)
          if cfg.TRAIN.DOUBLE_BIAS:
            final_gvs = []
            for grad, var in gvs:
              scale = 1.
              if '/biases:' in var.name:
                scale *= 2.
              final_gvs.append((grad * scale, var))
            return optimizer.apply_gradients(final_gvs)
          return optimizer.apply_gradients(gvs)
        """,
    # A soft update whose coefficient is named after trainability.
    "weight-remask: a soft update": """\
        def soft_update(source, target, tau, tau_non_trainable):
          for v_s, v_t in zip(source, target):
            current_tau = tau if v_t.trainable else tau_non_trainable
            v_t.assign((1 - current_tau) * v_t + current_tau * v_s)

        def sync(online, target_network):
          soft_update(online.variables, target_network.variables, 0.005, 1.0)
        """,
    # Lottery ticket: the next round starts from the initial weights,
    # masked; the layer's current weights are only read for their shape.
    "weight-remask: a rewind that reads the layer first": """\
        class Model:
          def __init__(self):
            self._initial = self._trainable_weights()
          def _trainable_weights(self):
            weights = {}
            for name in self._names:
              layer = self._layer(name)
              weights[name] = layer.get_weights()[0]
            return weights
          def set_pruning(self, masks):
            for name in self._names:
              layer = self._layer(name)
              weights = layer.get_weights()
              weights[0] = self._initial[name] * masks[name]
              layer.set_weights(weights)
        """,
    # A notebook cell resets the model to its first weights to train it
    # again another way: a reset, run once.
    "write-back: a reset between two trainings": """\
        initial_weights = model.get_weights()
        model.fit(x, y, epochs=1)
        model.set_weights(initial_weights)
        model.compile(optimizer="adam", loss="mse")
        """,
    # The gradients come from a helper that drops some by name; the
    # variables applied are the model's own.
    "var-list-filter: gradients filtered, variables whole": """\
        def get_gradients(tape, loss, trainable_vars):
          grads = tape.gradient(loss, trainable_vars)
          return [g for g, v in zip(grads, trainable_vars)
                  if 'bias' not in v.name]

        def train(model, tape, loss, optimizer):
          trainable_vars = model.trainable_variables
          gradients = get_gradients(tape, loss, trainable_vars)
          optimizer.apply_gradients(zip(gradients, trainable_vars))
        """,
    # A GAN whose two steps each call their loss `loss`, in two functions.
    "var-list-filter: two steps, each with its own local loss": """\
        def train_d(real, fake):
          loss = d_loss_fn(real, fake)
          d_vars = [v for v in tf.trainable_variables() if 'disc' in v.name]
          return d_opt.minimize(loss, var_list=d_vars)

        def train_g(fake):
          loss = g_loss_fn(fake)
          g_vars = [v for v in tf.trainable_variables() if 'gen' in v.name]
          return g_opt.minimize(loss, var_list=g_vars)
        """,
    # Early stopping by hand: the best weights put back once, after the
    # training loop.
    "write-back: the best weights restored after training": """\
        def train(model, data, epochs):
          best, best_loss = model.get_weights(), float('inf')
          for epoch in range(epochs):
            model.fit(data, epochs=1)
            loss = model.evaluate(data)
            if loss < best_loss:
              best, best_loss = model.get_weights(), loss
          model.set_weights(best)
          return model
        """,
    # A GAN's two groups cut from one list by position.
    "var-list-filter: a GAN split by slices": """\
        tvars = tf.trainable_variables()
        g_vars = tvars[:n_gen]
        d_vars = tvars[n_gen:]
        g_op = opt.minimize(g_loss, var_list=g_vars)
        d_op = opt.minimize(d_loss, var_list=d_vars)
        """,
    # Two variables joined, one stopped; activations joined: no variable
    # rebuilt from its stopped self.
    "stop-gradient-mix: a concat of other things": """\
        a = tf.get_variable("a", [10, 4])
        b = tf.get_variable("b", [10, 4])
        table = tf.concat([tf.stop_gradient(a), b], axis=0)
        h = tf.matmul(x, w)
        out = tf.concat([tf.stop_gradient(h[:, :4]), h[:, 4:]], axis=1)
        """,
    "var-list-filter: one step per network, each choosing its group": """\
        nets = [build_net("net_%d" % i, images) for i in range(n)]
        all_vars = tf.trainable_variables()
        train_ops = []
        for i in range(n):
          mine = [v for v in all_vars if "net_%d" % i in v.name]
          train_ops.append(opts[i].minimize(losses[i], var_list=mine))
        """,
    "var-list-filter: a utility keeps the variables its caller gives": """\
        def per_layer_grads(tape, model, loss, chosen=None):
          layer_vars = []
          for layer in model.layers:
            if chosen is None or any(w.ref() in chosen
                                     for w in layer.trainable_weights):
              layer_vars.append(layer.trainable_weights)
          return tape.gradient(loss, layer_vars)
        """,
    "weight-remask: a masker of inputs named for masks, not a constraint": """\
        class CompletionMasker(BaseMasker):
          def __call__(self, rolls, outer_masks=1.0):
            masks = (rolls == 0).all(axis=2, keepdims=True)
            inner = masks + 0 * rolls  # Broadcast to the rolls' shape.
            return inner * outer_masks
        """,
    "write-back: a layer test helper sets weights after a step": {
        "utils/tf_test_utils.py": """\
            def layer_test(layer_cls, x, y, weights):
              model = tf.keras.Sequential([layer_cls()])
              model.compile("rmsprop", "mse")
              model.train_on_batch(x, y)
              model.layers[0].set_weights(weights)
              return model.predict(x)
            """,
    },
    # A padding row zeroed once, after initialisation, before the epochs:
    # nothing re-zeroes it, it trains like the others.
    "a padding row zeroed once before training": """\
        class Train:
          def __init__(self, config):
            self.emb = tf.get_variable("emb", [config.vocab, config.dim])
            self.clear_padding = tf.scatter_update(
                self.emb, [0], tf.constant(0.0, shape=[1, config.dim]))
            self.train_op = tf.train.AdamOptimizer().minimize(build(self.emb))

        def main(config, batches):
          train = Train(config)
          with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train.clear_padding)
            for epoch in range(10):
              for b in batches:
                sess.run(train.train_op, feed_dict=b)
        """,
    # An optimizer's accumulators (not model weights) set back to zeros
    # once they are applied.
    # HanLP's parser: the accumulators kept in a dict, zeroed by the
    # method that applies them.
    "gradient accumulators zeroed after the step": """\
        class Trainer:
          def build(self):
            self.params['accum_grads'] = [
                tf.Variable(tf.zeros_like(tv.read_value()), trainable=False)
                for tv in self.model.trainable_variables]

          def train_batch(self, x, y):
            with tf.GradientTape() as tape:
              loss = self.get_loss(self.model(x, training=True), y)
            grads = tape.gradient(loss, self.model.trainable_variables)
            accum_grads = self.params['accum_grads']
            for i, grad in enumerate(grads):
              if grad is not None:
                accum_grads[i].assign_add(grad)
            self.params['trained_samples'] += tf.shape(x)[0]
            if self.params['trained_samples'] >= self.config.samples_per_batch:
              self._apply_grads(accum_grads)
            return loss

          def _apply_grads(self, accum_grads):
            self.model.optimizer.apply_gradients(
                zip(accum_grads, self.model.trainable_variables))
            for tv in accum_grads:
              tv.assign(tf.zeros_like(tv))
            self.params['trained_samples'] = 0
        """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_class_of_training_code_is_not_reported(name):
  assert _found(NEGATIVE[name]) == []


# The forms the issue lists, each as a team writes it (helpers in sibling
# modules, optimizer wrappers, ops kept on `self` and fetched elsewhere).
FORMS = {
    "wrapper optimizer masks then calls wrapped": ({
        "opt.py": """\
            class MaskedOptimizer(tf.compat.v1.train.Optimizer):
              def __init__(self, opt, masks):
                self._opt = opt
                self._masks = masks
              def compute_gradients(self, loss, var_list=None, **kwargs):
                gvs = self._opt.compute_gradients(loss, var_list=var_list,
                                                  **kwargs)
                return [(g * self._masks[v.name], v) for g, v in gvs]
              def apply_gradients(self, grads_and_vars, global_step=None,
                                  name=None):
                return self._opt.apply_gradients(grads_and_vars, global_step,
                                                 name)
            """,
    }, [('grads-mask', 'opt.py', 8)]),
    "pruning optimizer remask after super": ({
        "p.py": """\
            class PruningOptimizer(tf.keras.optimizers.Adam):
              def __init__(self, masks, **kw):
                super().__init__(**kw)
                self._masks = masks
              def apply_gradients(self, grads_and_vars, **kwargs):
                result = super().apply_gradients(grads_and_vars, **kwargs)
                for var, mask in zip(self._vars, self._masks):
                  var.assign(var * mask)
                return result
            """,
    }, [('weight-remask', 'p.py', 8)]),
    "indexed slices where with adamw": ({
        "t.py": """\
            import tensorflow as tf
            emb = tf.Variable(tf.random.normal([100, 8]))
            opt = tf.keras.optimizers.Adam(1e-3, weight_decay=0.01)
            frozen_ids = tf.constant([0, 1, 2])
            def step(batch):
              with tf.GradientTape() as tape:
                loss = model(batch)
              grads = tape.gradient(loss, [emb])
              cond = tf.reduce_any(tf.equal(grads[0].indices[:, None],
                                            frozen_ids), axis=1)
              grads[0] = tf.IndexedSlices(
                  tf.where(cond[:, None], tf.zeros_like(grads[0].values),
                           grads[0].values),
                  grads[0].indices, grads[0].dense_shape)
              opt.apply_gradients(zip(grads, [emb]))
            """,
    }, [('grads-mask', 't.py', 12)]),
    "sg mix helper imported from sibling": ({
        "utils/sg.py": """\
            import tensorflow as tf
            def partial_stop(x, keep):
              return keep * x + (1 - keep) * tf.stop_gradient(x)
""",
        "model.py": """\
            from utils.sg import partial_stop
            import tensorflow as tf
            class Net(tf.keras.Model):
              def build(self, shape):
                self.emb = self.add_weight("emb", shape=[10, 4])
                self.keep = tf.constant([[0.], [1.]] * 5)
              def call(self, ids):
                table = partial_stop(self.emb, self.keep)
                return tf.gather(table, ids)
            """,
    }, [('stop-gradient-mix', 'model.py', 8)]),
    "sg mix where on variable": ({
        "m.py": """\
            import tensorflow as tf
            w = tf.get_variable("w", [4, 4])
            mask = tf.constant(np.eye(4, dtype=bool))
            w_used = tf.where(mask, w, tf.stop_gradient(w))
            y = tf.matmul(x, w_used)
            train = tf.train.AdamOptimizer(0.01).minimize(loss)
            """,
    }, [('stop-gradient-mix', 'm.py', 4)]),
    "sg mix on a tensor from one variable": ({
        "m.py": """\
            import tensorflow as tf
            embeddings = tf.get_variable("embeddings", [1000, 64])
            emb = tf.nn.embedding_lookup(embeddings, ids)
            mask = tf.cast(tf.less(ids, 10), tf.float32)[:, None]
            emb = mask * tf.stop_gradient(emb) + (1 - mask) * emb
            """,
    }, [('stop-gradient-mix', 'm.py', 5)]),
    "write-back kept on self run in another method": ({
        "m.py": """\
            import tensorflow as tf
            class Trainer:
              def build(self):
                self.emb = tf.get_variable("emb", [100, 8])
                self.pretrained = tf.constant(np.load("glove.npy"))
                self.train_op = tf.train.AdamOptimizer(1e-3).minimize(self.loss)
                self.restore_op = tf.scatter_update(
                    self.emb, self.frozen_ids,
                    tf.gather(self.pretrained, self.frozen_ids))
              def fit(self, sess, batches):
                for b in batches:
                  sess.run(self.train_op, feed_dict=b)
                  sess.run(self.restore_op)
            """,
    }, [('write-back', 'm.py', 7)]),
    "weight-remask a padding row zeroed, fetched beside from another file": ({
        "model.py": """\
            import tensorflow as tf
            class Model:
              def __init__(self):
                self.W = tf.get_variable("W", [100, 8])
                self.saved = tf.placeholder(tf.float32, [8])
                self.train_op = tf.train.AdamOptimizer().minimize(self.loss)
                self.clear_pad = tf.scatter_update(
                    self.W, [0], tf.constant(0.0, shape=[1, 8]))
""",
        "train.py": """\
            from model import Model
            m = Model()
            with tf.Session() as sess:
              for step in range(1000):
                sess.run([m.train_op, m.clear_pad])
            """,
    }, [('weight-remask', 'model.py', 7)]),
    "shadow variable control deps tf1 slice": ({
        "m.py": """\
            import tensorflow as tf
            x = tf.get_variable("x", [10, 4])
            backup = tf.Variable(x.initialized_value()[:2], trainable=False)
            opt = tf.train.MomentumOptimizer(0.1, 0.9)
            train = opt.minimize(loss)
            with tf.control_dependencies([train]):
              train_op = tf.assign(x[:2], backup)
            """,
    }, [('shadow-variable', 'm.py', 7)]),
    "write-back eager numpy copy": ({
        "m.py": """\
            import tensorflow as tf
            model = build()
            def train_step(x, y):
              with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
              grads = tape.gradient(loss, model.trainable_variables)
              optimizer.apply_gradients(zip(grads, model.trainable_variables))
            frozen = model.layers[0].get_weights()
            for epoch in range(10):
              for x, y in data:
                train_step(x, y)
                w = model.layers[0].get_weights()
                w[0][:, :5] = frozen[0][:, :5]
                model.layers[0].set_weights(w)
            """,
    }, [('write-back', 'm.py', 14)]),
    "var-list keras train_step freeze method": ({
        "t.py": """\
            import re
            class Trainer(tf.keras.Model):
              def _freeze_vars(self):
                if self.config.var_freeze_expr:
                  return [v for v in self.trainable_variables
                          if not re.match(self.config.var_freeze_expr, v.name)]
                return self.trainable_variables
              def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                  loss = self.compute_loss(x, y)
                trainable_vars = self._freeze_vars()
                grads = tape.gradient(loss, trainable_vars)
                self.optimizer.apply_gradients(zip(grads, trainable_vars))
            """,
        # At the method's filter, where it chooses (EfficientDet's
        # `_freeze_vars`, reviewed there in part 6c), not at its call.
    }, [('var-list-filter', 't.py', 5)]),
    "var-list not in and not in split across optimizers": ({
        "t.py": """\
            def build(loss):
              tvars = tf.trainable_variables()
              body = [v for v in tvars
                      if 'head' not in v.name and 'emb' not in v.name]
              head = [v for v in tvars if 'head' in v.name]
              op1 = tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=body)
              op2 = tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
              return tf.group(op1, op2)
            """,
    }, [('var-list-filter', 't.py', 3)]),
    "var-list keras 2 optimizer minimize with tape": ({
        "t.py": """\
            def train(model, x, y, opt, frozen_prefix):
              vars_ = [v for v in model.trainable_variables
                       if not v.name.startswith(frozen_prefix)]
              with tf.GradientTape() as tape:
                loss = model.loss(x, y)
              grads = tape.gradient(loss, vars_)
              opt.apply_gradients(zip(grads, vars_))
            """,
    }, [('var-list-filter', 't.py', 2)]),
    "grads-mask keras train_step": ({
        "t.py": """\
            class M(tf.keras.Model):
              def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                  loss = self.compiled_loss(y, self(x))
                grads = tape.gradient(loss, self.trainable_variables)
                grads = [g * m for g, m in zip(grads, self.grad_masks)]
                self.optimizer.apply_gradients(
                    zip(grads, self.trainable_variables))
            """,
    }, [('grads-mask', 't.py', 7)]),
    "grads-mask numpy mask in a dict": ({
        "t.py": """\
            weights = model.trainable_variables
            masks = {v.name: np.ones(v.shape) for v in weights}
            masks['dense/kernel:0'][:5] = 0
            for x, y in ds:
              with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
              grads = tape.gradient(loss, model.trainable_variables)
              grads = [g * masks[v.name] for g, v in zip(grads, weights)]
              optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
    }, [('grads-mask', 't.py', 8)]),
    "remask keras callback on_batch_end": ({
        "t.py": """\
            class KeepPruned(tf.keras.callbacks.Callback):
              def __init__(self, masks):
                super().__init__()
                self.masks = masks
              def on_train_batch_end(self, batch, logs=None):
                for layer in self.model.layers:
                  if layer.name in self.masks:
                    w, b = layer.get_weights()
                    layer.set_weights([w * self.masks[layer.name], b])
            """,
    }, [('weight-remask', 't.py', 9)]),
    "remask tf1 assign op in session loop": ({
        "t.py": """\
            w = tf.get_variable("w", [784, 300])
            mask = tf.placeholder(tf.float32, [784, 300])
            apply_mask = tf.assign(w, w * mask)
            train = opt.minimize(loss)
            for i in range(1000):
              sess.run(train, feed)
              sess.run(apply_mask, {mask: m})
            """,
    }, [('weight-remask', 't.py', 3)]),
    "keras callback writes back saved rows": ({
        "t.py": """\
            class KeepRows(tf.keras.callbacks.Callback):
              def __init__(self, layer, rows):
                super().__init__()
                self.layer, self.rows = layer, rows
                self.saved = layer.get_weights()[0][rows].copy()
              def on_train_batch_end(self, batch, logs=None):
                w = self.layer.get_weights()
                w[0][self.rows] = self.saved
                self.layer.set_weights(w)
            """,
    }, [('write-back', 't.py', 9)]),
    "remask tf1 pruning mask mult each step": ({
        "t.py": """\
            tvars = tf.trainable_variables()
            masks = {v.name: tf.Variable(np.ones(v.shape), trainable=False)
                     for v in tvars}
            prune_ops = [v.assign(v * masks[v.name]) for v in tvars
                         if 'kernel' in v.name]
            train = opt.minimize(loss)
            with tf.control_dependencies([train]):
              train_and_prune = tf.group(*prune_ops)
            """,
    }, [('weight-remask', 't.py', 4)]),
    "sg mix keras layer call": ({
        "t.py": """\
            class PartialEmbedding(tf.keras.layers.Layer):
              def build(self, input_shape):
                self.table = self.add_weight("table", shape=[self.n, self.d])
                self.trainable_mask = tf.constant(self.mask_np, tf.float32)
              def call(self, ids):
                keep = self.trainable_mask
                table = (keep * self.table +
                         (1.0 - keep) * tf.stop_gradient(self.table))
                return tf.nn.embedding_lookup(table, ids)
            """,
    }, [('stop-gradient-mix', 't.py', 7)]),
    "var-list estimator fine tune scopes flag": ({
        "t.py": """\
            def model_fn(features, labels, mode, params):
              loss = build(features, labels)
              if params['finetune_scopes']:
                train_vars = []
                for s in params['finetune_scopes'].split(','):
                  train_vars += tf.get_collection(
                      tf.GraphKeys.TRAINABLE_VARIABLES, s)
              else:
                train_vars = tf.trainable_variables()
              train_op = tf.train.AdamOptimizer(1e-4).minimize(
                  loss, var_list=train_vars,
                  global_step=tf.train.get_global_step())
              return tf.estimator.EstimatorSpec(mode, loss=loss,
                                                train_op=train_op)
            """,
    }, [('var-list-filter', 't.py', 6)]),
    "var-list keras layer.trainable false is not var_list": ({
        "t.py": """\
            for layer in model.layers[:10]:
              layer.trainable = False
            model.compile(optimizer='adam', loss='mse')
            model.fit(x, y)
            """,
    }, []),
    "eager assign with where restore": ({
        "t.py": """\
            w = tf.Variable(init)
            w0 = tf.identity(w)
            for x, y in ds:
              with tf.GradientTape() as tape:
                loss = f(x, y, w)
              opt.apply_gradients([(tape.gradient(loss, w), w)])
              w.assign(tf.where(frozen_mask, w0, w))
            """,
    }, [('write-back', 't.py', 7)]),
    "remask in an optimizer subclass over nested grad pairs": ({
        "opt.py": """\
            class PrunedSGD(tf.keras.optimizers.SGD):
              def __init__(self, masks, **kw):
                super().__init__(**kw)
                self.masks = masks
              def apply_gradients(self, grads_and_vars, **kw):
                grads_and_vars = list(grads_and_vars)
                result = super().apply_gradients(grads_and_vars, **kw)
                for (_, var), mask in zip(grads_and_vars, self.masks):
                  var.assign(var * mask)
                return result
            """,
    }, [('weight-remask', 'opt.py', 9)]),
    "remask callback zeroes elements of its weights": ({
        "cb.py": """\
            class ZeroPruned(keras.callbacks.Callback):
              def __init__(self, masks, layers):
                super().__init__()
                self.masks, self.layers = masks, layers
              def _zero(self):
                for i, index in enumerate(self.layers):
                  weights = self.model.layers[index].get_weights()
                  weights[0][self.masks[i]] = 0.0
                  self.model.layers[index].set_weights(weights)
              def on_epoch_end(self, epoch, logs=None):
                self._zero()
            """,
    }, [('weight-remask', 'cb.py', 9)]),
    "write-back numpy slice loaded after each step": ({
        "t.py": """\
            emb = tf.get_variable("emb", [10, 4])
            train_op = tf.train.AdamOptimizer().minimize(loss(emb))
            with tf.Session() as sess:
              pretrained = sess.run(emb)
              for step in range(100):
                sess.run(train_op)
                current = sess.run(emb)
                current[:5] = pretrained[:5]
                emb.load(current, sess)
            """,
    }, [('write-back', 't.py', 9)]),
    "remask constraint a function makes": ({
        "m.py": """\
            def masked(mask):
              return lambda w: w * mask
            def build(masks):
              return tf.keras.Sequential([
                  tf.keras.layers.Dense(10, kernel_constraint=masked(masks[0]))])
            """,
    }, [('weight-remask', 'm.py', 5)]),
    "remask tf1 ops in a list run after the step": ({
        "t.py": """\
            weights = [v for v in tf.trainable_variables() if "kernel" in v.name]
            masks = [tf.constant(m) for m in mask_values]
            train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)
            remask_ops = [tf.assign(w, w * m) for w, m in zip(weights, masks)]
            with tf.Session() as sess:
              for i in range(1000):
                sess.run(train_op, feed_dict=batch())
                sess.run(remask_ops)
            """,
    }, [('weight-remask', 't.py', 4)]),
    "remask where with zeros after the step": ({
        "t.py": """\
            keep = [tf.abs(w) > 0.01 for w in model.trainable_variables]
            for x, y in ds:
              with tf.GradientTape() as tape:
                loss = lossf(y, model(x))
              grads = tape.gradient(loss, model.trainable_variables)
              opt.apply_gradients(zip(grads, model.trainable_variables))
              for w, k in zip(model.trainable_variables, keep):
                w.assign(tf.where(k, w, tf.zeros_like(w)))
            """,
    }, [('weight-remask', 't.py', 8)]),
    "write-back where op a helper returns, run after the step": ({
        "t.py": """\
            def build(var, frozen_mask, checkpoint_value):
              saved = tf.constant(checkpoint_value)
              return tf.assign(var, tf.where(frozen_mask, saved, var))
            def main():
              w = tf.get_variable("w", [4, 4])
              train_op = tf.train.AdamOptimizer().minimize(tf.reduce_sum(w))
              fix = build(w, np.eye(4, dtype=bool), np.zeros([4, 4]))
              with tf.Session() as sess:
                for _ in range(10):
                  sess.run(train_op)
                  sess.run(fix)
            """,
    }, [('write-back', 't.py', 3)]),
    "sg mix stopped plus a masked difference": ({
        "t.py": """\
            w = tf.get_variable("w", [8, 8])
            mask = tf.constant(mask_np)
            w_eff = tf.stop_gradient(w) + mask * (w - tf.stop_gradient(w))
            train = tf.train.AdamOptimizer().minimize(loss(w_eff))
            """,
    }, [('stop-gradient-mix', 't.py', 3)]),
    "var-list slim filter_variables": ({
        "t.py": """\
            def train_op(loss, exclude):
              var_list = tf.contrib.framework.filter_variables(
                  tf.trainable_variables(), exclude_patterns=exclude)
              return tf.train.AdamOptimizer().minimize(loss, var_list=var_list)
            """,
    }, [('var-list-filter', 't.py', 2)]),
    "var-list not in a scope's variables": ({
        "t.py": """\
            encoder = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "encoder")
            train_vars = [v for v in tf.trainable_variables() if v not in set(encoder)]
            op = tf.train.AdamOptimizer().minimize(loss, var_list=train_vars)
            """,
    }, [('var-list-filter', 't.py', 2)]),
    "var-list callable": ({
        "t.py": """\
            for x, y in ds:
              opt.minimize(lambda: lossf(y, model(x)), var_list=lambda: [
                  v for v in model.trainable_variables if "head" in v.name])
            """,
    }, [('var-list-filter', 't.py', 2)]),
    "grads-mask zeros scattered into a gradient": ({
        "t.py": """\
            def step(ids):
              with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.gather(emb, ids))
              g = tf.convert_to_tensor(tape.gradient(loss, emb))
              g = tf.tensor_scatter_nd_update(g, frozen, tf.zeros([2, 4]))
              opt.apply_gradients([(g, emb)])
            """,
    }, [('grads-mask', 't.py', 5)]),
    "var-list a scope's variables minus another's": ({
        "t.py": """\
            all_vars = tf.compat.v1.get_collection(
                tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "net")
            frozen = tf.compat.v1.get_collection(
                tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, "net/backbone")
            var_list = list(set(all_vars) - set(frozen))
            op = tf.compat.v1.train.AdamOptimizer().minimize(loss, var_list=var_list)
            """,
    }, [('var-list-filter', 't.py', 1)]),
    "var-list one layer's weights by name": ({
        "t.py": """\
            head = model.get_layer("head").trainable_weights
            for x, y in ds:
              with tf.GradientTape() as tape:
                loss = lossf(y, model(x))
              opt.apply_gradients(zip(tape.gradient(loss, head), head))
            """,
    }, [('var-list-filter', 't.py', 1)]),
    "grads-mask clipped then times a mask looked up by name": ({
        "t.py": """\
            opt = tf.train.MomentumOptimizer(0.01, 0.9)
            gvs = opt.compute_gradients(loss)
            capped = [(tf.clip_by_value(g, -1., 1.) * mask_map.get(v.name, 1.0), v)
                      for g, v in gvs]
            train_op = opt.apply_gradients(capped, global_step=gs)
            """,
    }, [('grads-mask', 't.py', 3)]),
    "var-list optimize_clones of the project then apply_gradients": ({
        "deploy.py": """\
            def _clone_gradients(optimizer, clone, **kwargs):
              clone_loss = tf.add_n(clone.losses)
              return clone_loss, optimizer.compute_gradients(clone_loss, **kwargs)

            def optimize_clones(clones, optimizer, **kwargs):
              losses, grads = [], []
              for clone in clones:
                clone_loss, clone_grad = _clone_gradients(optimizer, clone, **kwargs)
                losses.append(clone_loss)
                grads.append(clone_grad)
              return tf.add_n(losses), grads
            """,
        "train.py": """\
            import deploy
            def main():
              train_vars = [v for v in tf.trainable_variables()
                            if v.name.startswith(FLAGS.trainable_scope)]
              loss, grads = deploy.optimize_clones(clones, opt, var_list=train_vars)
              return opt.apply_gradients(grads)
            """,
    }, [('var-list-filter', 'train.py', 3)]),
    "var-list filter beside a gradient with respect to the inputs": ({
        "t.py": """\
            def train(batch, labels):
              images = tf.image.per_image_standardization(batch)
              xent = lossf(labels, net(images))
              adv = images + 0.01 * tf.sign(tf.gradients(xent, images)[0])
              loss = lossf(labels, net(adv))
              head = [v for v in tf.trainable_variables() if "logits" in v.name]
              return opt.minimize(loss, var_list=head)
            """,
    }, [('var-list-filter', 't.py', 6)]),
    "var-list filter passed to a project wrapper from a file naming no step": ({
        "optim.py": """\
            def optimize_loss(loss, opt, var_list=None, clip=None):
              grads_and_vars = opt.compute_gradients(loss, var_list=var_list)
              if clip is not None:
                grads_and_vars = [(tf.clip_by_norm(g, clip), v)
                                  for g, v in grads_and_vars]
              return opt.apply_gradients(grads_and_vars)
            """,
        "model.py": """\
            from optim import optimize_loss
            class Model:
              def build(self, loss, opt):
                pattern = re.compile(self.params["freeze_regex"])
                var_list = [v for v in tf.trainable_variables()
                            if not pattern.match(v.name)]
                self.train_op = optimize_loss(loss, opt, var_list=var_list)
            """,
    }, [('var-list-filter', 'model.py', 5)]),
    "var-list filter found where a wrapper is called, not inside it": ({
        "optim.py": """\
            def optimize_loss(loss, opt, var_list=None, clip=None):
              grads_and_vars = opt.compute_gradients(loss, var_list=var_list)
              if clip is not None:
                grads_and_vars = [(tf.clip_by_norm(g, clip), v)
                                  for g, v in grads_and_vars]
              return opt.apply_gradients(grads_and_vars)
            """,
        "model.py": """\
            from optim import optimize_loss
            def build(loss, opt):
              var_list = [v for v in tf.trainable_variables() if "head" in v.name]
              norm = tf.global_norm(tf.gradients(loss, var_list))
              return optimize_loss(loss, opt, var_list=var_list), norm
            """,
    }, [('var-list-filter', 'model.py', 3)]),
    "var-list frozen variables given by the caller left out": ({
        "t.py": """\
            def train_op(loss, opt, frozen):
              chosen = [v for v in tf.trainable_variables() if v not in frozen]
              return opt.minimize(loss, var_list=chosen)
            """,
    }, [('var-list-filter', 't.py', 2)]),
    "grads-mask elements zeroed by a condition in a loop": ({
        "t.py": """\
            def step(model, opt, x, y):
              with tf.GradientTape() as tape:
                loss = lossf(y, model(x))
              grads = tape.gradient(loss, model.trainable_variables)
              for i, w in enumerate(model.trainable_variables):
                g = grads[i]
                g[w == 0] = 0
                grads[i] = g
              opt.apply_gradients(zip(grads, model.trainable_variables))
            """,
    }, [('grads-mask', 't.py', 7)]),
    "grads-mask numpy elements zeroed in a train_step helper": ({
        "t.py": """\
            class Pruned(tf.keras.Model):
              def train_step(self, data):
                x, y = data
                with tf.GradientTape() as tape:
                  loss = self.compiled_loss(y, self(x, training=True))
                grads = tape.gradient(loss, self.trainable_variables)
                grads = self.__keep_pruned(grads)
                self.optimizer.apply_gradients(zip(grads, self.trainable_variables))

              def __keep_pruned(self, grads):
                for i, w in enumerate(self.trainable_variables):
                  g = grads[i].numpy()
                  g[w.numpy() == 0] = 0
                  grads[i] = g
                return grads
            """,
    }, [('grads-mask', 't.py', 13)]),
    # The train op fetched from an object (`model.train_op`) is what this
    # file assigns under that name, before what many others assign.
    "weight-remask a padding row zeroed after a train op fetched from an object": ({
        **{f"other{i}.py": """\
            import tensorflow as tf
            class Other:
              def build(self):
                self.train_op = tf.group(self.ops)
                self.fix = tf.assign(self.w, self.w0)
            """ for i in range(9)},
        "z.py": """\
            import tensorflow as tf
            class Train:
              def __init__(self, config):
                self.emb = tf.get_variable("emb", [100, 8])
                self.clear_padding = tf.scatter_update(
                    self.emb, [0], tf.zeros([1, 8]))
                optimizer = tf.train.AdamOptimizer(1e-3)
                self.train_op = optimizer.minimize(self.cost)

            def run_epoch(sess, model, batches):
              for b in batches:
                sess.run([model.train_op, model.cost], feed_dict=b)
                sess.run(model.clear_padding)
            """,
    }, [('weight-remask', 'z.py', 5)]),
    "weight-remask a padding row reset built in one file, run after the step in another": ({
        "prep.py": """\
            import tensorflow as tf
            class Prep:
              def embedding(self, n, d):
                self.emb = tf.get_variable("emb", [n, d])
                self.clear_padding = tf.scatter_update(self.emb, [0], tf.zeros([1, d]))
                return self.emb
            """,
        "model.py": """\
            import tensorflow as tf
            from prep import Prep
            class Model:
              def train(self, batches):
                self.prep = Prep()
                loss = build(self.prep.embedding(100, 8))
                op = tf.train.AdamOptimizer(1e-3).minimize(loss)
                with tf.Session() as sess:
                  for b in batches:
                    sess.run(op, feed_dict=b)
                    sess.run(self.prep.clear_padding)
            """,
    }, [('weight-remask', 'prep.py', 5)]),
    "weight-remask a padding row zeroed before each step of a loop": ({
        "t.py": """\
            import tensorflow as tf
            def fit(batches):
              emb = tf.get_variable("emb", [100, 8])
              clear_padding = tf.scatter_update(emb, [0], tf.zeros([1, 8]))
              op = tf.train.AdamOptimizer(1e-3).minimize(build(emb))
              with tf.Session() as sess:
                for b in batches:
                  sess.run(clear_padding)
                  _, loss = sess.run([op, cost], feed_dict=b)
            """,
    }, [('weight-remask', 't.py', 4)]),
    # A syllable LM: the zero row's width read from a config object, the
    # reset op built by the training subclass, run after each step.
    "weight-remask a padding row zeroed, its width from a config": ({
        "lm.py": """\
            import tensorflow as tf
            class Model:
              def __init__(self, config):
                self.emb = tf.get_variable("emb", [config.vocab, config.dim])
                self.cost = build(self.emb)

            class Train(Model):
              def __init__(self, config):
                super(Train, self).__init__(config)
                self.clear_padding = tf.scatter_update(
                    self.emb, [0],
                    tf.constant(0.0, shape=[1, config.dim], dtype=tf.float32))
                opt = tf.train.GradientDescentOptimizer(0.1)
                self.train_op = opt.minimize(self.cost)

            def run_epoch(sess, model, batches):
              for b in batches:
                _, c = sess.run([model.train_op, model.cost], feed_dict=b)
                sess.run(model.clear_padding)
            """,
    }, [('weight-remask', 'lm.py', 10)]),
    # An op fetched by its attribute from a parameter: the file the
    # trainer imports holds the op it runs, not a copy in a sibling file
    # that nothing imports.
    "weight-remask the fetched op taken from the module imported": ({
        "a_copy.py": """\
            import tensorflow as tf
            class Old:
              def __init__(self, d):
                self.emb = tf.get_variable("emb", [100, d])
                self.clear_padding = tf.scatter_update(self.emb, [0], tf.constant(0.0, shape=[1, d]))
                optimizer = tf.train.AdamOptimizer(1e-3)
                self.train_op = optimizer.minimize(build(self.emb))
            """,
        "model.py": """\
            import tensorflow as tf
            class Words:
              def __init__(self, d):
                self.emb = tf.get_variable("emb", [100, d])
                self.clear_padding = tf.scatter_update(self.emb, [0], tf.constant(0.0, shape=[1, d]))
                optimizer = tf.train.AdamOptimizer(1e-3)
                self.train_op = optimizer.minimize(build(self.emb))
            """,
        "train.py": """\
            import tensorflow as tf
            import model

            def train(session, m, batches):
              for x in batches:
                session.run([m.train_op, m.clear_padding], {m.x: x})

            def main(batches):
              words = model.Words(16)
              with tf.Session() as sess:
                train(sess, words, batches)
            """,
    }, [('weight-remask', 'model.py', 5)]),
    # A char-CNN encoder copied into two classes; the reset op returned in
    # a dict by a graph builder and fetched in a long `run` list.
    "weight-remask a padding row reset from a copied class, fetched late": ({
        "enc.py": """\
            import tensorflow as tf
            class adict(dict):
              def __init__(self, *av, **kav):
                dict.__init__(self, *av, **kav)
                self.__dict__ = self

            class CharNet:
              def __init__(self, n, d):
                self.emb = tf.get_variable("char_embedding", [n, d])
                self.clear_padding = tf.scatter_update(self.emb, [0], tf.constant(0.0, shape=[1, d]))

            class WordEmbedding:
              def __init__(self, n, d):
                self.emb = tf.get_variable("char_embedding", [n, d])
                self.clear_padding = tf.scatter_update(self.emb, [0], tf.constant(0.0, shape=[1, d]))

            def train_graph(word2vec, ids):
              loss = build(word2vec.emb, ids)
              train_op = tf.train.AdamOptimizer().minimize(loss)
              return adict(clear_padding=word2vec.clear_padding, loss=loss,
                           train_op=train_op)

            def train(session, model, batches):
              for x in batches:
                loss, _, state, norm, step, _ = session.run([
                    model.loss,
                    model.train_op,
                    model.state,
                    model.norm,
                    model.step,
                    model.clear_padding,
                ], {model.input: x})

            with tf.Session() as sess:
              train(sess, train_graph(WordEmbedding(60, 16), ids), batches)
            """,
    }, [('weight-remask', 'enc.py', 10), ('weight-remask', 'enc.py', 15)]),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_form_of_the_issue_is_found(name):
  files, expected = FORMS[name]
  assert _found(files) == expected
