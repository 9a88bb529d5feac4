"""`tfpartial scan`'s `var-list-filter` on programs trained in stages,
where what a stage trains is read from the code around its steps: a
class's lists of variables made by its own constructor (`self.u_w,
self.u_b = init_net(layers)`) trained by methods run apart, the later
loss reaching the earlier net through the class's methods; one list
grown per value of a stage (`if stage in ('b',): train_vars.extend(...)`)
while the graph of that stage builds scopes no value of it trains; an
Estimator's steps picked by the stage (`op_s1 if stage == 1 else op_s2`),
the model, in another module, building s2 on what s1 computes; steps
built in nested helpers that the arms of one `if` call, the net under
a computed scope (`tf.variable_scope(self.name)`) feeding the new one; a
Keras model's `variables` property read through a filter of moving
statistics to the helper that keeps only the base's batch norm; a dict's
values picked by keys a name test chose (`[params[k] for k in
latent_keys]`) while the other keys reach no step; a new part whose
output a net trained only in another run turns into what the loss
reads. A
GAN's halves, an actor and a critic, a net trained on a loss that never
reads the other, and a list grown per stage that trains what the stage
builds stay silent. Each source is synthetic, in the shape of real code
(part fifteen's DeepHPMs, DeMoN, DAN, DRSR, TCC and MAESN)."""

import pytest

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


_TWO_NETS = """\
    def init_net(layers):
      weights, biases = [], []
      for i in range(len(layers) - 1):
        weights.append(tf.Variable(tf.zeros([layers[i], layers[i + 1]])))
        biases.append(tf.Variable(tf.zeros([1, layers[i + 1]])))
      return weights, biases

    def run_net(x, weights, biases):
      for w, b in zip(weights, biases):
        x = tf.tanh(tf.matmul(x, w) + b)
      return x

    class Model:
      def __init__(self, x, u):
        self.x, self.u = x, u
        self.u_w, self.u_b = init_net([1, 20, 1])
        self.p_w, self.p_b = init_net([2, 20, 1])
        self.u_pred = self.net_u(self.x)
        self.f_pred = self.net_f(self.x)
        self.u_loss = tf.reduce_sum(tf.square(self.u_pred - self.u))
        self.f_loss = tf.reduce_sum(tf.square(self.f_pred))
        self.u_op = tf.train.AdamOptimizer().minimize(
            self.u_loss, var_list=self.u_w + self.u_b)
        self.f_op = tf.train.AdamOptimizer().minimize(
            self.f_loss, var_list=%s)

      def net_u(self, x):
        return run_net(x, self.u_w, self.u_b)

      def net_p(self, terms):
        return run_net(terms, self.p_w, self.p_b)

      def net_f(self, x):
        u = self.net_u(x)
        u_x = tf.gradients(u, x)[0]
        terms = tf.concat([u, u_x], 1)
        return u_x - self.net_p(terms)

      def train_u(self, n):
        for _ in range(n):
          self.sess.run(self.u_op)

      def train_f(self, n):
        for _ in range(n):
          self.sess.run(self.f_op)

    model = Model(x, u)
    model.train_u(100)
    model.train_f(100)
    """

_EVOLUTIONS = """\
    STAGES = ('0_first', '1_second', '2_third')

    def build(stage, images, labels):
      with tf.variable_scope('netFirst'):
        first = layers.conv2d(images, 8, 3)
      tf.losses.absolute_difference(first, labels)
      if stage >= '1_second':
        with tf.variable_scope('netSecond'):
          second = layers.conv2d(first, 8, 3)
        tf.losses.absolute_difference(second, labels)
      total = tf.add_n(tf.losses.get_losses())
      train_vars = []
      if stage <= '0_first':
        train_vars.extend(tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, 'netFirst'))
      if stage in ('1_second', %s):
        train_vars.extend(tf.get_collection(
            tf.GraphKeys.TRAINABLE_VARIABLES, 'netSecond'))
      return optimizer.minimize(total, var_list=train_vars)
    """


