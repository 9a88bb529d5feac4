"""`tfpartial scan`'s `var-list-filter` on the forms of real code where a
step trains a strict part of the variables its loss reads and no other
step trains the rest (each source synthetic, in the shape of what the
public files do), and the look-alikes where every variable trains in
some step (a GAN's halves, an actor and a critic sharing a trunk, a
target network, a second copy of a model)."""

import textwrap

import pytest

import scanned


_found = scanned.in_project


# Meta-transfer learning: the groups of weights a model's constructors
# make, as dicts of variables.
_META = """\
    class Meta:
      def construct_weights(self):
        weights = {}
        weights['conv1'] = tf.get_variable('conv1', [3, 3, 3, 64])
        weights['b1'] = tf.Variable(tf.zeros([64]), name='b1')
        return weights

      def construct_ss_weights(self):
        ss = {}
        ss['conv1'] = tf.Variable(tf.ones([1, 1, 3, 64]), name='ss1')
        return ss

      def construct_fc_weights(self):
        fc = {}
        fc['w5'] = tf.get_variable('fc_w5', [64, 5])
        return fc

      def construct_swn_weights(self):
        swn = {}
        swn['w'] = tf.get_variable('swn_w', [64, 1])
        return swn

      def forward(self, x, weights, ss_weights):
        return tf.nn.conv2d(x, weights['conv1'] * ss_weights['conv1'], 1, 'SAME')
"""


def _meta(extra):
  """The constructors above and `extra`, methods of the same class."""
  return _META + textwrap.indent(textwrap.dedent(extra), "      ")


_POLICY = {"utils.py": """\
    def add_param(spec, shape, layer_name, name):
      with tf.variable_scope(layer_name):
        return tf.get_variable(name, shape, initializer=spec)

    def make_param_layer(num_units, name='', param=None):
      return add_param(param, (num_units,), layer_name=name, name='param')
    """, "opt.py": """\
    class Optimizer(object):
      def update_opt(self, f, target):
        params = target.get_params(trainable=True)
        return tf.gradients(f, xs=params)
    """}


def _policy(extra=""):
  """An rllab-style policy whose `get_params_internal` keeps the scopes
  it names for its parts (`extra`: one more part, built in `__init__`)."""
  return {**_POLICY, "policy.py": """\
    from utils import make_param_layer

    class Policy(object):
      def __init__(self, obs_dim, action_dim, adaptive_std=False):
        self._cached_params = {}
        self.mean_params = self.create_mlp("mean_network", (obs_dim, 8))
        if adaptive_std:
          raise NotImplementedError("never built")
          self.std = self.create_mlp("std_network", (obs_dim, 8))
        self.std_params = make_param_layer(action_dim, name="output_std")
        %s

      def create_mlp(self, name, sizes):
        with tf.variable_scope(name):
          return [tf.get_variable("W%%d" %% i, s) for i, s in enumerate(sizes)]

      def get_params(self, **tags):
        key = tuple(sorted(tags.items()))
        if key not in self._cached_params:
          self._cached_params[key] = self.get_params_internal(**tags)
        return self._cached_params[key]

      def get_params_internal(self, **tags):
        params = tf.trainable_variables()
        params = [p for p in params if p.name.startswith('mean_network')
                  or p.name.startswith('output_std')]
        params = [p for p in params if 'Adam' not in p.name]
        return params
    """ % extra}


def _trainer(main):
  """A trainer training the scopes it is given (slim's helper), built by
  `main` with a model."""
  return {"utils.py": """\
    def get_variables_to_train(trainable_scopes=None):
      if trainable_scopes is None:
        return tf.trainable_variables()
      chosen = []
      for scope in trainable_scopes.split(','):
        chosen.extend(tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
      return chosen
    """, "net.py": """\
    def c3d(x, scope='c3d'):
      with tf.variable_scope(scope):
        return tf.layers.dense(tf.layers.dense(x, 8, name='fc6'), 2)

    class Net(object):
      def __init__(self, scope):
        self.scope = scope

      def model(self, x):
        return c3d(x, scope=self.scope)
    """, "trainer.py": """\
    from utils import get_variables_to_train

    class Trainer(object):
      def __init__(self, model, train_scopes='encoder'):
        self.model = model
        self.train_scopes = train_scopes

      def build(self, x, opt):
        loss = tf.reduce_mean(self.model.model(x))
        return opt.compute_gradients(loss, get_variables_to_train(self.train_scopes))
    """, "main.py": main}


def _perceptual(measured):
  """A VAE trained through a pretrained network run in inference mode on
  its reconstructions; `measured`: what the loss reads of that network's
  features (through a head of the model, or directly)."""
  return """\
    def main(args):
      vae = importlib.import_module(args.vae_def).Vae(args.latent_size)
      images = load_images(args.data_dir)
      mean, log_variance = vae.encoder(images, True)
      latent = mean + tf.random_normal(tf.shape(mean)) * tf.exp(log_variance / 2)
      reconstructed = vae.decoder(latent, True)
      network = importlib.import_module(args.model_def)
      stacked = tf.concat([images, reconstructed], axis=0)
      _, end_points = network.inference(stacked, 1.0, phase_train=False)
      losses = []
      for name in args.features:
        %s
        losses.append(tf.reduce_sum(tf.square(real - fake)))
      kl = tf.reduce_mean(tf.exp(log_variance) + tf.square(mean) - log_variance)
      total_loss = kl + tf.add_n(losses)
      opt = tf.train.AdamOptimizer(1e-3)
      grads = opt.compute_gradients(total_loss, var_list=get_variables_to_train())
      train_op = opt.apply_gradients(grads)
      sess = tf.Session()
      _, loss_ = sess.run([train_op, total_loss])
      log = np.append(log, loss_)

    def get_variables_to_train():
      chosen = []
      for var in tf.trainable_variables():
        if 'Inception' not in var.name:
          chosen.append(var)
      return chosen
    """ % measured


