"""`tfpartial scan`'s `var-list-filter` on a progressive neural
network's columns (A-GEM's PNN baseline and the code derived from it,
part 28a): each task's column is built reading the outputs of the
columns before it (`for tt in range(task): pre += matmul(h_pnn[tt][i],
u)`), and task `t`'s step, one of a loop of steps, trains only
`trainable_vars[t]`. The earlier columns feed the trained column's
output and stay out of its step: frozen on purpose. The look-alikes stay
silent: columns that never read each other (a multi-head ensemble, one
step per head), mutual learning and a multi-agent critic whose groups
read every other group (never only the earlier ones), a GAN's two
halves stepped in a loop, and a progressive network trained whole. The
sources are synthetic, in the shape of the real code."""

import textwrap

import pytest

from tests.tools.scanned import in_text

POSITIVE = {
    # imirzadeh/agem model/model.py: a method per column, the steps made
    # in a loop over the tasks.
    "a column method with lateral connections, one step per task": ("""\
        import tensorflow as tf
        class Model(object):
            def __init__(self, x, y, num_tasks, opt):
                self.trainable_vars = []
                self.h_pnn = []
                self.loss = []
                for task in range(num_tasks):
                    h = self.column([10, 10, 10], x, task)
                    self.loss.append(tf.reduce_mean(tf.square(h - y)))
                self.grads = []
                for i in range(num_tasks):
                    self.grads.append(opt.compute_gradients(
                        self.loss[i], var_list=self.trainable_vars[i]))
                self.train = [opt.apply_gradients(self.grads[i])
                              for i in range(num_tasks)]

            def column(self, dims, h, task):
                self.trainable_vars.append([])
                self.h_pnn.append([h])
                for i in range(len(dims) - 1):
                    w = tf.get_variable('w_%d_t%d' % (i, task), dims[i:i + 2])
                    self.trainable_vars[task].append(w)
                    pre = tf.matmul(h, w)
                    for tt in range(task):
                        u = tf.get_variable('u_%d_%d_%d' % (i, task, tt),
                                            dims[i:i + 2])
                        self.trainable_vars[task].append(u)
                        pre += tf.matmul(self.h_pnn[tt][i], u)
                    h = tf.nn.relu(pre)
                    self.h_pnn[task].append(h)
                return h
        """, [("var-list-filter", 13)]),
    # Daofeng-liu/CDD-R model/model.py: the columns built inline.
    "columns built inline, the step's list on its own line": ("""\
        import tensorflow as tf
        def build(x, y, num_tasks, opt):
            columns, outs, losses = [], [], []
            for task in range(num_tasks):
                columns.append([])
                outs.append([x])
                h = x
                for i in range(2):
                    w = tf.get_variable('w_%d_%d' % (i, task), [8, 8])
                    columns[task].append(w)
                    pre = tf.matmul(h, w)
                    for tt in range(task):
                        u = tf.get_variable('u_%d_%d_%d' % (i, task, tt),
                                            [8, 8])
                        columns[task].append(u)
                        pre += tf.matmul(outs[tt][i], u)
                    h = tf.nn.relu(pre)
                    outs[task].append(h)
                losses.append(tf.reduce_mean(tf.square(h - y)))
            steps = []
            for i in range(num_tasks):
                steps.append(opt.minimize(losses[i],
                                          var_list=columns[i]))
            return steps
        """, [("var-list-filter", 23)]),
    # elizamanelli/rec_prog_nn Prog_net/progressivenet.py: a column is an
    # object given the columns before it; its optimizer trains its own
    # lists only.
    "a column object given the earlier columns": ("""\
        import tensorflow as tf
        class Column:
            def __init__(self, topology, inputs, prevCols=()):
                self.W, self.b, self.U = [], [], []
                self.h = [inputs]
                for k in range(len(topology) - 1):
                    w = tf.Variable(tf.zeros(topology[k:k + 2]))
                    self.W.append(w)
                    pre = tf.matmul(self.h[-1], w)
                    for kk in range(len(prevCols)):
                        u = tf.Variable(tf.zeros(topology[k:k + 2]))
                        self.U.append(u)
                        pre += tf.matmul(prevCols[kk].h[k], u)
                    self.h.append(tf.nn.relu(pre))

            def create_optimizer(self, targets):
                self.cost = tf.reduce_mean(tf.square(self.h[-1] - targets))
                optimizer = tf.train.AdamOptimizer(0.001)
                variables_to_update = self.W + self.b + self.U
                self.weightUpdates = optimizer.minimize(
                    self.cost, var_list=variables_to_update)
        """, [("var-list-filter", 19)]),
}

