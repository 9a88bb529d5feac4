"""`tfpartial scan` on code that looks like a hand-made freeze and is not
one (part eleven's negatives): a GAN's two halves trained by one
comprehension over their groups, or by one helper called once per half;
a critic's weights clipped after its step and set back; a perceptual
loss's network run on what the generator made; an input optimised to
show what a model sees; a gradient fetched only to look at; the one
variable of a graph a script built anew. Beside them, the forms that are
a freeze and stay found. The sources are synthetic, in the shape of the
real code."""

import pytest

from tests.tools.scanned import in_text

FOUND = {
    # Saved values clipped, then written into the variable after its
    # step: a write-back still (twin of the clip in place below).
    "saved values clipped and written after the step": ("""\
        import tensorflow as tf
        def train(model_list, optimizer_list, data, n_e, period, w_sup):
            saved = tf.identity(model_list[0].weights[-2])
            for count, (x, y) in enumerate(data):
                countp = count % period
                grads_list = []
                for e in range(n_e):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model_list[e](x) - y)
                    grads_list.append(tape.gradient(
                        loss, model_list[e].trainable_variables))
                optimizer_list[countp].apply_gradients(zip(
                    grads_list[countp], model_list[countp].trainable_variables))
                model_list[countp].weights[-2].assign(
                    tf.clip_by_value(saved, -w_sup, w_sup))
        """, [("write-back", 14)]),
    # A helper filtering by the prefix it is given, called once: the
    # head trains, the rest is frozen.
    "a helper called for one prefix": ("""\
        import tensorflow as tf
        loss = tf.reduce_mean(out)
        def optimizer(loss, prefix):
            optim = tf.train.AdamOptimizer(learning_rate=0.001)
            var_list = [v for v in tf.trainable_variables()
                        if v.name.startswith(prefix)]
            gradient = optim.compute_gradients(loss, var_list=var_list)
            return optim.apply_gradients(gradient)
        train_head = optimizer(loss, 'head')
        """, [("var-list-filter", 5)]),
    # Values saved before training put back into some rows after each
    # step: a write-back, though the weights are read out after the step.
    "saved rows put back into the weights read after the step": ("""\
        class Trainer:
            def train(self, x, y, epochs):
                saved = self.model.layers[0].get_weights()
                for epoch in range(epochs):
                    self.model.train_on_batch(x, y)
                    weights = self.model.layers[0].get_weights()
                    weights[0][:5] = saved[0][:5]
                    self.model.layers[0].set_weights(weights)
        """, [("write-back", 8)]),
    # A pretrained network run in inference mode on the data: a frozen
    # backbone under a trained head.
    "a backbone run on the data, its head trained": ("""\
        import tensorflow as tf
        from nets import vgg_19
        class Classifier:
            def __init__(self):
                self.features = vgg_19(inputs=self.images, is_training=False)
                self.logits = tf.layers.dense(self.features, 10, name="head")
                self.head_vars = tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, scope="head")
                self.loss = tf.reduce_mean(tf.square(self.logits - self.y))
                self.train_op = tf.train.AdamOptimizer(1e-4).minimize(
                    loss=self.loss, var_list=self.head_vars)
        """, [("var-list-filter", 7)]),
    # handson-ml 15_autoencoders: the second phase trains the outer
    # layers of the graph it builds; the first layer, of the same graph,
    # is left out (an earlier graph's variables do not count).
    "some variables of the graph built since the last reset": ("""\
        import tensorflow as tf
        def reset_graph():
            tf.reset_default_graph()
        reset_graph()
        other = tf.Variable(tf.zeros([3]))
        reset_graph()
        weights1 = tf.Variable(tf.zeros([784, 300]))
        weights2 = tf.Variable(tf.zeros([300, 10]))
        loss = tf.reduce_mean(tf.matmul(tf.matmul(x, weights1), weights2))
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[weights2])
        """, [("var-list-filter", 10)]),
}

