"""`tfpartial scan`: a trained input under a mask (part 35f), judged by
what the code does. The mask is fixed only when what feeds or writes it
is shown fixed for the run, per loop (fed once before the loop, or from
what the loop does not bind anew; never a draw or a batch); every other
read of the variable must reach the loss through the same mask (a second
use or a regulariser of the variable itself trains the masked elements);
no name is read for what it says (a mask spelled otherwise is found, one
spelled `mask` and fed anew is not); the port is by hand, with its
reason; and the work grows linearly with the file."""

import os
import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan.idioms import _masks


# Every module of `_masks/` (the rule's and those it calls).
_MASKS = tuple(sorted(name for name in os.listdir(
    os.path.dirname(_masks.__file__)) if name.endswith(".py")))


def _found(code):
  return scanned.in_text(code, "stop-gradient-mix")


# The attack's frame: a perturbation trained alone, its product with a
# mask on the way into the model; `{mask}` and `{feed}` vary by case.
def _attack(mask, feed, extra=""):
  return ("import numpy as np\n" + mask + "\n"
          "delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)\n"
          "adv = image + delta * keep\n"
          "loss = -model(adv)[0, target]\n" + extra +
          "train = tf.train.AdamOptimizer(0.01).minimize(loss, "
          "var_list=[delta])\n" + textwrap.dedent(feed))


_PLACEHOLDER = "keep = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])"

FOUND = {
    # inspire-group OptCarlini: the feed dict is built once, before the
    # loop that runs the step, from the task's mask.
    "fed once before the loop": (_attack(_PLACEHOLDER, """\
        def optimize(sess, x, region, n_step):
          feed_dict = {image: x, keep: np.repeat(region, 3, axis=3)}
          for step in range(n_step):
            sess.run(train, feed_dict=feed_dict)
        """), 4),
    # jinyier: fed in the loop, from a name the loop does not bind.
    "fed in the loop from a name bound before it": (_attack(_PLACEHOLDER, """\
        def attack(sess, files):
          for fn in files:
            allowed = np.ones([1, 32, 32, 3], dtype=np.float32)
            cloud = load(fn)
            for it in range(100):
              sess.run(train, feed_dict={image: cloud, keep: allowed})
        """), 4),
    # jinyier: a mask made for each file, fed to the steps of that file's
    # loop and, after it, to fetch the result (per run, not per step).
    "fed per file, around the training loop": (_attack(_PLACEHOLDER, """\
        def attack(sess, files):
          for fn in files:
            allowed = np.ones([1, 32, 32, 3], dtype=np.float32)
            for it in range(100):
              sess.run(train, feed_dict={image: fn, keep: allowed})
            result = sess.run(adv, feed_dict={image: fn, keep: allowed})
        """), 4),
    # A fill of zeros fed to evaluate beside the loop: the same each step.
    "fed a fill to evaluate, a fixed mask to train": (_attack(_PLACEHOLDER, """\
        def features(sess, points):
          return sess.run(loss, {image: points, keep: np.zeros([1, 32])})

        def attack(sess, cloud, allowed):
          sess.run(init)
          for it in range(100):
            sess.run(train, feed_dict={image: cloud, keep: allowed})
        """), 4),
    # Carlini's L0: a mask variable assigned from a placeholder fed in a
    # setup run before the loop; shrunk between rounds, not in them.
    "a mask variable set before the loop": (_attack(
        "keep = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)\n"
        "set_keep = tf.placeholder(tf.float32, [1, 32, 32, 3])\n"
        "setup = [tf.assign(keep, set_keep)]", """\
        def doit(sess, valid):
          sess.run(setup, {set_keep: valid})
          for step in range(1000):
            sess.run(train)
        """), 6),
    # No name says it is a mask: an array loaded from a file, no `1 - m`
    # beside it, no flag.
    "an array loaded once, spelled as no mask": (_attack(
        "keep = np.load('region.npy')", ""), 4),
    # The variable is also written, fetched, initialised and asked for
    # its optimizer slot: none of those reaches the loss.
    "other reads only write, fetch, list or save it": (_attack(
        "keep = np.load('region.npy')", """\
        clip = tf.assign(delta, tf.clip_by_value(delta, -0.1, 0.1))
        init = tf.variables_initializer([delta])
        slots = [opt.get_slot(delta, n) for n in opt.get_slot_names()]
        grad = tf.gradients(loss, [delta])[0]
        def step(sess):
          sess.run(train)
          return sess.run(delta)
        """), 4),
    # OptCarlini: the difference is rebound to its masked product; its
    # norm then reads the masked value.
    "rebound to the masked product, its norm read after": ("""\
        class Opt:
          def __init__(self, model, shape):
            self.x = tf.placeholder(tf.float32, shape=shape)
            self.m = tf.placeholder(tf.float32, shape=(1, 32, 32, 3))
            self.w = tf.Variable(np.zeros((1, 32, 32, 3)), dtype=tf.float32)
            self.d = 0.5 * (tf.tanh(self.w) + 1) - self.x
            self.d = tf.multiply(self.d, self.m)
            self.x_in = self.x + self.d
            self.f = model(self.x_in) + tf.norm(self.d)
            self.opt = tf.train.AdamOptimizer().minimize(
                self.f, var_list=[self.w])

          def optimize(self, sess, x, mask, n_step):
            feed = {self.x: x, self.m: mask}
            for step in range(n_step):
              sess.run(self.opt, feed_dict=feed)
        """, 7),
}