NEGATIVE = {
    "a critic object given the actor, each with its own step": """\
        import tensorflow as tf
        class Critic:
            def __init__(self, state, actor):
                self.W = [tf.Variable(tf.zeros([8, 8]))]
                self.h = tf.matmul(tf.concat([state, actor.h], 1), self.W[0])

            def create_optimizer(self, target):
                self.cost = tf.reduce_mean(tf.square(self.h - target))
                trained = self.W + self.b
                return tf.train.AdamOptimizer(0.001).minimize(
                    self.cost, var_list=trained)
        """,
    "a student object given its teachers, matched in its loss": """\
        import tensorflow as tf
        class Student:
            def __init__(self, x, teachers):
                self.W = [tf.Variable(tf.zeros([8, 10]))]
                self.logits = tf.matmul(x, self.W[0])
                self.cost = 0.0
                for k in range(len(teachers)):
                    self.cost += tf.reduce_mean(tf.square(
                        self.logits - tf.stop_gradient(teachers[k].logits)))

            def create_optimizer(self):
                trained = self.W + self.b
                return tf.train.AdamOptimizer(0.001).minimize(
                    self.cost, var_list=trained)
        """,
    "a multi-head ensemble: columns that never read each other": """\
        import tensorflow as tf
        def build(x, y, num_heads, opt):
            heads, losses = [], []
            for k in range(num_heads):
                heads.append([])
                h = x
                for i in range(2):
                    w = tf.get_variable('w_%d_%d' % (i, k), [8, 8])
                    heads[k].append(w)
                    h = tf.nn.relu(tf.matmul(h, w))
                losses.append(tf.reduce_mean(tf.square(h - y)))
            return [opt.minimize(losses[k], var_list=heads[k])
                    for k in range(num_heads)]
        """,
    "deep mutual learning: each net's loss reads every other net": """\
        import tensorflow as tf
        def build(x, y, num_nets, opt):
            nets, outs, losses = [], [], []
            for k in range(num_nets):
                nets.append([])
                w = tf.get_variable('w_%d' % k, [8, 8])
                nets[k].append(w)
                outs.append(tf.matmul(x, w))
            for k in range(num_nets):
                kl = 0.0
                for j in range(num_nets):
                    if j != k:
                        kl += tf.reduce_mean(tf.square(
                            outs[k] - tf.stop_gradient(outs[j])))
                losses.append(tf.reduce_mean(tf.square(outs[k] - y)) + kl)
            return [opt.minimize(losses[k], var_list=nets[k])
                    for k in range(num_nets)]
        """,
    "a multi-agent critic reading every agent's action": """\
        import tensorflow as tf
        def build(obs, n_agents, opt):
            agent_vars, actions, losses = [], [], []
            for a in range(n_agents):
                agent_vars.append([])
                w = tf.get_variable('pi_%d' % a, [8, 8])
                agent_vars[a].append(w)
                actions.append(tf.matmul(obs[a], w))
            for a in range(n_agents):
                q = 0.0
                for b in range(n_agents):
                    v = tf.get_variable('q_%d_%d' % (a, b), [8, 1])
                    agent_vars[a].append(v)
                    q += tf.matmul(actions[b], v)
                losses.append(-tf.reduce_mean(q))
            return [opt.minimize(losses[a], var_list=agent_vars[a])
                    for a in range(n_agents)]
        """,
    "a GAN's two halves stepped in a loop": """\
        import tensorflow as tf
        def build(g_loss, d_loss, opt):
            t_vars = tf.trainable_variables()
            groups = [[v for v in t_vars if 'generator' in v.name],
                      [v for v in t_vars if 'discriminator' in v.name]]
            losses = [g_loss, d_loss]
            return [opt.minimize(losses[i], var_list=groups[i])
                    for i in range(2)]
        """,
    "a progressive network trained whole": """\
        import tensorflow as tf
        def build(x, y, num_tasks, opt):
            columns, outs = [], []
            h = x
            for task in range(num_tasks):
                columns.append([])
                outs.append([x])
                w = tf.get_variable('w_%d' % task, [8, 8])
                columns[task].append(w)
                pre = tf.matmul(x, w)
                for tt in range(task):
                    u = tf.get_variable('u_%d_%d' % (task, tt), [8, 8])
                    columns[task].append(u)
                    pre += tf.matmul(outs[tt][0], u)
                h = tf.nn.relu(pre)
                outs[task].append(h)
            loss = tf.reduce_mean(tf.square(h - y))
            return opt.minimize(loss)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_progressive_column_trained_alone_is_found(name):
  text, expected = POSITIVE[name]
  assert in_text(textwrap.dedent(text), "var-list-filter") == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_groups_that_train_together_stay_silent(name):
  assert in_text(textwrap.dedent(NEGATIVE[name]), "var-list-filter") == []
