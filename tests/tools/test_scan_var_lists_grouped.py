"""`tfpartial scan`'s `var-list-filter` on the variables of one model
split into groups by a branch chain over their names (test-time
adaptation's `image_normalizer` / `i2l_mapper` / `l2l_mapper` groups, a
multi-domain network's shared and per-domain batch norm): a group only
one branch of an `if`/`elif`/`else` adds to is chosen by that branch's
test, as a lone `if` chooses it. The look-alikes stay silent: a list
every branch adds to (each variable somewhere), a GAN's generator and
discriminator as the two branches, each trained by its own loss, and
(gradient, variable) pairs whose other branch keeps the gradients it
leaves out to apply later (FLAIR's per-model steps, part 9e negatives).
The sources are synthetic, in the shape of the real code (part 9e)."""

import textwrap

import pytest

from tests.tools.scanned import in_project, in_text

POSITIVE = {
    "test-time adaptation: the normaliser's group of an elif chain": ("""\
        import tensorflow as tf
        def adapt(images):
            loss_op = tf.reduce_mean(net(images))
            i2l_vars, l2l_vars, normalization_vars = [], [], []
            for v in tf.global_variables():
                var_name = v.name
                if 'image_normalizer' in var_name:
                    normalization_vars.append(v)
                    i2l_vars.append(v)
                elif 'i2l_mapper' in var_name:
                    i2l_vars.append(v)
                elif 'l2l_mapper' in var_name:
                    l2l_vars.append(v)
            optimizer = tf.train.AdamOptimizer(1e-4)
            gradients = optimizer.compute_gradients(
                loss_op, var_list=normalization_vars)
            train_op = optimizer.apply_gradients(gradients)
            saver = tf.train.Saver(var_list=i2l_vars)
        """, [("var-list-filter", 8)]),
    "a new domain's batch norm: the `else` branch's group": ("""\
        import tensorflow as tf
        def new_domain(images):
            loss = tf.reduce_mean(net(images))
            shared_vars, private_vars = [], []
            for v in tf.trainable_variables():
                if 'W' in v.name:
                    shared_vars.append(v)
                else:
                    private_vars.append(v)
            train_op = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=private_vars)
        """, [("var-list-filter", 9)]),
    # tta_dae.py: a helper of another module returns the groups; a flag
    # picks the one adapted; a second step (Ax to identity) trains
    # another group for its own loss; the segmenter's group trains in
    # neither: not a GAN's two halves.
    "test-time adaptation: a helper's groups, one chosen by a flag": ({
        "model.py": """\
            def divide_vars_into_groups(all_vars):
                i2l_vars, normalization_vars, bn_vars, ax_vars = [], [], [], []
                for v in all_vars:
                    if 'image_normalizer' in v.name:
                        i2l_vars.append(v)
                        normalization_vars.append(v)
                    if 'beta' in v.name or 'gamma' in v.name:
                        bn_vars.append(v)
                    if 'adaptAx' in v.name:
                        ax_vars.append(v)
                    elif 'i2l_mapper' in v.name:
                        i2l_vars.append(v)
                return i2l_vars, normalization_vars, bn_vars, ax_vars
            """,
        "tta.py": """\
            import tensorflow as tf
            import model
            def adapt(args, images_pl, images_adapted, loss_op):
                i2l_vars, normalization_vars, bn_vars, ax_vars = \\
                    model.divide_vars_into_groups(tf.global_variables())
                init_ax_op = tf.train.AdamOptimizer(1e-3).minimize(
                    tf.reduce_mean(tf.square(images_adapted - images_pl)),
                    var_list=ax_vars)
                if args.TTA_VARS == "BN":
                    tta_vars = bn_vars
                elif args.TTA_VARS == "NORM":
                    tta_vars = normalization_vars
                train_op = tf.train.AdamOptimizer(1e-4).minimize(
                    loss_op, var_list=tta_vars)
                saver = tf.train.Saver(var_list=i2l_vars)
            """}, [("tta.py", 5), ("tta.py", 14)]),
    # wuhy08/dqn: the Q network is a progressive network; only its new
    # column trains, while the whole Q network is copied to the target.
    "a progressive network's new column beside a target network": ("""\
        import tensorflow as tf
        def learn(optimizer, total_error):
            q_func_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='q_func')
            target_q_func_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='target_q_func')
            q_func_vars_train = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='q_func/col1')
            train_fn = optimizer.minimize(total_error,
                                          var_list=q_func_vars_train)
            update_target_fn = []
            for var, var_target in zip(sorted(q_func_vars),
                                       sorted(target_q_func_vars)):
                update_target_fn.append(var_target.assign(var))
            return train_fn, tf.group(*update_target_fn)
        """, [("var-list-filter", 7)]),
    # iesl/metanlp: `filter_by_layer` fills a fresh dict with the BERT
    # weights whose names pass a regex; the inner loop steps only those
    # by hand (`tf.assign(w[k], w[k] - lr * g[k])`).
    "a meta-learner's dict of weights chosen by layer": ("""\
        import re
        import tensorflow as tf
        def filter_by_layer(weights):
            filtered_weights = {}
            for key, value in weights.items():
                layer_num = re.findall(r'layer_([0-9]+)', key)
                if len(layer_num) > 0:
                    if int(layer_num[0]) >= 6:
                        filtered_weights[key] = value
            return filtered_weights
        def inner_step(support_loss, bert_model, lr):
            fast_weights = filter_by_layer(bert_model.weights)
            grads = tf.gradients(support_loss, list(fast_weights.values()))
            gvs = dict(zip(fast_weights.keys(), grads))
            return {key: tf.assign(fast_weights[key],
                                   fast_weights[key] - lr * gvs[key])
                    for key in fast_weights}
        """, [("var-list-filter", 13)]),
    # yaoyao-liu/mtl-hard-tasks: the pretrained ResNet `weights` run in
    # one forward with the scaling/shifting `ss_weights`; in MTL mode
    # only those and the head train (the other mode, in the `else`, does
    # not count); the base learner's inner loop adapts the head alone, on
    # the ResNet's output (an inner loop over some variables counts:
    # BUILDING "Where to look", REVIEW27f).
    "meta-transfer learning: the ResNet left out of its own forward": ("""\
        import tensorflow as tf
        class MetaModel(Models):
            def construct_model(self, use_mtl):
                ss_weights = self.construct_resnet_ss_weights()
                weights = self.construct_resnet_weights()
                base_weights = self.construct_base_weights()
                def task_metalearn(inp):
                    inputa, inputb, labela, labelb = inp
                    emb_a = self.forward_resnet(inputa, weights, ss_weights)
                    emb_b = self.forward_resnet(inputb, weights, ss_weights)
                    lossa = self.loss_func(self.forward_base(emb_a, base_weights), labela)
                    grads = tf.gradients(lossa, list(base_weights.values()))
                    gradients = dict(zip(base_weights.keys(), grads))
                    fast = dict(zip(base_weights.keys(), [
                        base_weights[k] - 0.01 * gradients[k] for k in base_weights]))
                    return self.loss_func(self.forward_base(emb_b, fast), labelb)
                total_loss = tf.reduce_mean(tf.map_fn(task_metalearn, self.inputs))
                optimizer = tf.train.AdamOptimizer(1e-3)
                if use_mtl:
                    self.op = optimizer.minimize(total_loss, var_list=list(
                        ss_weights.values()) + list(base_weights.values()))
                else:
                    self.op = optimizer.minimize(total_loss, var_list=list(
                        weights.values()) + list(base_weights.values()))
        """, [("var-list-filter", 12), ("var-list-filter", 20)]),
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_group_one_branch_chooses_is_found(name):
  text, expected = POSITIVE[name]
  if isinstance(text, dict):
    assert [(path, line) for idiom, path, line in in_project(text)
            if idiom == "var-list-filter"] == expected
  else:
    assert in_text(text, "var-list-filter") == expected


NEGATIVE = {
    "every branch adds to the list": """\
        import tensorflow as tf
        def train(x):
            loss = tf.reduce_mean(net(x))
            chosen = []
            for v in tf.global_variables():
                if 'bn' in v.name:
                    chosen.append(v)
                else:
                    chosen.append(v)
            train_op = tf.train.AdamOptimizer(0.1).minimize(
                loss, var_list=chosen)
        """,
    "a GAN's halves as the two branches": """\
        import tensorflow as tf
        def train(x, z):
            d_loss = tf.reduce_mean(disc(x))
            g_loss = tf.reduce_mean(disc(gen(z)))
            g_vars, d_vars = [], []
            for v in tf.trainable_variables():
                if 'generator' in v.name:
                    g_vars.append(v)
                else:
                    d_vars.append(v)
            d_op = tf.train.AdamOptimizer(0.1).minimize(d_loss, var_list=d_vars)
            g_op = tf.train.AdamOptimizer(0.1).minimize(g_loss, var_list=g_vars)
        """,
    "pairs whose other branch keeps the gradients for later": """\
        import tensorflow as tf
        class Model:
            def build(self, loss):
                self.optimizer = tf.train.AdamOptimizer(1e-3)
                gradient_all = self.optimizer.compute_gradients(loss)
                self.gradient_skill = []
                self.gradient_task_value = []
                for grad, var in gradient_all:
                    if 'task' in var.name:
                        self.gradient_task_value.append(grad)
                    else:
                        self.gradient_skill.append((grad, var))
                self.step = self.optimizer.apply_gradients(self.gradient_skill)
        """,
    "a GAN's halves returned by a helper, both trained": {
        "gan.py": """\
            import tensorflow as tf
            def get_vars():
                g_vars, d_vars = [], []
                for v in tf.trainable_variables():
                    if 'generator' in v.name:
                        g_vars.append(v)
                    if 'discriminator' in v.name:
                        d_vars.append(v)
                return g_vars, d_vars
            def train(d_loss, g_loss):
                g_vars, d_vars = get_vars()
                d_op = tf.train.AdamOptimizer(0.1).minimize(
                    d_loss, var_list=d_vars)
                g_op = tf.train.AdamOptimizer(0.1).minimize(
                    g_loss, var_list=g_vars)
            """},
    "a GAN's halves beside data a helper returns too": {
        "gan.py": """\
            import tensorflow as tf
            def setup():
                g_vars, d_vars = [], []
                for v in tf.trainable_variables():
                    if 'generator' in v.name:
                        g_vars.append(v)
                    if 'discriminator' in v.name:
                        d_vars.append(v)
                images = load_images()
                return images, g_vars, d_vars
            def train(d_loss, g_loss):
                images, g_vars, d_vars = setup()
                d_op = tf.train.AdamOptimizer(0.1).minimize(
                    d_loss, var_list=d_vars)
                g_op = tf.train.AdamOptimizer(0.1).minimize(
                    g_loss, var_list=g_vars)
            """},
    "a Q network trained whole and copied to its target": """\
        import tensorflow as tf
        def learn(optimizer, total_error):
            q_func_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='q_func')
            target_q_func_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='target_q_func')
            train_fn = optimizer.minimize(total_error, var_list=q_func_vars)
            update_target_fn = []
            for var, var_target in zip(sorted(q_func_vars),
                                       sorted(target_q_func_vars)):
                update_target_fn.append(var_target.assign(var))
            return train_fn, tf.group(*update_target_fn)
        """,
    "an actor and a critic inside the model copied to its target": """\
        import tensorflow as tf
        def learn(pi_loss, vf_loss):
            model_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='model')
            target_vars = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='target')
            pi_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope='model/pi')
            vf_vars = tf.get_collection(
                tf.GraphKeys.TRAINABLE_VARIABLES, scope='model/vf')
            pi_op = tf.train.AdamOptimizer(1e-3).minimize(
                pi_loss, var_list=pi_vars)
            vf_op = tf.train.AdamOptimizer(1e-3).minimize(
                vf_loss, var_list=vf_vars)
            sync = [t.assign(m) for m, t in zip(model_vars, target_vars)]
            return pi_op, vf_op, sync
        """,
    "a meta-learner's inner loop over every weight of a dict": """\
        import tensorflow as tf
        def inner_step(support_loss, weights, lr):
            fast_weights = {}
            for key, value in weights.items():
                if value is not None:
                    fast_weights[key] = value
            grads = tf.gradients(support_loss, list(fast_weights.values()))
            gvs = dict(zip(fast_weights.keys(), grads))
            return {key: tf.assign(fast_weights[key],
                                   fast_weights[key] - lr * gvs[key])
                    for key in fast_weights}
        """,
    "a dict of target weights moved toward the trained ones": """\
        import tensorflow as tf
        def build(loss, tau):
            online, target = {}, {}
            for v in tf.global_variables():
                if v.name.startswith('online'):
                    online[v.name[7:]] = v
                if v.name.startswith('target'):
                    target[v.name[7:]] = v
            train = tf.train.AdamOptimizer(1e-3).minimize(
                loss, var_list=list(online.values()))
            sync = [tf.assign(target[k], tau * online[k] + (1 - tau) * target[k])
                    for k in target]
            return train, sync
        """,
    "a GAN whose halves are dicts of weights run apart": """\
        import tensorflow as tf
        class Gan:
            def build(self, x, z):
                g_weights = self.construct_generator_weights()
                d_weights = self.construct_discriminator_weights()
                fake = self.generator(z, g_weights)
                d_loss = tf.reduce_mean(self.discriminator(x, d_weights))
                g_loss = tf.reduce_mean(self.discriminator(fake, d_weights))
                self.d_op = tf.train.AdamOptimizer(1e-4).minimize(
                    d_loss, var_list=list(d_weights.values()))
                self.g_op = tf.train.AdamOptimizer(1e-4).minimize(
                    g_loss, var_list=list(g_weights.values()))
        """,
    "a head trained on features a call computes from data": """\
        import tensorflow as tf
        class Net:
            def build(self, x, y):
                head_weights = self.construct_head_weights()
                features = self.body(x)
                logits = self.head(features, head_weights)
                loss = tf.reduce_mean(tf.square(logits - y))
                self.op = tf.train.AdamOptimizer(1e-3).minimize(
                    loss, var_list=list(head_weights.values()))
        """,
    # neural-structured-learning (dev5 negatives): features, not weights,
    # split in two by a predicate and its `else`.
    "a dict of features split in two by an if and its else": """\
        import tensorflow as tf
        class Neighbor:
            def _split_dict(self, dictionary, predicate_fn):
                positives, negatives = {}, {}
                for key, value in dictionary.items():
                    if predicate_fn(value):
                        positives[key] = value
                    else:
                        negatives[key] = value
                return positives, negatives
            def gen(self, loss, dense_features):
                features, _ = self._split_dict(dense_features, self.is_float)
                return tf.gradients(loss, list(features.values()))
        """,
    # CHINESE-OCR (part 9b negatives): the library's collection and a
    # global step, both made from nothing, are not a model's groups.
    "every trainable variable beside a global step": """\
        import tensorflow as tf
        class Solver:
            def train(self, total_loss, opt):
                global_step = tf.Variable(0, trainable=False)
                log_image = self.build_image_summary()
                tvars = tf.trainable_variables()
                grads, norm = tf.clip_by_global_norm(
                    tf.gradients(total_loss, tvars), 10.0)
                self.show(tvars, log_image)
                return opt.apply_gradients(list(zip(grads, tvars)),
                                           global_step=global_step)
        """,
    # variational-continual-learning (part 4a negatives): synaptic
    # intelligence measures the shared layers' gradient beside the step
    # (`shared - old` is not a fast-weight move): another loss's lists.
    "a measured gradient beside the step is not a fast-weight move": """\
        import tensorflow as tf
        def construct_optimizer(bound, si_reg, old_params, lr_ph):
            t_vars = tf.trainable_variables()
            var_list = [var for var in t_vars if 'gen' in var.name]
            var_list = var_list + [var for var in t_vars if 'enc' in var.name]
            shared_var_list = [var for var in t_vars if 'gen_shared' in var.name]
            loss_task = -tf.reduce_mean(bound)
            si_loss = 0.0
            if old_params is not None:
                for i in range(len(si_reg)):
                    si_loss += tf.reduce_sum(
                        si_reg[i] * (shared_var_list[i] - old_params[i]) ** 2)
            opt = tf.train.AdamOptimizer(lr_ph).minimize(
                loss_task + si_loss, var_list=var_list)
            grad_shared = tf.gradients(-loss_task, shared_var_list)
            ops = [opt, bound, grad_shared]
            def train(sess, old_params, w_params):
                _, logp, grad = sess.run(ops)
                new_params = sess.run(shared_var_list)
                for i in range(len(w_params)):
                    w_params[i] += grad[i] * (new_params[i] - old_params[i])
                return logp, new_params, w_params
            return train
        """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_partition_trained_whole_is_not_reported(name):
  text = NEGATIVE[name]
  if isinstance(text, dict):
    assert [f for f in in_project(text) if f[0] == "var-list-filter"] == []
  else:
    assert in_text(text, "var-list-filter") == []