_PICKED = {
    "model.py": """\
        class Model(object):
          def __call__(self, images):
            with tf.variable_scope('s1'):
              s1_fc = tf.layers.dense(images, 16)
              s1_out = tf.layers.dense(s1_fc, 2)
            with tf.variable_scope('%s'):
              s2_fc = tf.layers.dense(%s, 16)
              s2_out = tf.layers.dense(s2_fc, 2)
            return {'s1': s1_out, 's2': s2_out}
        """,
    "run.py": """\
        def model_fn(features, labels, mode, stage, model_class):
          model = model_class()
          out = model(features)
          loss_s1 = tf.reduce_mean(tf.square(out['s1'] - labels))
          loss_s2 = tf.reduce_mean(tf.square(out['s2'] - labels))
          op_s1 = tf.train.AdamOptimizer(0.001).minimize(
              loss_s1, var_list=tf.get_collection(
                  tf.GraphKeys.TRAINABLE_VARIABLES, 's1'))
          op_s2 = tf.train.AdamOptimizer(0.001).minimize(
              loss_s2, var_list=tf.get_collection(
                  tf.GraphKeys.TRAINABLE_VARIABLES, 's2'))
          train_op = op_s1 if stage == 1 else op_s2
          loss = loss_s1 if stage == 1 else loss_s2
          return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
        """}


def _picked(upper, fed):
  return {path: text % (upper, fed) if path == "model.py" else text
          for path, text in _PICKED.items()}


_HELPERS = """\
    class Denoiser(Model):
      def build_graph(self):
        with tf.variable_scope(self.name):
          noise = self.estimate(self.inputs)
          clean = self.inputs - noise
        with tf.variable_scope('Fine'):
          x = tf.layers.conv2d(%s, 64, 3)
          fine = tf.layers.conv2d(x, 3, 3)

        def loss_base():
          loss = tf.losses.mean_squared_error(clean, self.label)
          var_g = tf.trainable_variables(self.name)
          self.loss.append(tf.train.AdamOptimizer(1e-4).minimize(
              loss, var_list=var_g))

        def loss_fine():
          loss = tf.losses.mean_squared_error(fine, self.label)
          var_f = tf.trainable_variables('Fine')
          self.loss.append(tf.train.AdamOptimizer(1e-4).minimize(
              loss, var_list=var_f))

        if self.finetune == -1:
          loss_fine()
        else:
          loss_base()
    """


def _numbered(text):
  for name, number in (("'0_first'", "0"), ("'1_second'", "1"),
                       ("'2_third'", "2"), ("'9_none'", "9")):
    text = text.replace(name, number)
  return text


_METHODS = """\
    class Refiner(object):
      def build(self, images):
        with tf.variable_scope('coarse'):
          coarse = tf.layers.conv2d(images, 3, 3)
        with tf.variable_scope('fine'):
          fine = tf.layers.conv2d(%s, 3, 3)
        self.coarse_loss = tf.reduce_mean(tf.abs(coarse - self.label))
        self.fine_loss = tf.reduce_mean(tf.abs(fine - self.label))

      def coarse_step(self):
        return tf.train.AdamOptimizer(1e-4).minimize(
            self.coarse_loss, var_list=tf.trainable_variables('coarse'))

      def fine_step(self):
        return tf.train.AdamOptimizer(1e-4).minimize(
            self.fine_loss, var_list=tf.trainable_variables('fine'))

      def train_op(self):
        if self.phase == 'fine':
          return self.fine_step()
        else:
          return self.coarse_step()
    """


_PROPERTY = """\
    class Algorithm(tf.keras.Model):
      def base_and_embedding_variables(self):
        if CONFIG.TRAIN_BASE == 'train_all':
          variables = self.model['cnn'].variables
        elif CONFIG.TRAIN_BASE == 'only_bn':
          variables = [x for x in self.model['cnn'].variables
                       if %s]
        else:
          variables = []
        variables += self.model['emb'].variables
        return variables

      @property
      def variables(self):
        return [x for x in self.base_and_embedding_variables()
                if 'moving' not in x.name]

      def train_one_iter(self, data, optimizer):
        with tf.GradientTape() as tape:
          loss = self.compute_loss(self.call(data))
        gradients = tape.gradient(loss, self.variables)
        optimizer.apply_gradients(zip(gradients, self.variables))
    """


_KEYED = """\
    class VPG(object):
      def optimize(self, inputs, sess):
        net_keys, latent_keys = [], []
        all_keys = list(self.policy.all_params.keys())
        for key in all_keys:
          if 'latent' not in key:
            net_keys.append(key)
          else:
            latent_keys.append(key)
        update_keys = net_keys
        grads = dict(zip(latent_keys, tf.gradients(
            self.surr_latent, [self.policy.all_params[key]
                               for key in latent_keys])))%s
        update = OrderedDict(zip(latent_keys, [
            self.policy.all_params[key] - self.step * grads[key]
            for key in latent_keys]))
        return sess.run(update)
    """