POSITIVE = {
    # BN's beta and gamma left out by name, the rest split between two
    # losses whose lists share the convolutions: one training, not two
    # halves of a model.
    "a filter leaving BN out, two losses over overlapping lists": ("""\
        def build(seg_loss, aux_loss, lr):
          all_trainable = [v for v in tf.trainable_variables()
                           if 'beta' not in v.name and 'gamma' not in v.name]
          fc = [v for v in all_trainable if 'fc' in v.name]
          conv = [v for v in all_trainable if 'fc' not in v.name]
          fc_c = [v for v in fc if '_d0' not in v.name]
          fc_d = [v for v in fc if '_d0' in v.name]
          g_seg = tf.gradients(seg_loss, conv + fc_c)
          g_aux = tf.gradients(aux_loss, conv + fc_c + fc_d)
          n = len(conv)
          op_conv = tf.train.MomentumOptimizer(lr, 0.9).apply_gradients(
              zip(g_seg[:n] + g_aux[:n], conv))
          op_fc = tf.train.MomentumOptimizer(lr * 10, 0.9).apply_gradients(
              zip(g_aux[n:], fc_c + fc_d))
          return tf.group(op_conv, op_fc)
        """, [("var-list-filter", "t.py", 2)]),
    # The pretrained backbone's weights are read by the loss; the meta
    # step trains only the scaling/shifting and the head, another step a
    # weighting network: the backbone trains in no step.
    "groups of weights built by the model's constructors, one left out": (
        _meta("""\

          def construct_model(self, x, y):
            self.ss_weights = ss_weights = self.construct_ss_weights()
            self.weights = weights = self.construct_weights()
            self.fc_weights = fc_weights = self.construct_fc_weights()
            self.swn_weights = swn_weights = self.construct_swn_weights()
            emb = self.forward(x, weights, ss_weights)
            loss = tf.reduce_mean(tf.matmul(emb, fc_weights['w5']) - y)
            swn_loss = tf.reduce_mean(tf.matmul(emb, swn_weights['w']))
            self.metatrain_op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=list(ss_weights.values()) + list(
                    fc_weights.values()))
            self.swn_op = tf.train.AdamOptimizer(1e-3).minimize(
                swn_loss, var_list=swn_weights.values())
        """), [("var-list-filter", "t.py", 35)]),
    # The network built under a scope named by a parameter, the step
    # training a sub-scope of it: the rest of the network is left out.
    "a sub-scope of the scope the function opens": ("""\
        def build(x, y, scope='net'):
          with tf.variable_scope(scope):
            logits = network(x)
          loss = tf.losses.softmax_cross_entropy(y, logits)
          head = tf.trainable_variables(scope=scope + '/logits')
          return tf.train.AdamOptimizer(1e-3).minimize(loss, var_list=head)
        """, [("var-list-filter", "t.py", 5)]),
    # Fine-tuning a head in a Keras train_step: the encoder's output goes
    # into the head, and only the head's variables are applied.
    "a sub-model fed by another that no step trains": ("""\
        class FineTuning(tf.keras.Model):
          def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
              h = self.encoder_(x, training=False)
              y_pred = self.task_(h, training=True)
              loss = tf.reduce_mean(self.task_loss_(y, y_pred))
            trainable_vars_task = self.task_.trainable_variables
            grads = tape.gradient(loss, trainable_vars_task)
            self.optimizer.apply_gradients(zip(grads, trainable_vars_task))
            return {"loss": loss}
        """, [("var-list-filter", "t.py", 10)]),
    # The model's class is a parameter (`model_def`): the step trains what
    # a method of that name returns, and one of the project's classes
    # filters it by scope.
    "a method of a model whose class is passed in": ({
        "models.py": """\
            class VGG:
              def __init__(self, x, retrain_layer):
                self.retrain_layer = retrain_layer
                self.final = vgg_16(x)
              def get_retrain_vars(self):
                return [v for v in tf.trainable_variables()
                        if v.name.split('/')[1] in self.retrain_layer]

            class AlexNet:
              def __init__(self, x, retrain_layer):
                self.final = alexnet(x)
              def get_retrain_vars(self):
                return tf.trainable_variables()
            """,
        "train.py": """\
            def run(model_def, x, y, layers):
              model = model_def(x, retrain_layer=layers)
              loss = tf.losses.softmax_cross_entropy(y, model.final)
              train_vars = model.get_retrain_vars()
              opt = tf.train.AdamOptimizer(1e-3)
              return opt.minimize(loss, var_list=train_vars)
            """}, [("var-list-filter", "models.py", 6)]),
    # A trainer's property returns the variables of the scopes it is
    # configured with.
    "a property returning some scopes' variables": ("""\
        class Trainer:
          def __init__(self, loss, var_scopes=None):
            self.loss = loss
            self.var_scopes = var_scopes
            self.optimizer = tf.train.AdamOptimizer(1e-3)

          @property
          def var_list(self):
            if self.var_scopes is None:
              vlists = [tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES)]
            else:
              vlists = [tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                          scope) for scope in self.var_scopes]
            return [var for var_list in vlists for var in var_list]

          def train_op(self):
            grads = self.optimizer.compute_gradients(self.loss, self.var_list)
            return self.optimizer.apply_gradients(grads)
        """, [("var-list-filter", "t.py", 12)]),
    # The Object Detection API's freeze: the pairs kept are those whose
    # variable is not in a list a helper builds by a flag that a regex
    # test of each name sets.
    "pairs kept by membership in a list a regex flag builds": ({
        "helpers.py": """\
            import re

            def filter_variables(variables, regex_list, invert=False):
              kept = []
              for var in variables:
                add = True
                for pattern in regex_list:
                  if re.match(pattern, var.op.name):
                    add = False
                    break
                if add != invert:
                  kept.append(var)
              return kept

            def freeze_gradients_matching_regex(grads_and_vars, regex_list):
              variables = [pair[1] for pair in grads_and_vars]
              matching = filter_variables(variables, regex_list, invert=True)
              kept = [pair for pair in grads_and_vars
                      if pair[1] not in matching]
              return kept
            """,
        "train.py": """\
            import helpers

            def train(loss, optimizer, freeze):
              grads_and_vars = optimizer.compute_gradients(loss)
              if freeze:
                grads_and_vars = helpers.freeze_gradients_matching_regex(
                    grads_and_vars, freeze)
              return optimizer.apply_gradients(grads_and_vars)
            """}, [("var-list-filter", "train.py", 6)]),
    # The pairs kept by a method of the model asked of each variable by
    # keyword (`self.grad_filter(block_k=k, v=v)`).
    "pairs kept by a predicate called with keywords": ("""\
        class MLP:
          def __init__(self, block_k, loss):
            opt = tf.train.AdamOptimizer()
            self.grads = opt.compute_gradients(loss)
            self.grads = [(g, v) for (g, v) in self.grads
                          if self.grad_filter(block_k=block_k, v=v)]
            self.update = opt.apply_gradients(self.grads)

          def grad_filter(self, block_k, v):
            if 'classifier' in v.name:
              return True
            return 'block%d' % block_k in v.name
        """, [("var-list-filter", "t.py", 5)]),
    # An autoencoder's parts: the step trains the encoder's and the
    # decoder's weights; the inter blocks between them, built and run
    # with them, are trained by no step.
    "a model's parts summed, a part run between them left out": ("""\
        class Model:
          def initialize(self, x, y):
            self.encoder = Encoder(name='encoder')
            self.inter_src = Inter(name='inter_src')
            self.inter_dst = Inter(name='inter_dst')
            self.decoder = Decoder(name='decoder')
            self.G_weights = self.encoder.get_weights() + (
                self.decoder.get_weights())
            self.opt = nn.AdaBelief(lr=5e-5)
            code = self.encoder(x)
            a, b = self.inter_src(code), self.inter_dst(code)
            code = a * 0.5 + b * 0.5
            out = self.decoder(code)
            loss = tf.reduce_mean(tf.square(out - y))
            grads = nn.gradients(loss, self.G_weights)
            self.train_op = self.opt.get_update_op(grads)
        """, [("var-list-filter", "t.py", 7)]),
    # Meta-learned representations at meta-test: the loss runs the
    # prediction head on the representation (`tln(rln(x))`, in a helper),
    # and the step trains only the head.
    # The same at meta-test, beside a meta-training step that takes a
    # gradient per part, then trains the representation with a copy of
    # the head (`tln_initial`).
    "a head trained on a representation meta-trained with its copy": ("""\
        def meta_train(x, y, rln, tln, tln_initial, opt):
          with tf.GradientTape(persistent=True) as tape:
            loss = loss_fn(y, tln(rln(x)))
          tln_grads = tape.gradient(loss, tln.trainable_variables)
          rln_grads = tape.gradient(loss, rln.trainable_variables)
          opt.apply_gradients(zip(tln_grads + rln_grads,
                                  tln_initial.trainable_variables +
                                  rln.trainable_variables))

        def evaluate(x, y, tln, rln, optimizer):
          with tf.GradientTape() as tape:
            loss = loss_fn(y, tln(rln(x)))
          gradient_tln = tape.gradient(loss, tln.trainable_variables)
          optimizer.apply_gradients(zip(gradient_tln,
                                        tln.trainable_variables))
        """, [("var-list-filter", "t.py", 15)]),
    "a head trained on a representation run before it": ("""\
        def compute_loss(x, y, loss_function, tln, rln):
          output = tln(rln(x))
          return loss_function(y, output)

        def evaluate(data, tln, rln, loss_function, optimizer):
          for x, y in data:
            with tf.GradientTape() as tape:
              loss = compute_loss(x, y, loss_function, tln, rln)
            gradient_tln = tape.gradient(loss, tln.trainable_variables)
            optimizer.apply_gradients(zip(gradient_tln,
                                          tln.trainable_variables))
        """, [("var-list-filter", "t.py", 11)]),
    # MAML: the inner loop's bare gradient moves fast weights (a
    # parameter); the meta step leaves the first layer out by scope.
    "a meta step's filter beside an inner loop's fast-weight gradient": ("""\
        class MAML:
          def inner(self, x, y, weights):
            loss = loss_fn(y, self.forward(x, weights))
            grads = tf.gradients(loss, list(weights.values()))
            return dict(zip(weights.keys(), [
                w - self.lr * g for w, g in zip(weights.values(), grads)]))

          def build(self, x, y):
            self.weights = {'w1': tf.get_variable('w1', [4, 4])}
            fast = self.inner(x, y, self.weights)
            meta_loss = loss_fn(y, self.forward(x, fast))
            excludes = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                         scope='model/layer1')
            var_list = [v for v in tf.trainable_variables()
                        if v not in excludes]
            opt = tf.train.AdamOptimizer(1e-3)
            gvs = opt.compute_gradients(meta_loss, var_list)
            self.op = opt.apply_gradients(gvs)
        """, [("var-list-filter", "t.py", 14)]),
    # C3D fine-tuning: the weights held in dicts the model reads whole,
    # the step trains two entries of them.
    "a hand-written list of some entries of the model's weight dicts": ("""\
        def _variable_with_weight_decay(name, shape, wd):
          var = tf.get_variable(name, shape)
          tf.add_to_collection('losses', tf.nn.l2_loss(var) * wd)
          return var

        def run_training(images, labels, opt):
          weights = {
              'wc1': _variable_with_weight_decay('wc1', [3, 3, 3, 3, 64], 0.),
              'wd1': _variable_with_weight_decay('wd1', [8192, 4096], 0.),
              'out': _variable_with_weight_decay('wout', [4096, 101], 0.),
          }
          biases = {
              'bc1': _variable_with_weight_decay('bc1', [64], 0.),
              'out': _variable_with_weight_decay('bout', [101], 0.),
          }
          varlist2 = [weights['out'], biases['out']]
          logit = inference_c3d(images, 0.5, weights, biases)
          loss = tower_loss(logit, labels)
          grads = opt.compute_gradients(loss, varlist2)
          return opt.apply_gradients(grads)
        """, [("var-list-filter", "t.py", 16)]),
    # A classifier over BERT's pooled output (`bert(...)[1]`) with the
    # pooler left out: the loss reads the pooler, so it is frozen.
    "a pooler left out while the loss reads the pooled output": ("""\
        class Classifier(tf.keras.Model):
          def __init__(self):
            super().__init__()
            self.bert = TFBertModel.from_pretrained("bert-base-chinese")
            self.out = tf.keras.layers.Dense(2)

          def call(self, inputs, training):
            x = self.bert(inputs, training=training)[1]
            return self.out(x)

        model = Classifier()
        for x, labels in dataset:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True) - labels)
          train_vars = [v for v in model.trainable_variables
                        if 'pooler' not in v.name]
          grads = tape.gradient(loss, train_vars)
          optim.apply_gradients(zip(grads, train_vars))
        """, [("var-list-filter", "t.py", 15)]),
    # The same with the two outputs unpacked from a pretrained model.
    "a pooler left out while the pooled output is unpacked": ("""\
        bert = TFBertModel.from_pretrained("bert-base-chinese")
        head = tf.keras.layers.Dense(2)
        for x, labels in dataset:
          with tf.GradientTape() as tape:
            sequence, summary = bert(x, training=True)
            loss = loss_fn(labels, head(summary))
          train_vars = [v for v in bert.trainable_variables
                        if 'pooler' not in v.name] + head.trainable_variables
          grads = tape.gradient(loss, train_vars)
          optim.apply_gradients(zip(grads, train_vars))
        """, [("var-list-filter", "t.py", 7)]),
    # TF 0.12's `tf.all_variables()` (global_variables' old name) filtered
    # by top scope: the restored LSTM stays as loaded, the head trains.
    "the old all_variables() filtered by its top scope": ("""\
        with tf.variable_scope("lstm"):
          value, _ = tf.nn.dynamic_rnn(cell, data, dtype=tf.float32)
        with tf.variable_scope("final_layer"):
          weight = tf.Variable(tf.truncated_normal([units, classes]))
          prediction = tf.matmul(value[-1], weight)
        all_vars = tf.all_variables()
        head = [v for v in all_vars if v.name.split("/")[0] == 'final_layer']
        loss = tf.reduce_mean(tf.square(prediction - labels))
        train_step = tf.train.AdamOptimizer().minimize(loss, var_list=head)
        """, [("var-list-filter", "t.py", 7)]),
    # A policy that builds a part more than its filter keeps.
    "a policy's filter keeping some of the scopes it builds": (
        _policy('self.head = self.create_mlp("head", (8, 1))'),
        [("var-list-filter", "policy.py", 25)]),
    # A trainer given a scope inside the model's: its last layers.
    "a trainer given a part of the scope its model is built under": (
        _trainer("""\
        from net import Net
        from trainer import Trainer

        def main():
          net_scope = 'features'
          model = Net(scope=net_scope)
          Trainer(model=model, train_scopes=net_scope + '/fc6').build(x, opt)
        """), [("var-list-filter", "utils.py", 6)]),  # The helper's.
    # The pretrained network's features go through the model's own head
    # before the loss: it is a part of the model, left out.
    "a pretrained network between two trained parts": (_perceptual(
        "real, fake = tf.split(vae.head(end_points[name]), 2)"),
        [("var-list-filter", "t.py", 27)]),  # In the helper.
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_strict_part_of_the_variables_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


NEGATIVE = {
    # An actor and a critic sharing a trunk: each loss trains the trunk
    # and its own head; nothing is left out.
    "an actor and a critic sharing a trunk": """\
        def build(pi_loss, vf_loss):
          tvars = tf.trainable_variables()
          trunk = [v for v in tvars if 'trunk' in v.name]
          pi = [v for v in tvars if 'pi' in v.name]
          vf = [v for v in tvars if 'vf' in v.name]
          pi_op = tf.train.AdamOptimizer(1e-3).minimize(pi_loss, var_list=trunk + pi)
          vf_op = tf.train.AdamOptimizer(1e-3).minimize(vf_loss, var_list=trunk + vf)
          return pi_op, vf_op
        """,
    # A GAN's generator as every variable not the discriminator's, the
    # two (gradient, variable) lists made by a helper.
    "a GAN's generator as what is not the discriminator": """\
        class GAN:
          def build_loss_and_gradients(self, loss, loss_d, var_list=None):
            var_list_d = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope="Disc")
            if var_list is None:
              var_list = [v for v in tf.trainable_variables()
                          if v not in var_list_d]
            grads_d = tf.gradients(loss_d, var_list_d)
            grads = tf.gradients(loss, var_list)
            return list(zip(grads, var_list)), list(zip(grads_d, var_list_d))

          def initialize(self, optimizer, optimizer_d, var_list=None):
            pairs, pairs_d = self.build_loss_and_gradients(
                self.loss, self.loss_d, var_list)
            self.train = optimizer.apply_gradients(pairs)
            self.train_d = optimizer_d.apply_gradients(pairs_d)
        """,
    # DDPG: each network's class filters by the scope it opens itself
    # around the network it builds (a name, not a literal).
    "a network's class filtering by the scope it opens": """\
        class Critic:
          def __init__(self, name=None):
            net_name = 'critic' if name is None else name
            with tf.variable_scope(net_name):
              self.obs, self.action, self.q_value = self.create_network()
            self.params = tf.trainable_variables(scope=net_name)
            with tf.variable_scope(net_name + '_target'):
              self.target_obs, _, self.target_q = self.create_network()
            self.target_params = tf.trainable_variables(
                scope=net_name + '_target')
            self.update_target_op, self.y_ph, self.train_op = self.ops()

          def ops(self):
            update = tf.group([
                x.assign(tf.multiply(y, 0.01) + tf.multiply(x, 0.99))
                for x, y in zip(self.target_params, self.params)])
            y_ph = tf.placeholder(dtype=tf.float32, shape=[None])
            loss = tf.reduce_mean(tf.square(y_ph - self.q_value))
            train_op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=self.params)
            return update, y_ph, train_op
        """,
    # Distillation: the teacher's output feeds only the loss.
    "a teacher whose output feeds only the loss": """\
        class Distiller(tf.keras.Model):
          def train_step(self, data):
            x, y = data
            teacher_pred = self.teacher(x, training=False)
            with tf.GradientTape() as tape:
              student_pred = self.student(x, training=True)
              loss = self.distill_loss(teacher_pred, student_pred)
            trainable_vars = self.student.trainable_variables
            grads = tape.gradient(loss, trainable_vars)
            self.optimizer.apply_gradients(zip(grads, trainable_vars))
            return {"loss": loss}
        """,
    # DDPG: the policy reads a target observation network's output, cut
    # by stop_gradient, and that network is synced by its variables.
    "a target network's output, stopped, into the policy": """\
        class Learner:
          def _step(self, o_t):
            with tf.GradientTape() as tape:
              o_t = self._target_observation_network(o_t, training=False)
              o_t = tf.stop_gradient(o_t)
              policy_loss = -tf.reduce_mean(self._policy_network(o_t))
            policy_variables = self._policy_network.trainable_variables
            grads = tape.gradient(policy_loss, policy_variables)
            self._policy_optimizer.apply(grads, policy_variables)
        """,
    # An encoder and a head, each trained by its own step.
    "an encoder and a head each trained": """\
        class Both(tf.keras.Model):
          def train_step(self, data):
            x, y = data
            with tf.GradientTape() as t1, tf.GradientTape() as t2:
              h = self.encoder_(x)
              loss = self.loss_(y, self.task_(h))
            head = self.task_.trainable_variables
            body = self.encoder_.trainable_variables
            self.opt.apply_gradients(zip(t1.gradient(loss, head), head))
            self.opt_enc.apply_gradients(zip(t2.gradient(loss, body), body))
            return {"loss": loss}
        """,
    # MAML: every group a constructor makes is meta-trained.
    "every group of weights trained": _meta("""\

          def construct_model(self, x, y):
            weights = self.construct_weights()
            ss_weights = self.construct_ss_weights()
            emb = self.forward(x, weights, ss_weights)
            loss = tf.reduce_mean(emb - y)
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=list(weights.values()) + list(
                    ss_weights.values()))
        """),
    # A GAN whose halves are built by two constructors, each trained.
    "a GAN's two groups, each trained by its own step": _meta("""\

          def construct_model(self, x, y):
            g = self.construct_weights()
            d = self.construct_fc_weights()
            fake = self.forward(x, g, g)
            d_loss = tf.reduce_mean(tf.matmul(fake, d['w5']))
            g_loss = -d_loss
            self.d_op = tf.train.AdamOptimizer(1e-3).minimize(
                d_loss, var_list=list(d.values()))
            self.g_op = tf.train.AdamOptimizer(1e-3).minimize(
                g_loss, var_list=list(g.values()))
        """),
    # ADDA: a source and a target copy of one model, only the target
    # trained: the source is a second model, not a part of this one.
    "a second copy of a model by the same constructor": _meta("""\

          def construct_model(self, x, y):
            source = self.construct_weights()
            target = self.construct_weights()
            ss = self.construct_ss_weights()
            loss = tf.reduce_mean(self.forward(x, source, ss) - self.forward(
                x, target, ss))
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=list(target.values()) + list(ss.values()))
        """),
    # A target network built by its own constructor, synced by assign.
    "a target network's group written from the trained one": _meta("""\

          def construct_model(self, x, y):
            weights = self.construct_weights()
            target = self.construct_fc_weights()
            q = self.forward(x, weights, weights)
            loss = tf.reduce_mean(q - tf.matmul(q, target['w5']))
            self.op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=list(weights.values()))
            self.sync = [tf.assign(target[k], weights[k]) for k in target]
        """),
    # A GAN whose class is passed in: its two halves, each returned by a
    # method, trained by two losses.
    "a GAN's halves returned by methods of a class passed in": """\
        class GAN:
          def d_vars(self):
            return [v for v in tf.trainable_variables() if 'disc' in v.name]
          def g_vars(self):
            return [v for v in tf.trainable_variables() if 'gen' in v.name]

        def train(model_def, x, z):
          model = model_def()
          d_loss, g_loss = model.losses(x, z)
          d_vars = model.d_vars()
          g_vars = model.g_vars()
          d_op = tf.train.AdamOptimizer(1e-4).minimize(d_loss, var_list=d_vars)
          g_op = tf.train.AdamOptimizer(1e-4).minimize(g_loss, var_list=g_vars)
          return d_op, g_op
        """,
    # A policy's property returns its own variables, by the scope it
    # builds them under: the whole network.
    "a property returning the object's own scope": """\
        class Policy:
          def __init__(self, scope, x, loss):
            self.scope = scope
            with tf.variable_scope(self.scope):
              self.logits = mlp(x)
            self.loss = loss

          @property
          def trainable_vars(self):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     self.scope)

          def train_op(self):
            return tf.train.AdamOptimizer(1e-3).minimize(
                self.loss, var_list=self.trainable_vars)
        """,
    # The Object Detection API's bias multiplier: the pairs a regex
    # chooses are scaled, none is dropped.
    "pairs scaled by a regex helper": """\
        import re

        def filter_variables(variables, regex_list, invert=False):
          kept = []
          for var in variables:
            add = True
            for pattern in regex_list:
              if re.match(pattern, var.op.name):
                add = False
            if add != invert:
              kept.append(var)
          return kept

        def multiply_matching(grads_and_vars, regex_list, multiplier):
          variables = [pair[1] for pair in grads_and_vars]
          matching = filter_variables(variables, regex_list, invert=True)
          factors = {var: float(multiplier) for var in matching}
          return tf.contrib.training.multiply_gradients(grads_and_vars,
                                                        factors)

        def train(loss, optimizer):
          grads_and_vars = optimizer.compute_gradients(loss)
          grads_and_vars = multiply_matching(grads_and_vars, ['.*bias'], 2.)
          return optimizer.apply_gradients(grads_and_vars)
        """,
    # A GAN's two halves, each step keeping the pairs of its own half.
    "a GAN's halves kept by membership of the pairs": """\
        def train(d_loss, g_loss, opt_d, opt_g):
          d_vars = [v for v in tf.trainable_variables() if 'disc' in v.name]
          g_vars = [v for v in tf.trainable_variables() if 'gen' in v.name]
          d_gv = [p for p in opt_d.compute_gradients(d_loss)
                  if p[1] in d_vars]
          g_gv = [p for p in opt_g.compute_gradients(g_loss)
                  if p[1] in g_vars]
          return opt_d.apply_gradients(d_gv), opt_g.apply_gradients(g_gv)
        """,
    # The filtered gradients only drawn as histograms; the step trains the
    # loss on every variable.
    "a filtered gradient only summarised beside the whole step": """\
        var_list = [v for v in tf.trainable_variables()
                    if v.name.split('/')[0] in train_layers]
        loss = tf.reduce_mean(xent(logits, y))
        gradients = tf.gradients(ys=loss, xs=var_list)
        gradients = list(zip(gradients, var_list))
        optimizer = tf.train.MomentumOptimizer(learning_rate=0.01, momentum=0.9)
        train_op = optimizer.minimize(loss)
        for gradient, var in gradients:
          tf.summary.histogram(var.name + '/gradient', gradient)
        """,
    # The same parts with a discriminator built beside them: its own
    # step trains it.
    "a model's parts summed, the discriminator trained by its own step": """\
        class Model:
          def initialize(self, x, y):
            self.encoder = Encoder(name='encoder')
            self.decoder = Decoder(name='decoder')
            self.D = Discriminator(name='D')
            self.G_weights = self.encoder.get_weights() + (
                self.decoder.get_weights())
            out = self.decoder(self.encoder(x))
            d_fake = self.D(out)
            g_loss = tf.reduce_mean(tf.square(out - y)) - tf.reduce_mean(d_fake)
            d_loss = tf.reduce_mean(d_fake) - tf.reduce_mean(self.D(y))
            self.g_op = self.opt.get_update_op(nn.gradients(g_loss,
                                                            self.G_weights))
            self.d_op = self.d_opt.get_update_op(
                nn.gradients(d_loss, self.D.get_weights()))
        """,
    # A student's parts trained against a teacher built beside them: the
    # teacher's output feeds only the loss.
    "a student's parts summed beside a teacher": """\
        class Distill:
          def initialize(self, x, y):
            self.body = Body(name='body')
            self.head = Head(name='head')
            self.teacher = Teacher(name='teacher')
            self.weights = self.body.get_weights() + self.head.get_weights()
            soft = self.teacher(x)
            out = self.head(self.body(x))
            loss = kd_loss(out, soft) + xent(out, y)
            self.op = self.opt.get_update_op(nn.gradients(loss, self.weights))
        """,
    # Meta-training: the inner step trains the head, the outer step the
    # representation and the head.
    "a head's inner step beside an outer step on the representation": """\
        def meta_train(x, y, tln, rln, loss_fn, inner_opt, outer_opt):
          with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
              loss = loss_fn(y, tln(rln(x)))
            grads = inner.gradient(loss, tln.trainable_variables)
            inner_opt.apply_gradients(zip(grads, tln.trainable_variables))
            meta_loss = loss_fn(y, tln(rln(x)))
          variables = rln.trainable_variables + tln.trainable_variables
          outer_opt.apply_gradients(zip(outer.gradient(meta_loss, variables),
                                        variables))
        """,
    # A GAN in eager code: the discriminator's step on D(G(z)), the
    # generator's on the same composition.
    "a GAN's discriminator stepped on the generator's output": """\
        def train_step(x, z, generator, discriminator, g_opt, d_opt):
          with tf.GradientTape() as d_tape, tf.GradientTape() as g_tape:
            fake = generator(z)
            d_loss = d_loss_fn(discriminator(x), discriminator(fake))
            g_loss = g_loss_fn(discriminator(fake))
          d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
          d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
          g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
          g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
        """,
    # A GAN's critic step in its own function, on the generator's output:
    # the generator's step (another function) trains it.
    "a critic's step in its own function on the generator's output": """\
        def train_gen(generator, critic, z, g_opt):
          with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(critic(generator(z)))
          g_opt.apply_gradients(zip(
              tape.gradient(loss, generator.trainable_variables),
              generator.trainable_variables))

        def train_critic(generator, critic, x, z, c_opt):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(critic(generator(z))) - tf.reduce_mean(
                critic(x))
          c_opt.apply_gradients(zip(
              tape.gradient(loss, critic.trainable_variables),
              critic.trainable_variables))
        """,
    # SAC: the actor's update reads the encoder the critic's update trains.
    "an actor's update on an encoder the critic's update trains": """\
        def update_critic(encoder, critic, obs, target, opt):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((critic(encoder(obs)) - target) ** 2)
          params = encoder.trainable_variables + critic.trainable_variables
          opt.apply_gradients(zip(tape.gradient(loss, params), params))

        def update_actor(encoder, actor, critic, obs, opt):
          with tf.GradientTape() as tape:
            h = encoder(obs)
            loss = -tf.reduce_mean(critic(h) * actor(h))
          opt.apply_gradients(zip(
              tape.gradient(loss, actor.trainable_variables),
              actor.trainable_variables))
        """,
    # A GAN's two steps in two methods; the discriminator's runs the
    # generator (`training=False`), whose own method trains it.
    "a discriminator's method on a generator another method trains": """\
        class Trainer:
          def train_generator(self, z):
            with tf.GradientTape() as tape:
              fake = self.generator(z, training=True)
              loss = -tf.reduce_mean(self.discriminator(fake, training=True))
            grads = tape.gradient(loss, self.generator.trainable_variables)
            self.g_opt.apply_gradients(zip(
                grads, self.generator.trainable_variables))

          def train_discriminator(self, real, z):
            fake = self.generator(z, training=False)
            with tf.GradientTape() as tape:
              loss = tf.reduce_mean(self.discriminator(fake)) - (
                  tf.reduce_mean(self.discriminator(real)))
            grads = tape.gradient(loss, self.discriminator.trainable_variables)
            self.d_opt.apply_gradients(zip(
                grads, self.discriminator.trainable_variables))
        """,
    # `[:]` copies the whole list: no variable left out.
    "a full-slice copy of the model's variables": """\
        def step(model, opt, x, y):
          params = model.trainable_variables[:]
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x) - y) ** 2)
          opt.apply_gradients(zip(tape.gradient(loss, params), params))
        """,
    "a full-slice copy of an attribute holding the variables": """\
        class T:
          def __init__(self, model):
            self.model = model
            self.params = model.trainable_variables

          def step(self, x, y):
            with tf.GradientTape() as tape:
              loss = tf.reduce_mean((self.model(x) - y) ** 2)
            self.opt.apply_gradients(zip(tape.gradient(loss, self.params),
                                         self.params))

          def shrink(self):
            self.params = self.params[:]
        """,
    # A meta-learner's inner update: a bare gradient of the head applied
    # by hand; the outer step (elsewhere) trains the representation.
    "a meta-learner's inner update of the head": """\
        def compute_loss(x, y, rln, tln):
          return loss_fn(y, tln(rln(x)))

        def inner_update(x, y, rln, tln, lr):
          with tf.GradientTape() as tape:
            loss = compute_loss(x, y, rln, tln)
          grads = tape.gradient(loss, tln.trainable_variables)
          for g, v in zip(grads, tln.trainable_variables):
            v.assign(v - lr * g)
        """,
    # One replica's copy of the model, chosen by the device a method of
    # a manager passed in is asked for: every replica trains.
    "a replica's variables returned by a method of a manager passed in": """\
        class VariableMgr:
          def trainable_variables_on_device(self, abs_device_num):
            return [v for v in tf.trainable_variables()
                    if v.name.startswith('v%s/' % abs_device_num)]

        def tower(mgr, loss, device_num):
          params = mgr.trainable_variables_on_device(device_num)
          return tf.gradients(loss, params)
        """,
    # An adversarial example made by a function passed in, then the
    # whole model trained on it.
    "a model trained on an attack function's output": """\
        def build_train_step_fn(model, optimizer, loss_fn, attack_fn):
          def train_step(x, y):
            adv_x = attack_fn(x, y)
            with tf.GradientTape() as tape:
              loss = loss_fn(y, model(adv_x, training=True))
            variables = model.trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables),
                                          variables))
          return train_step
        """,
    # The lower and the upper layers, each at its own optimizer in a loop.
    "two stacked parts trained in a loop over the groups": """\
        def train(x, y, lower, upper, lower_opt, upper_opt):
          with tf.GradientTape(persistent=True) as tape:
            loss = loss_fn(y, upper(lower(x)))
          for layers, optimizer in ((lower, lower_opt), (upper, upper_opt)):
            grads = tape.gradient(loss, layers.trainable_variables)
            optimizer.apply_gradients(zip(grads, layers.trainable_variables))
        """,
    # Every entry of the weight dicts listed by hand.
    "a hand-written list of every entry of the weight dicts": """\
        def run_training(images, labels, opt):
          weights = {'w1': tf.get_variable('w1', [4, 4]),
                     'out': tf.get_variable('wout', [4, 2])}
          var_list = [weights['w1'], weights['out']]
          loss = tower_loss(inference(images, weights), labels)
          return opt.minimize(loss, var_list=var_list)
        """,
    # The head's entries at one rate, the rest of the dicts at another.
    "some entries of the weight dicts, the rest at another rate": """\
        def run_training(images, labels, opt_stable, opt_head):
          weights = {'w1': tf.get_variable('w1', [4, 4]),
                     'out': tf.get_variable('wout', [4, 2])}
          head = [weights['out']]
          rest = list(set(weights.values()) - set(head))
          loss = tower_loss(inference(images, weights), labels)
          grads1 = opt_stable.compute_gradients(loss, rest)
          grads2 = opt_head.compute_gradients(loss, head)
          return tf.group(opt_stable.apply_gradients(grads1),
                          opt_head.apply_gradients(grads2))
        """,
    # DDPG: the critic's step trains the observation network and the
    # critic; the target observation network, built beside them and run
    # into the critic, is copied, not trained.
    "a target network built beside the summed parts": """\
        class Learner:
          def __init__(self, obs_net, critic, target_obs_net, opt):
            self._observation_network = to_module(obs_net)
            self._critic_network = critic
            self._target_observation_network = to_module(target_obs_net)
            self._opt = opt

          def step(self, o_tm1, a_tm1, o_t, r):
            with tf.GradientTape() as tape:
              q_tm1 = self._critic_network(self._observation_network(o_tm1),
                                           a_tm1)
              o_t = self._target_observation_network(o_t)
              q_t = self._critic_network(o_t, a_tm1)
              loss = tf.reduce_mean(tf.square(r + q_t - q_tm1))
            variables = (self._observation_network.trainable_variables +
                         self._critic_network.trainable_variables)
            self._opt.apply(tape.gradient(loss, variables), variables)
        """,
    # A tutorial's gradients: of two variables at the top level, then of
    # a model passed in, trained whole by hand.
    "a gradient of two variables beside a model's step": """\
        W = tf.Variable(tf.random.uniform((2, 2)))
        b = tf.Variable(tf.zeros((2,)))
        x = tf.Variable(0.)
        with tf.GradientTape() as tape:
          y = tf.matmul(x, W) + b
        grads = tape.gradient(y, [W, b])

        def one_training_step(model, images, labels):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(loss_fn(labels, model(images)))
          gradients = tape.gradient(loss, model.weights)
          update_weights(gradients, model.weights)
        """,
    # Further pre-training of a masked language model: the loss reads the
    # per-token logits, never the pooled output, so the pooler left out
    # gets no gradient either way.
    "a pooler the language-model loss never reads, left out": """\
        def data_generator(path):
          for line in open(path):
            yield (line, [0]), (line, [1])

        (text, seg), (labels, labels_mask) = next(data_generator("train.txt"))
        model = TFBertLMHeadModel.from_pretrained("bert-base-chinese")
        optim = tf.optimizers.Adam(1e-5)
        width = tf.shape(text)[1]
        for (text, seg), (labels, labels_mask) in dataset:
          with tf.GradientTape() as tape:
            logits = model([text, tf.sign(text), seg], training=True).logits
            loss = tf.compat.v1.losses.softmax_cross_entropy(
                tf.one_hot(labels, 21128), logits, weights=labels_mask)
          trainable_vars = [v for v in model.trainable_variables
                            if 'pooler' not in v.name]
          grads = tape.gradient(loss, trainable_vars)
          grads, _ = tf.clip_by_global_norm(grads, 5.)
          optim.apply_gradients(zip(grads, trainable_vars))
        """,
    # A tagger over the sequence output (`bert(...)[0]`), the pooler's two
    # variables left out by their names.
    "a tagger leaving out the pooler it never reads": """\
        class Tagger(tf.keras.Model):
          def __init__(self):
            super().__init__()
            self.bert = TFBertModel.from_pretrained("bert-base-chinese")
            self.out = tf.keras.layers.Dense(1)

          def call(self, inputs, training):
            x = self.bert(inputs, training=training)[0]
            return self.out(x)

        model = Tagger()
        for x, labels in dataset:
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True) - labels)
          train_vars = [v for v in model.trainable_variables
                        if v.name != 'tf_bert_model/bert/pooler/dense/kernel:0'
                        and v.name != 'tf_bert_model/bert/pooler/dense/bias:0']
          grads = tape.gradient(loss, train_vars)
          optim.apply_gradients(zip(grads, train_vars))
        """,
    # A learner's step over another object's list: that object's own
    # variables, collected by the scope its class builds them under.
    "a step over another network's own scope's variables": """\
        class Network(object):
          def __init__(self, conf):
            self.name = conf["name"]
            with tf.variable_scope(self.name):
              self.w = tf.get_variable("w", [4, 4])
            self.params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES,
                                            scope=self.name)

        class Learner(object):
          def __init__(self, conf):
            self.batch_network = Network(conf)
            self.V_params = self.batch_network.params
            self.q_gradients = tf.gradients(self.q_objective, self.V_params)
        """,
    # Inverse RL's shared reward: its step applies gradients fed in from
    # outside (placeholders, one per variable of its scope) that the
    # per-task models computed and summed; no loss is taken here.
    "a step applying gradients fed through placeholders": """\
        class SharedReward:
          def __init__(self, scope, dim):
            with tf.variable_scope(scope):
              self.w = tf.get_variable("W", shape=(dim, 32))
            self.grad_and_vars = []
            for var in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                         scope="center"):
              ph = tf.placeholder(dtype=tf.float32, shape=var.shape)
              self.grad_and_vars.append((ph, var))
            self.step = tf.train.AdamOptimizer(1e-3).apply_gradients(
                self.grad_and_vars)
        """,
    "a step zipping placeholders with a scope's variables": """\
        shared = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                   scope="shared")
        fed = [tf.placeholder(tf.float32, v.shape) for v in shared]
        apply_shared = tf.train.AdamOptimizer(1e-3).apply_gradients(
            zip(fed, shared))
        """,
    # Mixed precision's master copies: every pair goes to the new list,
    # a layer norm's as it is (then `continue`), any other's through its
    # fp32 copy; the name test chooses how, not whether.
    "a loop sending each pair one of two ways, one ending in continue": """\
        def master_pairs(params_grads, scaling):
          out = []
          for p, g in params_grads:
            with guard([p, g]):
              master = copy_param(p)
              if g.name.find("layer_norm") > -1:
                out.append([p, g / scaling])
                continue
              out.append([master, tf.cast(g, tf.float32) / scaling])
          return out

        def optimization(loss, optimizer, scaling):
          param_grads = optimizer.backward(loss)
          optimizer.apply_gradients(master_pairs(param_grads, scaling))
        """,
    # A model template training the collection of its own scope, every
    # part of the model built under that scope plus a suffix (which a
    # collection's scope, a prefix, matches).
    "a template training its own scope, parts under its scope plus a suffix": {
        "base.py": """\
        class Template(object):
          def build_placeholder(self, config):
            self.scope = config["scope"]

          def build_op(self):
            self.build_model()
            self.opt = tf.train.AdamOptimizer(1e-3)
            trainable_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, self.scope)
            pairs = self.opt.compute_gradients(self.loss, var_list=trainable_vars)
            self.train_op = self.opt.apply_gradients(pairs)
        """,
        "model.py": """\
        class Model(Template):
          def build_model(self):
            with tf.variable_scope(self.scope + '_encoder'):
              h = tf.layers.dense(self.x, 8)
            with tf.variable_scope(self.scope + '_predictor'):
              self.loss = tf.reduce_mean(tf.layers.dense(h, 2))
        """},
    # rllab's policies: the filter keeps the scopes the policy names for
    # all its parts (one helper opens its name, another passes it on;
    # what follows a `raise` is never built), and drops Adam's slots.
    "a policy's filter keeping every scope it builds": _policy(),
    # A trainer given, at each construction, the scope its model is
    # built under: the whole model (temporal SSL's trainers).
    # A perceptual loss: a pretrained network run in inference mode on
    # the VAE's reconstructions measures them; the filter leaves out only
    # that measure (facenet's train_vae.py).
    "a pretrained network that only measures the loss": _perceptual(
        "real, fake = tf.split(end_points[name], 2)"),
    # slim's helper called without scopes: its `None` branch returns
    # every trainable variable.
    "a helper that filters by scopes, called without any": {
        "utils.py": _trainer("")["utils.py"], "ae.py": """\
        from utils import get_variables_to_train

        class AETrainer(object):
          def build(self, x, opt):
            loss = tf.reduce_mean(tf.square(self.model.net(x) - x))
            return opt.compute_gradients(loss, get_variables_to_train())
        """},
    "a trainer given the scope its model is built under": _trainer("""\
        from net import Net
        from trainer import Trainer

        def main():
          net_scope = 'features'
          model = Net(scope=net_scope)
          for split in range(3):
            Trainer(model=model, train_scopes=net_scope).build(x, opt)
        """),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_every_variable_trained_somewhere_is_not_reported(name):
  assert _found(NEGATIVE[name]) == []
