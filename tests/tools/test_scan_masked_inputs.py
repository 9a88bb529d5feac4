"""`tfpartial scan`: a trained input (an attack's perturbation, modifier
or patch) multiplied in the forward pass by a mask fixed while it trains
(part 35f: Carlini's L0 `canchange`, a sign mask fed to a placeholder, an
L0 mask of a point cloud, a peace-sign mask loaded from an image): the
masked-out elements reach neither the model nor the loss and never
train, so `stop-gradient-mix` at the product; and the look-alikes that
freeze nothing: a dropout mask drawn each step, a placeholder fed a
random draw, a mask on activations or with a batch axis, a triangle, a
mask on a constant, a loss mask, a scalar, a trained gate, a
straight-through estimator, a mask variable trained too, a product only
summarised or evaluated, a whole variable trained alone."""

import pytest

import scanned


def _found(code):
  return scanned.in_text(code, "stop-gradient-mix")


POSITIVE = {
    # huanzhang12/ZOO-Attack l0_attack.py 103 (Carlini's L0 attack): the
    # mask is a variable no step trains, assigned from a placeholder once
    # per run; its complement keeps the original image.
    "a modifier under a mask variable set from a placeholder": ("""\
        import numpy as np

        def gradient_descent(sess, model, shape):
          modifier = tf.Variable(np.zeros(shape, dtype=np.float32))
          canchange = tf.Variable(np.zeros(shape), dtype=np.float32)
          simg = tf.Variable(np.zeros(shape, dtype=np.float32))
          original = tf.Variable(np.zeros(shape, dtype=np.float32))
          assign_canchange = tf.placeholder(np.float32, shape)
          setup = [tf.assign(canchange, assign_canchange)]
          newimg = (tf.tanh(modifier + simg) / 2) * canchange + (
              1 - canchange) * original
          output = model.predict(newimg)
          loss = tf.reduce_sum(output) + tf.reduce_sum(tf.square(newimg))
          optimizer = tf.train.AdamOptimizer(0.01)
          train = optimizer.minimize(loss, var_list=[modifier])

          def doit(valid):
            sess.run(setup, {assign_canchange: valid})
            for step in range(1000):
              sess.run(train)
          return doit
        """, [("stop-gradient-mix", 10)]),
    # inspire-group/advml-traffic-sign OptCarlini.py 115: the sign's mask
    # is a placeholder made under `if self.use_mask`; the list is kept on
    # `self` and minimised in another method.
    "a change of variable masked by a placeholder, the list on self": ("""\
        class OptCarlini:
          def _setup_opt(self):
            self.optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
            self.opt = self.optimizer.minimize(self.f,
                                               var_list=self.var_list)

          def __init__(self, model, use_mask=True):
            self.model = model
            self.use_mask = use_mask
            self.x = K.placeholder(dtype='float32', shape=(1, 32, 32, 3))
            if self.use_mask:
              self.m = K.placeholder(dtype='float32', shape=(1, 32, 32, 3))
            self.w = tf.Variable(initial_value=init_val, trainable=True,
                                 dtype=tf.float32)
            x_full = 0.5 * (tf.tanh(self.w) + 1)
            self.d = x_full - self.x
            if self.use_mask:
              self.d = tf.multiply(self.d, self.m)
            self.x_in = self.x + self.d
            self.var_list = [self.w]
            model_output = self.model(self.x_in)
            self.f = tf.reduce_sum(model_output) + tf.norm(self.d)
            self._setup_opt()

          def optimize(self, sess, x, mask, n_step=1000):
            feed_dict = {self.x: x, self.m: mask}
            for step in range(n_step):
              sess.run(self.opt, feed_dict=feed_dict)
        """, [("stop-gradient-mix", 18)]),
    # Daniel-Liu-c0deb0t pointnet_interface.py 88: a mask placeholder of
    # the cloud's shape times the variable's step away from the cloud.
    "a point cloud's sticks under a mask placeholder": ("""\
        class PointNet:
          def __init__(self, model):
            self.x_clean = tf.placeholder(tf.float32, shape=[1, 1024, 3])
            self.x_mask = tf.placeholder(tf.float32, shape=[1, 1024, 3])
            raw = tf.get_variable("raw", dtype=tf.float32,
                                  shape=[1, 1024, 3])
            self.x_sticks = self.x_clean + 0.5 * tf.tanh(
                raw - self.x_clean) * self.x_mask
            logits = model.get_model(self.x_sticks)
            loss = model.get_loss(logits)
            optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
            self.train = optimizer.minimize(-loss, var_list=[raw])

          def train_fn(self, x, mask):
            self.sess.run(self.train, {self.x_clean: [x], self.x_mask: [mask]})

        def attack(net, x, top):
          mask = np.zeros(x.shape)
          mask[top, :] = 1.0
          for i in range(100):
            net.train_fn(x, mask)
        """, [("stop-gradient-mix", 7)]),
    # jinyier/ai_pointnet_attack attack.py 48: the graph's function returns
    # the variable in a dict; another function trains `tensors['pert']`.
    "a perturbation under an L0 mask, trained through a dict": ("""\
        import numpy as np

        def load_graph(n):
          graph = tf.Graph()
          with graph.as_default():
            cloud = tf.placeholder(tf.float32, shape=(n, 3))
            l0_mask_pl = tf.placeholder(tf.float32, shape=(n,))
            l0_mask = tf.stack([l0_mask_pl] * 3, axis=-1)
            perturb = tf.Variable(np.zeros((n, 3)), dtype=tf.float32)
            perturb_masked = perturb * l0_mask
            pointcloud = tf.math.add(cloud, perturb_masked)
            sampled = random_sample_pointcloud(pointcloud, 512)
            tensors = {'cloud': cloud, 'pert': perturb, 'l0': l0_mask_pl}
          return graph, tensors

        def build_attack(n):
          graph, tensors = load_graph(n)
          with graph.as_default():
            attack_loss = tf.add_n(losses(graph))
            optimizer = tf.train.AdamOptimizer(learning_rate=0.01)
            train_step = optimizer.minimize(attack_loss,
                                            var_list=[tensors['pert']])
          return train_step

        def attack(sess, n, clouds):
          for cloud in clouds:
            l0_mask = np.ones(n, dtype=np.float32)
            for it in range(100):
              sess.run(train_step, feed_dict={tensors['cloud']: cloud,
                                              tensors['l0']: l0_mask})
        """, [("stop-gradient-mix", 10)]),
    # StylishTriangles/adversarial_patch model_state.py 201: the mask is
    # an image a helper loads from a file.
    "a patch under a mask loaded from an image": ("""\
        import numpy as np
        import PIL.Image

        def get_peace_mask(shape):
          pic = PIL.Image.open("peace_sign.png").resize(shape[:2])
          return np.array(pic.getdata()).reshape(shape) / 255.0

        class ModelContainer:
          def make_graph(self, M):
            patch = tf.get_variable("patch", self.patch_shape,
                                    dtype=tf.float32)
            mask = get_peace_mask(self.patch_shape)
            modified_patch = patch * (1 - mask) - np.ones(
                self.patch_shape) * mask
            clipped = clip_to_valid_image(modified_patch)
            model = M(input_tensor=overlay(self.image, clipped))
            self._loss = tf.reduce_mean(model.outputs[0])
            self._train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
                self._loss, var_list=[patch])
        """, [("stop-gradient-mix", 13)]),
    # The attack's patch pasted into an image under a loaded mask (once a
    # silent case of test_scan_forward_masks: under part 35f's standard
    # the patch's elements outside the mask never train).
    "a perturbation pasted into an input under a loaded mask": ("""\
        import numpy as np
        patch_mask = np.load("patch_mask.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        adv = image * (1 - patch_mask) + delta * patch_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """, [("stop-gradient-mix", 4)]),
    # TF2: the tape's sources name the perturbation alone.
    "a perturbation under a loaded mask, trained by a tape": ("""\
        import numpy as np
        region_mask = np.load("region.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        opt = tf.keras.optimizers.Adam(0.01)
        for step in range(100):
          with tf.GradientTape() as tape:
            adv = image + delta * region_mask
            loss = -model(adv)[0, target]
          grads = tape.gradient(loss, [delta])
          opt.apply_gradients(zip(grads, [delta]))
        """, [("stop-gradient-mix", 7)]),
}