_BETWEEN = """\
    class Denoiser(Model):
      def net(self, inputs, shift):
        with tf.variable_scope(self.name):
          with tf.variable_scope('Level1'):
            noise = tf.layers.conv2d(inputs, 3, 3) + shift
            return inputs - noise

      def build_graph(self):
        with tf.variable_scope('Offset'):
          shift = tf.layers.conv2d(self.inputs, 3, 3)
          var_shift = tf.trainable_variables('Offset')
        outputs = self.net(self.inputs, %s)
        loss = tf.losses.absolute_difference(outputs, self.label)
        shift_tv = tf.reduce_mean(tf.image.total_variation(shift))

        def loss_net():
          var_net = tf.trainable_variables(self.name + '/Level1')
          self.loss.append(tf.train.AdamOptimizer(1e-4).minimize(
              loss, var_list=var_net))

        def loss_shift():
          self.loss.append(tf.train.AdamOptimizer(1e-4).minimize(
              loss + shift_tv, var_list=var_shift))

        if not self.auto:
          loss_net()
        else:
          loss_shift()
    """


_SCRIPT = """\
    def build(images):
      with tf.variable_scope('encoder'):
        code = tf.layers.dense(images, 32)
      with tf.variable_scope('head'):
        logits = tf.layers.dense(%s, 10)
      return code, logits

    def pretrain(images):
      code, _ = build(images)
      loss = tf.reduce_mean(tf.square(tf.layers.dense(code, 784) - images))
      return tf.train.AdamOptimizer(1e-3).minimize(
          loss, var_list=tf.trainable_variables('encoder'))

    def finetune(images, labels):
      _, logits = build(images)
      loss = tf.losses.softmax_cross_entropy(labels, logits)
      return tf.train.AdamOptimizer(1e-3).minimize(
          loss, var_list=tf.trainable_variables('head'))

    if FLAGS.stage == 'pretrain':
      op = pretrain(images)
    else:
      op = finetune(images, labels)
    """


def _run_by(test):
  """The two-net model whose one method runs either step by `test`."""
  return (_TWO_NETS % "self.p_w + self.p_b").split("  def train_u")[0] + (
      """  def train(self, n, stage):
            for _ in range(n):
              %s
                self.sess.run(self.u_op)
              else:
                self.sess.run(self.f_op)
    """ % test)


