"""`tfpartial scan`'s `var-list-filter` on models trained in stages, or
fine-tuned on top of a restored part: one run's step trains only the new
stage while the earlier stage, in the forward path, gets no update. What
the code does tells a stage from a GAN's halves: a GAN's two steps run
together and each loss reads the other half; a stage's steps sit in
exclusive branches of a mode (`if mode == "train1": ... elif mode ==
"train2": ...`), or are fetched by different methods (`train_stage1`,
`train_stage2`), and the earlier stage's output feeds the later one.
Also: a filter written with slim's `get_variables_to_restore(include=)`
kept by `set(...).intersection(...)`, and a model made by a class of a
module imported by name (`aams.AAMS()`). Each source is synthetic, in
the shape of real code (part ten's cross_vc, stackGAN, pix2pixHD, AAMS,
LearningToSpotArtifacts)."""

import pytest

import scanned


def _found(files):
  return [(path, idiom, line)
          for idiom, path, line in scanned.in_project(files)]


POSITIVE = {
    # slim's include filter, kept by a set's intersection with the
    # trainable collection: only the top convolutions train.
    "an include filter kept by a set's intersection": ({"t.py": """\
        class Trainer:
          def variables_to_train(self, n):
            chosen = []
            for i in range(n):
              vs = slim.get_variables_to_restore(
                  include=['disc/conv_{}'.format(5 - i)])
              vs = list(set(vs).intersection(tf.trainable_variables()))
              chosen += vs
            return chosen

          def tower(self, opt, loss):
            grads = opt.compute_gradients(loss, self.variables_to_train(2))
            return opt.apply_gradients(grads)
        """}, [("t.py", "var-list-filter", 5)]),
    # A model made by a class of a module imported by name; its method
    # takes the list a loop over literal scopes collects.
    "a method of a model made as module.Class()": ({
        "net/__init__.py": "",
        "net/model.py": """\
            class Model(object):
              def training_op(self, step, variables=tf.trainable_variables()):
                opt = tf.train.AdamOptimizer(1e-3)
                pairs = opt.compute_gradients(self.loss, var_list=variables)
                return opt.apply_gradients(pairs, global_step=step)
            """,
        "train.py": """\
            from net import model as m

            if __name__ == "__main__":
              net = m.Model()
              chosen = []
              for scope in ['attention', 'decoder']:
                chosen.extend(tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, scope))
              op = net.training_op(step, chosen)
            """}, [("train.py", "var-list-filter", 7)]),
    # A network class dropping its lower blocks from its trainables by a
    # negated test; the loop trains the trainables of each network it
    # builds (G's and D's), through the project's optimizer wrapper.
    "a class's trainables kept by a negated test": ({
        "network.py": """\
            class Network:
              def __init__(self, name, **kwargs):
                self.scope, self.static_kwargs = name, kwargs
                self.vars = OrderedDict(
                    (v.name, v) for v in tf.global_variables(name + "/"))
                def lower(v):
                  return any(s in v.name for s in ['4x4', '8x8'])
                if 'freeze' in kwargs:
                  self.trainables = OrderedDict(
                      (n, v) for n, v in self.vars.items()
                      if v.trainable and not lower(v))
                else:
                  self.trainables = OrderedDict(
                      (n, v) for n, v in self.vars.items() if v.trainable)
            """,
        "optimizer.py": """\
            class Optimizer:
              def register_gradients(self, loss, trainable_vars):
                trainable_vars = list(trainable_vars.values())
                self.grads.append(self.opt.compute_gradients(
                    loss=loss, var_list=trainable_vars))
            """,
        "loop.py": """\
            from network import Network
            import optimizer

            def training_loop():
              G, D = Network('G'), Network('D', freeze=True)
              G_opt, D_opt = optimizer.Optimizer(), optimizer.Optimizer()
              G_loss, D_loss = losses(G, D)
              G_opt.register_gradients(tf.reduce_mean(G_loss), G.trainables)
              D_opt.register_gradients(tf.reduce_mean(D_loss), D.trainables)
            """}, [("network.py", "var-list-filter", 9)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_stage_trained_alone_is_found(name):
  files, expected = POSITIVE[name]
  assert _found(files) == expected


STAGED = {
    # Two modes of one graph: the second net reads the first's output;
    # in "train2" only the second net trains (the first is restored).
    "exclusive modes, the earlier net feeding the later": ("""\
        def net1(x, scope="net1"):
          with tf.variable_scope(scope):
            return dense(x)

        def net2(x, scope="net2"):
          with tf.variable_scope(scope):
            return dense(x)

        class Graph:
          def __init__(self, mode="train1"):
            self.x, self.y = get_batch(mode)
            self.h = net1(self.x, scope="net1")
            self.probs = tf.nn.softmax(self.h)
            self.out = net2(self.probs, scope="net2")
            if mode == "train1":
              self.loss = tf.reduce_mean(xent(self.h, self.y))
              self.var_list = tf.get_collection(
                  tf.GraphKeys.TRAINABLE_VARIABLES, 'net1')
              self.train_op = self.opt.minimize(self.loss,
                                                var_list=self.var_list)
            elif mode == "train2":
              self.loss = tf.reduce_mean(tf.abs(self.out - self.y))
              self.var_list = tf.get_collection(
                  tf.GraphKeys.TRAINABLE_VARIABLES, 'net2')
              self.train_op = self.opt.minimize(self.loss,
                                                var_list=self.var_list)
        """, [("t.py", "var-list-filter", 23)]),
    # Stage II's GAN (G1 and D1, run together) on stage I's generator
    # and the embedding table, whose steps another method runs.
    "stage two's steps fetched by their own method": ("""\
        class Gen:
          def make0(self, z, phi):
            with tf.variable_scope('g0'):
              return phi, dense(tf.concat([z, phi], 1))

          def make1(self, x0, phi):
            with tf.variable_scope('g1'):
              return phi, dense(tf.concat([x0, phi], 1))

          def get_vars(self, name):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope=name)

        class Disc:
          def judge0(self, x):
            with tf.variable_scope('d0', reuse=tf.AUTO_REUSE):
              return dense(x)

          def judge1(self, x):
            with tf.variable_scope('d1', reuse=tf.AUTO_REUSE):
              return dense(x)

          def get_vars(self, name):
            return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES,
                                     scope=name)

        class StackGAN:
          def build(self):
            E = tf.Variable(tf.random_normal([100, 8]))
            phi = tf.nn.embedding_lookup(E, self.words)
            gen, disc = Gen(), Disc()
            c0, self.G0 = gen.make0(self.z, phi)
            c1, self.G1 = gen.make1(self.G0, phi)
            self.G0_loss = -tf.reduce_mean(disc.judge0(self.G0)) + kl(c0)
            self.D0_loss = tf.reduce_mean(disc.judge0(self.G0)) - (
                tf.reduce_mean(disc.judge0(self.X0)))
            self.G1_loss = -tf.reduce_mean(disc.judge1(self.G1))
            self.D1_loss = tf.reduce_mean(disc.judge1(self.G1)) - (
                tf.reduce_mean(disc.judge1(self.X1)))
            self.G0_optim = self.opt.minimize(
                self.G0_loss, var_list=gen.get_vars('g0') + [E])
            self.D0_optim = self.opt.minimize(
                self.D0_loss, var_list=disc.get_vars('d0') + [E])
            self.G1_optim = self.opt.minimize(
                self.G1_loss, var_list=gen.get_vars('g1'))
            self.D1_optim = self.opt.minimize(
                self.D1_loss, var_list=disc.get_vars('d1'))

          def stage1(self):
            for _ in range(10):
              self.sess.run(self.D0_optim)
              self.sess.run(self.G0_optim)

          def stage2(self):
            for _ in range(10):
              self.sess.run(self.D1_optim)
              self.sess.run(self.G1_optim)

          def run(self):
            for epoch in range(5):
              self.stage1()
            for epoch in range(5):
              self.stage2()
        """, [("t.py", "var-list-filter", 45)]),
    # Two generators built in one graph, each trained under its own test
    # of the phase; the coarse one's features feed the fine one.
    "a phase's test choosing which generator trains": ("""\
        def build(opt, labels, real):
          coarse = make_coarse()
          image, features = coarse(labels, training=True)
          if 'fine' in opt.phase:
            fine = make_fine()
            image = fine([labels, features], training=True)
          loss = tf.reduce_mean(tf.abs(image - real))
          if 'coarse' in opt.phase:
            coarse_op = optim.minimize(loss, var_list=coarse.variables)
          if 'fine' in opt.phase:
            fine_op = optim.minimize(loss, var_list=fine.variables)
          return coarse_op, fine_op
        """, [("t.py", "var-list-filter", 11)]),
}


@pytest.mark.parametrize("name", sorted(STAGED))
def test_a_later_stage_trained_on_an_earlier_one_is_found(name):
  text, expected = STAGED[name]
  assert _found(text) == expected


NEGATIVE = {
    # A GAN's steps alternating by the iteration: one run, both halves.
    "a GAN's halves alternating by the step's parity": """\
        def train(gen, disc, opt, z, x, steps):
          fake = gen(z)
          d_loss = tf.reduce_mean(disc(fake)) - tf.reduce_mean(disc(x))
          g_loss = -tf.reduce_mean(disc(fake))
          for i in range(steps):
            if i % 2 == 0:
              opt.minimize(d_loss, var_list=disc.variables)
            else:
              opt.minimize(g_loss, var_list=gen.variables)
        """,
    # A GAN whose halves' steps two methods fetch, called in one loop.
    "a GAN's halves fetched by two methods of one loop": """\
        class GAN:
          def build(self):
            self.fake = generator(self.z, scope='gen')
            self.d_loss = tf.reduce_mean(discriminator(self.fake, scope='disc'))
            self.g_loss = -self.d_loss
            self.d_optim = self.opt.minimize(
                self.d_loss, var_list=tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, 'disc'))
            self.g_optim = self.opt.minimize(
                self.g_loss, var_list=tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, 'gen'))

          def train_d(self):
            self.sess.run(self.d_optim)

          def train_g(self):
            self.sess.run(self.g_optim)

          def train(self):
            for _ in range(100):
              self.train_d()
              self.train_g()
        """,
    # Distillation in its own mode: the teacher feeds only the loss, not
    # the student's input.
    "a teacher in one mode, a student taught by it in another": """\
        def build(mode, x, y):
          teacher_out = teacher(x, scope='teacher')
          student_out = student(x, scope='student')
          if mode == 'teacher':
            loss = xent(teacher_out, y)
            op = opt.minimize(loss, var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'teacher'))
          elif mode == 'student':
            loss = kl(student_out, tf.stop_gradient(teacher_out))
            op = opt.minimize(loss, var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'student'))
          return op
        """,
    # The first mode's step: the later net is not in its loss.
    "the earlier stage trained alone": """\
        def build(mode, x, y):
          h = net1(x, scope="net1")
          out = net2(h, scope="net2")
          if mode == "train1":
            loss = xent(h, y)
            op = opt.minimize(loss, var_list=tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, 'net1'))
          else:
            op = opt.minimize(tf.reduce_mean(out), var_list=(
                tf.trainable_variables()))
          return op
        """,
    # The same network class keeping every trainable variable: a GAN's
    # halves, each trained whole.
    "a class's trainables kept whole": ({
        "network.py": """\
            class Network:
              def __init__(self, name):
                self.vars = OrderedDict(
                    (v.name, v) for v in tf.global_variables(name + "/"))
                self.trainables = OrderedDict(
                    (n, v) for n, v in self.vars.items() if v.trainable)
            """,
        "loop.py": """\
            from network import Network

            def training_loop(opt):
              G, D = Network('G'), Network('D')
              G_loss, D_loss = losses(G, D)
              g = opt.compute_gradients(G_loss, list(G.trainables.values()))
              d = opt.compute_gradients(D_loss, list(D.trainables.values()))
              return opt.apply_gradients(g + d)
            """}),
    # A flag choosing which half of a GAN one step trains: both lists
    # filtered, neither every variable.
    "a flag choosing a GAN's half": """\
        def build(hp, g_loss, d_loss):
          with tf.variable_scope('gen'):
            fake = gen(z)
          with tf.variable_scope('disc'):
            score = disc(fake)
          tvars = tf.trainable_variables()
          g_vars = [v for v in tvars if 'gen' in v.name]
          d_vars = [v for v in tvars if 'disc' in v.name]
          chosen = g_vars if hp.train_gen else d_vars
          loss = g_loss if hp.train_gen else d_loss
          return tf.train.AdamOptimizer(1e-4).minimize(loss, var_list=chosen)
        """,
    # The same, the class keeping every weight of its model.
    "an attribute a class fills with all its model's weights": ({
        "nets.py": """\
            class Policy:
              def build(self, inp):
                with tf.variable_scope(self.scope):
                  out = dense(inp)
                self.params = tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, self.scope)
                return out
            """,
        "vpg.py": """\
            class VPG:
              def __init__(self, policy, loss):
                self.policy = policy
                grads = tf.gradients(loss, self.policy.params)
                self.op = self.opt.apply_gradients(
                    zip(grads, self.policy.params))
            """}),
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_gan_or_a_teacher_is_not_a_stage(name):
  assert _found(NEGATIVE[name]) == []