def _spelled(code):
  """The case with its mask spelled as one (`l0_mask`): the spelling is
  no evidence either way."""
  return code.replace("keep", "l0_mask")


SILENT = {
    # `self.mask` fed a new random draw in the feed dict of each step.
    "a mask on self fed a draw each step": """\
        class Attack:
          def __init__(self, model):
            self.mask = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
            self.delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
            adv = image + self.delta * self.mask
            self.train = tf.train.AdamOptimizer().minimize(
                -model(adv)[0, 1], var_list=[self.delta])

          def run(self, sess):
            for step in range(100):
              sess.run(self.train, feed_dict={
                  self.mask: np.random.binomial(1, 0.9, [1, 32, 32, 3])})
        """,
    # A feed dict built item by item inside the loop, a mask per step.
    "a feed dict filled item by item in the loop": _attack(_PLACEHOLDER, """\
        feed = {}
        for i in range(100):
          feed[image] = images[i]
          feed[keep] = masks[i]
          sess.run(train, feed_dict=feed)
        """),
    # A padding mask whose batch axis is fixed, fed with each batch.
    "a padding mask of a fixed batch, fed per batch": _attack(
        "keep = tf.placeholder(tf.float32, shape=[64, 50, 1])", """\
        for batch in batches:
          sess.run(train, {image: batch.x, keep: batch.mask})
        """),
    # A mask spelled `mask` fed the batch's mask: the spelling is no
    # evidence; the feed is new each step.
    "a mask named so, fed from a loader": _attack(
        "keep = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])\n"
        "use_mask = True", """\
        for step in range(100):
          x, m = loader.next_batch()
          if use_mask:
            sess.run(train, {image: x, keep: m})
        """),
    # A mask variable written the batch's mask in the loop.
    "a mask variable written in the loop": _attack(
        "keep = tf.Variable(np.ones([1, 32, 32, 3]), dtype=tf.float32)\n"
        "keep_in = tf.placeholder(tf.float32, [1, 32, 32, 3])\n"
        "set_keep = tf.assign(keep, keep_in)", """\
        for step, (x, m) in enumerate(data):
          sess.run(set_keep, {keep_in: m})
          sess.run(train, {image: x})
        """),
    # A placeholder no code feeds: nothing shows it fixed.
    "a mask placeholder nothing feeds": _attack(_PLACEHOLDER, ""),
    # A step method called in a loop with a mask drawn in each turn.
    "a step method called with a mask drawn each turn": """\
        class Net:
          def __init__(self, model):
            self.keep = tf.placeholder(tf.float32, shape=[1, 1024, 3])
            raw = tf.get_variable("raw", shape=[1, 1024, 3])
            self.x = self.x_clean + tf.tanh(raw) * self.keep
            self.train = tf.train.AdamOptimizer().minimize(
                -model(self.x), var_list=[raw])

          def train_fn(self, x, mask):
            self.sess.run(self.train, {self.x_clean: [x], self.keep: [mask]})

        def attack(net, x):
          for i in range(100):
            mask = np.random.rand(1024, 3) > 0.5
            net.train_fn(x, mask)
        """,
    # The variable also enters the model unmasked: all of it trains.
    "a second use of the variable, unmasked": _attack(
        "keep = np.load('region.npy')", "",
        "loss += -model(image + delta)[0, target]\n"),
    # A regulariser of the variable itself pulls the masked elements.
    "a regulariser of the variable itself": _attack(
        "keep = np.load('region.npy')", "",
        "loss = loss + 0.1 * tf.nn.l2_loss(delta - disguise)\n"),
    # The patch read under the mask and under its complement (an
    # overlay): every element reaches the loss.
    "the variable under the mask and under its complement": """\
        import numpy as np
        keep = np.load("peace.npy")
        patch = tf.get_variable("patch", [32, 32, 3])
        modified = patch * (1 - keep) + (1 + patch) * keep * overlay
        loss = -model(image + modified)[0, 1]
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, var_list=[patch])
        """,
    # GAN inversion: the latent is trained whole, no mask.
    "a latent searched whole (GAN inversion)": """\
        z = tf.Variable(tf.random_normal([1, 128]))
        recon = generator(z) * 1.0
        loss = tf.reduce_mean(tf.square(recon - target))
        train = tf.train.AdamOptimizer().minimize(loss, var_list=[z])
        """,
    # Style transfer: the whole image variable trains; the content mask
    # weights only the loss.
    "style transfer of a whole image": """\
        import numpy as np
        content_mask = np.load("content.npy")
        img = tf.Variable(content_image)
        feats = vgg(img)
        loss = tf.reduce_sum(content_mask * tf.square(feats - target))
        train = tf.train.AdamOptimizer().minimize(loss, var_list=[img])
        """,
    # VQ-VAE's straight-through copy: a stop_gradient, no fixed mask.
    "a VQ-VAE straight-through": """\
        codebook = tf.Variable(tf.random_normal([512, 64]))
        z_q = z_e + tf.stop_gradient(tf.gather(codebook, idx) * 1.0 - z_e)
        loss = tf.reduce_mean(tf.square(decoder(z_q) - x))
        train = tf.train.AdamOptimizer().minimize(loss, var_list=[codebook])
        """,
    # MADE: a mask compared from degrees, multiplied into a weight.
    "a MADE mask from degrees": """\
        import numpy as np
        d_in = np.arange(8)
        d_out = np.arange(16) % 7
        made = (d_out[:, None] >= d_in[None, :]).astype(np.float32)
        W = tf.Variable(tf.zeros([16, 8]))
        h = tf.matmul(W * made, x)
        train = tf.train.AdamOptimizer().minimize(nll(h), var_list=[W])
        """,
}