POSITIVE = {
    # The second net trained on the first's output and derivatives, its
    # own method run after the first's: the first stays fixed.
    "a class's second net on its first, trained apart": (
        {"t.py": _TWO_NETS % "self.p_w + self.p_b"},
        [("t.py", "var-list-filter", 25)]),
    # One method runs either step by the stage it is given.
    "a class's second net on its first, the step picked by the stage": (
        {"t.py": _run_by("if stage == 1:")},
        [("t.py", "var-list-filter", 25)]),
    # A list grown per value of the stage: at '1_second' only the second
    # net, which runs on the first, trains.
    "a list grown per stage value": (
        {"t.py": _EVOLUTIONS % "'9_none'"},
        [("t.py", "var-list-filter", 17)]),
    # The same with the stages numbered.
    "a list grown per numbered stage": (
        {"t.py": _numbered(_EVOLUTIONS % "'9_none'")},
        [("t.py", "var-list-filter", 17)]),
    # An Estimator's two steps picked by the stage; the model (another
    # module) builds s2 on s1's features: at stage 2, s1 stays fixed.
    "steps picked by the stage, s2 built on s1 in another module": (
        _picked("s2", "s1_fc"), [("run.py", "var-list-filter", 10)]),
    # A Keras model's own `variables` property, under a filter of moving
    # statistics, reads a helper keeping only the base's batch norm.
    "a property's list under a filter of moving statistics": (
        {"t.py": _PROPERTY % "'bn' in x.name"},
        [("t.py", "var-list-filter", 6)]),
    # Gradients for the policy's latent keys only: its network's keys,
    # split off by the same name test, reach no step.
    "a dict's values picked by keys a name test chose": (
        {"t.py": _KEYED % ""}, [("t.py", "var-list-filter", 12)]),
    # Learned shifts trained through the net they feed, which the other
    # arm's step trains: the net stays fixed while the shifts learn.
    "a new part trained through a net it feeds": (
        {"t.py": _BETWEEN % "shift"}, [("t.py", "var-list-filter", 11)]),
    # A script's functions called from a flag's arms: fine-tuning the
    # head on the encoder pretrained in the other run.
    "a script's functions called from a flag's arms": (
        {"t.py": _SCRIPT % "code"}, [("t.py", "var-list-filter", 18)]),
    # Steps in methods the arms of a flag's `if` call; the fine scope is
    # built on the coarse one in the method that builds the model.
    "methods called from a flag's arms": ({"t.py": _METHODS % "coarse"},
                                          [("t.py", "var-list-filter", 16)]),
    # Steps in nested helpers the arms of a flag's `if` call; the new
    # block runs on the base net's noise estimate, under a computed scope.
    "helpers called from a flag's arms, a computed scope": (
        {"t.py": _HELPERS % "noise"}, [("t.py", "var-list-filter", 18)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_stage_trained_on_an_untrained_one_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


NEGATIVE = {
    # Both nets in the second step's list: nothing left out.
    "a second step training both nets": {
        "t.py": _TWO_NETS % "self.u_w + self.u_b + self.p_w + self.p_b"},
    # Each stage value trains what it builds ('2_third' trains both).
    "a list grown per stage value training what is built": {
        "t.py": (_EVOLUTIONS % "'2_third'").replace(
            "if stage <= '0_first'", "if stage <= '2_third'")},
    # The same steps where s2 reads the images, not s1: two heads.
    "steps picked by the stage, s2 beside s1": _picked("s2", "images"),
    "methods called from a flag's arms, the fine scope beside": {
        "t.py": _METHODS % "images"},
    # The helper keeps every variable of the base but moving statistics.
    "a property's list dropping only moving statistics": {
        "t.py": _PROPERTY % "'moving' not in x.name"},
    # The network's keys (through a copy of their list) get their own
    # gradients: every key trains.
    "a dict's values picked by keys, both groups trained": {
        "t.py": _KEYED % """
        grads.update(dict(zip(update_keys, tf.gradients(
            self.surr, [self.policy.all_params[key]
                        for key in update_keys]))))"""},
    # The head reads the images, not the code: two nets of their own.
    "a script's functions called from a flag's arms, the head beside": {
        "t.py": _SCRIPT % "images"},
    # The net reads the inputs only; the shifts' loss only adds it.
    "a new part beside a net its loss reads": {"t.py": _BETWEEN % "0."},
    # The new block reads only the inputs: a net of its own.
    "helpers called from a flag's arms, the new block beside": {
        "t.py": _HELPERS % "self.inputs"},
    "a list grown per numbered stage training what is built": {
        "t.py": _numbered((_EVOLUTIONS % "'2_third'").replace(
            "if stage <= '0_first'", "if stage <= '2_third'"))},
    # The same test of a phase the loop sets anew: the halves alternate.
    "a step picked by a phase each turn of the loop sets": {
        "t.py": _run_by("phase = 'u' if _ % 2 else 'f'\n"
                        "              if phase == 'u':")},
    # A GAN's halves alternating in one loop: one run trains both.
    "a GAN's halves in one loop": {"t.py": """\
        class GAN:
          def __init__(self, z, x):
            self.g_w, self.g_b = init_net([4, 8, 2])
            self.d_w, self.d_b = init_net([2, 8, 1])
            fake = self.gen(z)
            self.d_loss = tf.reduce_mean(self.disc(fake) - self.disc(x))
            self.g_loss = -tf.reduce_mean(self.disc(fake))
            self.d_op = tf.train.AdamOptimizer().minimize(
                self.d_loss, var_list=self.d_w + self.d_b)
            self.g_op = tf.train.AdamOptimizer().minimize(
                self.g_loss, var_list=self.g_w + self.g_b)

          def gen(self, z):
            return run_net(z, self.g_w, self.g_b)

          def disc(self, x):
            return run_net(x, self.d_w, self.d_b)

          def train_d(self):
            self.sess.run(self.d_op)

          def train_g(self):
            self.sess.run(self.g_op)

          def train(self, n):
            for _ in range(n):
              self.train_d()
              self.train_g()
        """},
}
# The same GAN alternated by a loop of the script that makes it.
NEGATIVE["a GAN's halves in a loop of its script"] = {
    "gan.py": NEGATIVE["a GAN's halves in one loop"]["t.py"].split(
        "\n          def train(self, n):")[0] + "\n",
    "main.py": """\
        from gan import GAN

        gan = GAN(z, x)
        for _ in range(1000):
          gan.train_d()
          gan.train_g()
        """}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_stage_that_trains_what_it_runs_is_silent(name):
  assert _found(NEGATIVE[name]) == []