NOT_FOUND = {
    # IBM IRM-games IRM_methods.py: each environment's model clipped in
    # place after its turn's step, a projection of every weight.
    "a variable clipped in place by its own op after its step": """\
        import tensorflow as tf
        def train(model_list, optimizer_list, data, n_e, period, w_sup):
            for count, (x, y) in enumerate(data):
                countp = count % period
                grads_list = []
                for e in range(n_e):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model_list[e](x) - y)
                    grads_list.append(tape.gradient(
                        loss, model_list[e].trainable_variables))
                optimizer_list[countp].apply_gradients(zip(
                    grads_list[countp], model_list[countp].trainable_variables))
                model_list[countp].weights[-2].assign(tf.clip_by_value(
                    model_list[countp].weights[-2], -w_sup, w_sup))
        """,
    # provenclei/tensorflow_cv p78_GAN_mnist.py: one comprehension makes a
    # step per loss, each for its own group.
    "a GAN's groups, one step per loss in a comprehension": """\
        import tensorflow as tf
        def compute_grads(opt, losses):
            every = tf.trainable_variables()
            vars_disc = [v for v in every if 'disc' in v.name]
            vars_gene = [v for v in every if 'gene' in v.name]
            groups = [vars_disc, vars_disc, vars_gene]
            return [opt.compute_gradients(loss, vs)
                    for vs, loss in zip(groups, losses)]
        """,
    # Salon-sai/learning-tensorflow lesson7/ebgan.py: the helper filters
    # by the prefix it is given; the generator's loss and the
    # discriminator's each train their own half.
    "a GAN's halves, one helper called per loss and prefix": """\
        import tensorflow as tf
        d_loss = tf.reduce_mean(d_out)
        g_loss = tf.reduce_mean(g_out)
        def optimizer(loss, d_or_g):
            optim = tf.train.AdamOptimizer(learning_rate=0.001, beta1=0.5)
            var_list = [v for v in tf.trainable_variables()
                        if v.name.startswith(d_or_g)]
            gradient = optim.compute_gradients(loss, var_list=var_list)
            return optim.apply_gradients(gradient)
        train_g = optimizer(g_loss, 'Loss/Generator')
        train_d = optimizer(d_loss, 'Loss/Discriminator')
        """,
    # ANTsPyNet create_wasserstein_gan_model.py: a WGAN's critic clipped
    # after its step, a constraint on every weight, nothing saved.
    "a critic's weights clipped after its step": """\
        import numpy as np
        class WGAN:
            def train(self, x_train, epochs, batch_size=128):
                valid = -np.ones((batch_size, 1))
                for epoch in range(epochs):
                    for c in range(self.critic_iterations):
                        d_loss = self.critic.train_on_batch(x_train, valid)
                        for i in range(len(self.critic.layers)):
                            weights = self.critic.layers[i].get_weights()
                            for j in range(len(weights)):
                                weights[j] = np.clip(weights[j], -self.clip,
                                                     self.clip)
                            self.critic.layers[i].set_weights(weights)
                    self.combined.train_on_batch(x_train, valid)
        """,
    # MakeItTalk image_translation.py: a perceptual loss's VGG, a
    # function told it does not train, run on what the generator made.
    "a perceptual loss's network run on the generator's output": """\
        import tensorflow as tf
        from nets import vgg_19, generator_network
        class Translator:
            def __init__(self):
                self.predicted = generator_network(self.source,
                                                   is_training=True,
                                                   scope="translator")
                self.real = vgg_19(inputs=self.target, is_training=False)
                self.fake = vgg_19(inputs=self.predicted, is_training=False,
                                   reuse=True)
                self.generator_vars = tf.get_collection(
                    tf.GraphKeys.TRAINABLE_VARIABLES, scope="translator")
                self.loss = tf.reduce_mean(tf.abs(self.real - self.fake))
                self.train_op = tf.train.AdamOptimizer(1e-4).minimize(
                    loss=self.loss, var_list=self.generator_vars)
        """,
    # tf-keras-vis activation_maximization: variables made of the seed
    # inputs, the model called on them, set to the modified inputs
    # before each step.
    "an input optimised to maximise an activation": """\
        import tensorflow as tf
        class ActivationMaximization:
            def __call__(self, score, seed_inputs, steps, optimizer):
                input_values = seed_inputs
                input_variables = [tf.Variable(x) for x in input_values]
                for step in range(steps):
                    for i, modifier in enumerate(self.input_modifiers):
                        input_values[i] = modifier(input_values[i])
                    for v, x in zip(input_variables, input_values):
                        v.assign(x)
                    with tf.GradientTape() as tape:
                        input_values = [v.value() for v in input_variables]
                        score_values = score(self.model(input_values))
                    grads = tape.gradient(score_values, input_variables)
                    optimizer.apply_gradients(zip(grads, input_variables))
                    input_values = [v.value() for v in input_variables]
                return input_values
        """,
    # brando90/hbf_tensorflow_code print_gradients.py: the gradient of
    # one variable fetched to look at, beside the step training all.
    "a gradient of one variable fetched to print": """\
        import tensorflow as tf
        w = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        train_step = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
        optimizer = tf.train.GradientDescentOptimizer(1.0)
        with tf.Session() as sess:
            for i in range(1000):
                grads_and_vars = optimizer.compute_gradients(loss, [w])
                (gradient, variable) = grads_and_vars[0]
                print(sess.run(gradient, feed_dict={x: xs, y: ys}))
        """,
    # Open3D-ML semantic_segmentation.py: every weight in one of two
    # groups by an if/else, both trained, one at a tenth of the rate.
    "two branches' groups, each trained at its own rate": """\
        import tensorflow as tf
        class Pipeline:
            def run_train(self, model, loader):
                for inputs in loader:
                    with tf.GradientTape(persistent=True) as tape:
                        loss = model.get_loss(model(inputs), inputs)
                    scaled_params, params = [], []
                    for val in model.trainable_weights:
                        if 'deform' in val.name:
                            scaled_params.append(val)
                        else:
                            params.append(val)
                    grads = tape.gradient(loss, params)
                    scaled = [0.1 * g for g in tape.gradient(loss, scaled_params)]
                    self.optimizer.apply_gradients(zip(grads, params))
                    self.optimizer.apply_gradients(zip(scaled, scaled_params))
        """,
    # handson-ml 09_up_and_running: each cell builds its own graph after
    # `reset_graph()`; the gradient is of the one variable of its graph.
    "the one variable of the graph built since the last reset": """\
        import tensorflow as tf
        def reset_graph():
            tf.reset_default_graph()
        reset_graph()
        theta = tf.Variable(tf.zeros([9, 1]))
        mse = tf.reduce_mean(tf.square(tf.matmul(X, theta) - y))
        gradients = tf.gradients(mse, [theta])[0]
        training_op = tf.assign(theta, theta - 0.01 * gradients)
        with tf.Session() as sess:
            for epoch in range(100):
                sess.run(training_op)
        reset_graph()
        w1 = tf.Variable(tf.random_normal((3, 1)))
        w2 = tf.Variable(tf.random_normal((3, 1)))
        z = tf.matmul(x, w1) + tf.matmul(x, w2)
        """,
}


@pytest.mark.parametrize("name", sorted(FOUND))
def test_the_freeze_beside_a_look_alike_is_found(name):
  text, expected = FOUND[name]
  idioms = {idiom for idiom, _ in expected}
  assert [f for f in in_text(text) if f[0] in idioms] == expected


@pytest.mark.parametrize("name", sorted(NOT_FOUND))
def test_a_look_alike_is_not_reported(name):
  assert in_text(NOT_FOUND[name]) == []