# Spelled as masks (`l0_mask`), so that no spelling keeps them silent.
for _name in ['a feed dict filled item by item in the loop',
              'a padding mask of a fixed batch, fed per batch',
              'a mask named so, fed from a loader',
              'a mask variable written in the loop',
              'a mask placeholder nothing feeds',
              'a step method called with a mask drawn each turn',
              'a second use of the variable, unmasked',
              'a regulariser of the variable itself']:
  SILENT[_name] = _spelled(SILENT[_name])


@pytest.mark.parametrize("name", sorted(FOUND))
def test_a_mask_shown_fixed_is_found(name):
  code, line = FOUND[name]
  assert _found(code) == [("stop-gradient-mix", line)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_a_mask_not_shown_fixed_or_bypassed_is_silent(name):
  assert _found(SILENT[name]) == []


def test_a_step_method_called_with_a_fixed_mask_is_found():
  # Daniel-Liu's sticks: the feed is in a method the attack calls in a
  # loop, from a mask it makes once, before the loop (another file).
  files = {
      "net.py": """\
          class Net:
            def __init__(self, model):
              self.keep = tf.placeholder(tf.float32, shape=[1, 1024, 3])
              raw = tf.get_variable("raw", shape=[1, 1024, 3])
              self.x = self.x_clean + tf.tanh(raw) * self.keep
              self.train = tf.train.AdamOptimizer().minimize(
                  -model(self.x), var_list=[raw])

            def train_fn(self, x, mask):
              self.sess.run(self.train, {self.x_clean: [x],
                                         self.keep: [mask]})
          """,
      "attack.py": """\
          import numpy as np

          def attack(net, x, top):
            mask = np.zeros(x.shape)
            mask[top, :] = 1.0
            for i in range(100):
              net.train_fn(x, mask)
          """}
  assert scanned.in_project(files) == [("stop-gradient-mix", "net.py", 5)]


def test_the_port_of_a_masked_input_is_by_hand_with_its_reason():
  code, _ = FOUND["an array loaded once, spelled as no mask"]
  findings = [f for f in _scan.scan_text("m.py", code)
              if f.idiom == "stop-gradient-mix"]
  assert len(findings) == 1
  assert not findings[0].edits
  reason = findings[0].by_hand
  assert "so the product stays" in reason and "tfpartial.freeze(" in reason
  assert "use the variable itself" not in reason
  assert "keep the masked product" in findings[0].port


def _attacks(n):
  """`n` attacks in one file, each a perturbation under a mask (loaded,
  or a placeholder fed in the one loop), all named `adv` and `loss`."""
  blocks = "".join(
      (f"keep{i} = np.load('r{i}.npy')\n" if i % 2 else
       f"keep{i} = tf.placeholder(tf.float32, [1, 8])\n") +
      f"delta{i} = tf.Variable(np.zeros([1, 8]), dtype=tf.float32)\n"
      f"adv = image + delta{i} * keep{i}\n"
      f"loss = -model(adv)[0, 1] + tf.reduce_sum(adv * w)\n"
      f"train{i} = tf.train.AdamOptimizer().minimize(loss, "
      f"var_list=[delta{i}])\n" for i in range(n))
  feed = "feed = {" + ", ".join(f"keep{i}: region{i}"
                                for i in range(0, n, 2)) + "}\n"
  return ("import numpy as np\n" + blocks + feed +
          "for step in range(100):\n  sess.run(train0, feed_dict=feed)\n")


def _work(text):
  """The calls the scan of `text` makes in all of `_masks/`."""
  return scanned.calls_made(lambda: _scan.scan_project(
      [_files.Source("big.py", text)]), _MASKS)[0]


def test_the_work_grows_linearly_with_the_products():
  # Was quadratic: each product walked its scope again for each name it
  # asked about (x15 at 4N on t57-sgm).
  small, large = (_work(_attacks(n)) for n in (12, 48))
  assert large <= 6 * small, (small, large)