SILENT = {
    # Dropout on the perturbation: a new mask drawn every step.
    "a dropout mask drawn each step": """\
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        drop_mask = tf.cast(tf.random.uniform([1, 32, 32, 3]) < 0.5,
                            tf.float32)
        adv = image + delta * drop_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """,
    # A placeholder mask fed a random draw with each batch (DropConnect).
    "a mask placeholder fed a random draw": """\
        import numpy as np
        keep_mask = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        adv = image + delta * keep_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        for i in range(100):
          sess.run(train_op, feed_dict={
              keep_mask: np.random.binomial(1, 0.5, [1, 32, 32, 3])})
        """,
    # An attention or padding mask on activations, the weights listed.
    "a padding mask on activations": """\
        seq_mask = tf.placeholder(tf.float32, shape=[None, 50, 1])
        W = tf.Variable(tf.zeros([64, 64]))
        b = tf.Variable(tf.zeros([64]))
        h = tf.matmul(x, W) * seq_mask
        out = tf.nn.relu(h + b) * seq_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(out)), var_list=[W, b])
        """,
    # A sequence mask with a batch axis on a listed embedding plus input.
    "a batch's mask on a learned position table": """\
        pad_mask = tf.placeholder(tf.float32, shape=[None, 50, 1])
        pos = tf.Variable(tf.zeros([1, 50, 64]))
        h = (inputs + pos) * pad_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(h)), var_list=[pos])
        """,
    # A causal (band) mask: the shape of a parametrization.
    "a triangular mask from band_part": """\
        delta = tf.Variable(tf.zeros([8, 8]))
        tri_mask = tf.linalg.band_part(tf.ones([8, 8]), -1, 0)
        adv = image + delta * tri_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """,
    # The mask multiplies the constant image, not the variable.
    "a mask on a gradient-free constant": """\
        import numpy as np
        region_mask = np.load("region.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        adv = image * region_mask + delta
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """,
    # A loss mask: the masked residual is only reduced into the loss.
    "a loss mask on the variable's residual": """\
        import numpy as np
        known_mask = np.load("known.npy")
        img = tf.Variable(tf.zeros([1, 64, 64, 3]))
        loss = tf.reduce_sum(known_mask * tf.square(img - observed))
        train_op = tf.train.AdamOptimizer().minimize(
            loss + tv(img), var_list=[img])
        """,
    # A whole variable times a scalar fed each run.
    "a whole variable times a scalar": """\
        eps_mask = tf.placeholder(tf.float32, shape=[])
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        adv = image + delta * eps_mask
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """,
    # Neural Cleanse: the mask is trained with the pattern (a gate).
    "a trained gate over a trained pattern": """\
        mask_var = tf.Variable(tf.zeros([1, 32, 32, 1]))
        pattern_var = tf.Variable(tf.zeros([1, 32, 32, 3]))
        mask = tf.tanh(mask_var) / 2 + 0.5
        pattern = tf.tanh(pattern_var) / 2 + 0.5
        adv = (1 - mask) * image + mask * pattern
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)) + tf.reduce_sum(tf.abs(mask)),
            var_list=[mask_var, pattern_var])
        """,
    # The mask variable is listed too: trained, no fixed mask.
    "a mask variable trained with the modifier": """\
        import numpy as np
        modifier = tf.Variable(np.zeros(shape, dtype=np.float32))
        canchange = tf.Variable(np.ones(shape, dtype=np.float32))
        newimg = tf.tanh(modifier) * canchange + (1 - canchange) * original
        train = tf.train.AdamOptimizer().minimize(
            loss(model.predict(newimg)), var_list=[modifier, canchange])
        """,
    # A straight-through estimator: the product is inside stop_gradient.
    "a straight-through estimator": """\
        import numpy as np
        bin_mask = np.load("bins.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        hard = delta + tf.stop_gradient(delta * bin_mask - delta)
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(hard)), var_list=[delta])
        """,
    # The masked product only drawn in a summary.
    "a masked product only summarised": """\
        import numpy as np
        region_mask = np.load("region.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        tf.summary.image("masked", delta * region_mask)
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(image + delta)), var_list=[delta])
        """,
    # An EMA shadow under a mask, read beside a whole trained perturbation.
    "an EMA shadow under a mask": """\
        import numpy as np
        region_mask = np.load("region.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        shadow = tf.Variable(tf.zeros([1, 32, 32, 3]), trainable=False)
        ema_op = tf.assign(shadow, 0.99 * shadow + 0.01 * delta)
        smooth = model(image + shadow * region_mask)
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(image + delta)), var_list=[delta])
        """,
    # A GAN's two halves, each trained whole, a dropout on activations.
    "a GAN's halves with a mask on activations": """\
        g_w = tf.Variable(tf.zeros([100, 784]))
        d_w = tf.Variable(tf.zeros([784, 1]))
        drop_mask = tf.placeholder(tf.float32, shape=[None, 784])
        fake = tf.nn.tanh(tf.matmul(z, g_w)) * drop_mask
        d_loss = loss(tf.matmul(real, d_w), tf.matmul(fake, d_w))
        g_loss = loss(tf.matmul(fake, d_w))
        d_op = tf.train.AdamOptimizer().minimize(d_loss, var_list=[d_w])
        g_op = tf.train.AdamOptimizer().minimize(g_loss, var_list=[g_w])
        """,
    # A whole perturbation trained alone (no mask).
    "a whole perturbation trained alone": """\
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        adv = tf.clip_by_value(image + delta, 0, 1)
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(adv)), var_list=[delta])
        """,
    # A mask read only in a function that evaluates.
    "a masked perturbation only evaluated": """\
        import numpy as np
        region_mask = np.load("region.npy")
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        train_op = tf.train.AdamOptimizer().minimize(
            loss(model(image + delta)), var_list=[delta])

        def evaluate_masked():
          return model(image + delta * region_mask)
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_masked_trained_input_is_found(name):
  code, expected = POSITIVE[name]
  assert _found(code) == expected


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_look_alike_stays_silent(name):
  assert _found(SILENT[name]) == []
