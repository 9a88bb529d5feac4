"""`tfpartial scan`, a trained input under a mask, after the review of
t58-sgm: the finding's own port and guide section (M1); a helper given
the product is the forward pass whatever its name (M3); a mask changed
in the loop through calls, or written as a parameter, is not fixed (M4);
the masked elements trained by a subclass's read, a regularizer, a
collected penalty, or a mask fed or written from another module keep it
silent (M5); the work is linear in the products, the feeds of one loop
and of one function, counted over all of `_masks/` (M6, M7)."""

import os
import textwrap

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan.idioms import _masks

_FRAME = """\
    import numpy as np
    import tensorflow as tf
    """


def _found(code):
  return scanned.in_text(code, "stop-gradient-mix")


FOUND = {
    # M3: the helper's name says loss; it runs the model on the product.
    "a helper spelled as a loss": ("""\
        import numpy as np
        import tensorflow as tf
        keep = np.load("mask.npy")
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        def adv_loss(x):
          return -model(x)[0, 1]
        loss = adv_loss(image + delta * keep)
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        """, 7),
    # Its twin, spelled otherwise: the same finding.
    "the same helper spelled otherwise": ("""\
        import numpy as np
        import tensorflow as tf
        keep = np.load("mask.npy")
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        def objective(x):
          return -model(x)[0, 1]
        loss = objective(image + delta * keep)
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        """, 7),
    # M4's twin: the loop calls methods, but not of what it feeds.
    "a loop calling methods of another object": ("""\
        import numpy as np
        import tensorflow as tf
        M = np.load("mask.npy")
        keep = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        adv = image + delta * keep
        loss = -model(adv)[0, 1]
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        for step in range(100):
          loader.advance()
          sess.run(train, {keep: M})
        """, 6),
}

SILENT = {
    # M4 (p2): a method called in the loop draws what is fed.
    "a method of self called in the loop assigns the fed attribute": """\
        import numpy as np
        import tensorflow as tf
        class Attack:
          def __init__(self, model):
            self.mask = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
            self.delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
            adv = self.image + self.delta * self.mask
            loss = -model(adv)[0, 1]
            self.train = tf.train.AdamOptimizer(0.01).minimize(
                loss, var_list=[self.delta])
          def resample(self):
            self.cur = (np.random.rand(1, 32, 32, 3) < 0.5).astype(np.float32)
          def run(self, sess):
            self.cur = np.ones([1, 32, 32, 3])
            for step in range(100):
              self.resample()
              sess.run(self.train, {self.mask: self.cur})
        """,
    # M4 (p24): the fed object is advanced in the loop.
    "the fed object gets a method call in the loop": """\
        import numpy as np
        import tensorflow as tf
        keep = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        adv = image + delta * keep
        loss = -model(adv)[0, 1]
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        for step in range(100):
          loader.advance()
          sess.run(train, feed_dict={keep: loader.current_mask})
        """,
    # M4 (p19): a function called in the loop draws into the array.
    "a function called in the loop changes the fed array in place": """\
        import numpy as np
        import tensorflow as tf
        M = np.ones([1, 32, 32, 3], np.float32)
        keep = tf.placeholder(tf.float32, shape=[1, 32, 32, 3])
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        adv = image + delta * keep
        loss = -model(adv)[0, 1]
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        def resample():
          M[...] = np.random.rand(1, 32, 32, 3) < 0.5
        for step in range(100):
          resample()
          sess.run(train, {keep: M})
        """,
    # M4 (p7): the mask variable is written a draw through a parameter.
    "the mask variable written a draw as a parameter": """\
        import numpy as np
        import tensorflow as tf
        mask = tf.Variable(tf.ones([1, 32, 32, 3]), trainable=False)
        delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
        opt = tf.keras.optimizers.Adam(0.01)
        mask.assign(tf.ones([1, 32, 32, 3]))
        def refresh(m):
          m.assign(tf.cast(tf.random.uniform([1, 32, 32, 3]) < 0.5, tf.float32))
        for x, y in ds:
          refresh(mask)
          with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x + delta * mask))
          g = tape.gradient(loss, [delta])
          opt.apply_gradients(zip(g, [delta]))
        """,
    # M5 (p4): a subclass adds a penalty of the variable itself.
    "a subclass's penalty reads the variable": """\
        import numpy as np
        import tensorflow as tf
        MASK = np.load('mask.npy')
        class Attack:
          def __init__(self, model, image):
            self.delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
            adv = image + self.delta * MASK
            self.loss = -model(adv)[0, 1] + self.extra()
            self.train = tf.train.AdamOptimizer(0.01).minimize(
                self.loss, var_list=[self.delta])
          def extra(self):
            return 0.
        class L2Attack(Attack):
          def extra(self):
            return tf.reduce_sum(tf.square(self.delta))
        """,
    # M5 (p17): made with a regularizer, its loss collected.
    "a variable made with a regularizer": """\
        import numpy as np
        import tensorflow as tf
        keep = np.load("mask.npy")
        delta = tf.get_variable(
            "delta", [1, 32, 32, 3],
            regularizer=tf.contrib.layers.l2_regularizer(0.1))
        adv = image + delta * keep
        loss = -model(adv)[0, 1] + tf.losses.get_regularization_loss()
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        for step in range(100):
          sess.run(train)
        """,
    # M5 (p18): a penalty over every trainable variable.
    "a penalty over the trainable variables": """\
        import numpy as np
        import tensorflow as tf
        keep = np.load("mask.npy")
        delta = tf.Variable(np.zeros([1, 32, 32, 3]), dtype=tf.float32)
        adv = image + delta * keep
        l2 = tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])
        loss = -model(adv)[0, 1] + 0.01 * l2
        train = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=[delta])
        for step in range(100):
          sess.run(train)
        """,
}

SILENT_PROJECTS = {
    # M5 (p3): a placeholder with a default, fed a draw from train.py.
    "a placeholder with a default fed a draw by another module": {
        "attack.py": """\
            import numpy as np
            import tensorflow as tf
            class Attack:
              def __init__(self, model, image):
                self.mask = tf.placeholder_with_default(
                    np.ones([1, 32, 32, 3], np.float32), shape=[1, 32, 32, 3])
                self.delta = tf.Variable(np.zeros([1, 32, 32, 3]),
                                         dtype=tf.float32)
                adv = image + self.delta * self.mask
                loss = -model(adv)[0, 1]
                self.train = tf.train.AdamOptimizer(0.01).minimize(
                    loss, var_list=[self.delta])
            """,
        "train.py": """\
            import numpy as np
            from attack import Attack
            a = Attack(model, image)
            for step in range(100):
              sess.run(a.train, {a.mask: np.random.rand(1, 32, 32, 3) < 0.5})
            """},
    # M5 (p20b): another module writes the mask variable a draw.
    "a mask variable written a draw by another module": {
        "a.py": """\
            import numpy as np
            import tensorflow as tf
            import fire
            class Trainer:
              def __init__(self):
                self.delta = tf.Variable(tf.zeros([1, 32, 32, 3]))
                self.opt = tf.keras.optimizers.Adam(0.01)
                self.mask = tf.Variable(tf.ones([1, 32, 32, 3]),
                                        trainable=False)
              def set_mask(self, m):
                self.mask.assign(m)
              def step(self, x, y):
                with tf.GradientTape() as tape:
                  loss = loss_fn(y, model(x + self.delta * self.mask))
                g = tape.gradient(loss, [self.delta])
                self.opt.apply_gradients(zip(g, [self.delta]))
              def train(self, ds):
                self.set_mask(np.ones([1, 32, 32, 3]))
                for x, y in ds:
                  self.step(x, y)
            if __name__ == "__main__":
              fire.Fire(Trainer)
            """,
        "other.py": """\
            import numpy as np
            from a import Trainer
            t = Trainer()
            for x, y in ds:
              t.mask.assign(np.random.rand(1, 32, 32, 3) < 0.5)
              t.step(x, y)
            """},
}


def test_another_class_s_own_attribute_so_spelled_is_not_the_mask():
  # The twin of the placeholder fed from another module (inspire-group:
  # each attack class feeds its own `self.m`).
  files = {
      "attack.py": SILENT_PROJECTS[
          "a placeholder with a default fed a draw by another module"][
              "attack.py"],
      "other.py": """\
          import numpy as np
          class Other:
            def run(self, sess):
              for step in range(100):
                sess.run(self.train, {self.mask: np.random.rand(4) < 0.5})
          """}
  assert scanned.in_project(files) == [("stop-gradient-mix", "attack.py", 9)]


@pytest.mark.parametrize("name", sorted(FOUND))
def test_found(name):
  code, line = FOUND[name]
  assert _found(code) == [("stop-gradient-mix", line)]


@pytest.mark.parametrize("name", sorted(SILENT))
def test_silent(name):
  assert _found(SILENT[name]) == []


@pytest.mark.parametrize("name", sorted(SILENT_PROJECTS))
def test_silent_in_a_project(name):
  assert scanned.in_project(SILENT_PROJECTS[name]) == []


def test_the_port_keeps_the_product_and_links_its_own_section():
  code, _ = FOUND["a helper spelled as a loss"]
  findings = [f for f in _scan.scan_text("m.py", textwrap.dedent(code))
              if f.idiom == "stop-gradient-mix"]
  assert len(findings) == 1
  finding = findings[0]
  assert "keep the masked product" in finding.port, finding.port
  assert "tfpartial.freeze(" in finding.port
  assert "use the variable itself" not in finding.port
  assert "docs/migration.md#a-masked-trained-input" in finding.message
  assert "so the product stays" in finding.by_hand


def test_another_finding_keeps_the_idiom_port():
  code = """\
      import tensorflow as tf
      x = tf.Variable(tf.zeros([4]))
      m = tf.constant([1., 0., 1., 0.])
      used = m * x + (1 - m) * tf.stop_gradient(x)
      loss = tf.reduce_sum(used)
      train = tf.train.AdamOptimizer().minimize(loss)
      """
  findings = [f for f in _scan.scan_text("m.py", textwrap.dedent(code))
              if f.idiom == "stop-gradient-mix"]
  assert findings and all(
      "use the variable itself" in f.port and "#tfstop_gradient-mixing" in (
          f.message) for f in findings)


# Every module of `_masks/`, counted (a tuple `where`).
_MASKS = tuple(sorted(name for name in os.listdir(
    os.path.dirname(_masks.__file__)) if name.endswith(".py")))


def _work(text):
  return scanned.calls_made(lambda: _scan.scan_project(
      [_files.Source("big.py", text)]), _MASKS)


def _products_of_one_input(n):
  """One perturbation, `n` products of it with one loaded mask."""
  return ("import numpy as np\nkeep = np.load('r.npy')\n"
          "delta = tf.Variable(np.zeros([1, 8]), dtype=tf.float32)\n" +
          "".join(f"adv{i} = image{i} + delta * keep\nout{i} = model(adv{i})\n"
                  for i in range(n)) +
          "loss = " + " + ".join(f"out{i}[0, 1]" for i in range(n)) +
          "\ntrain = tf.train.AdamOptimizer().minimize(loss, "
          "var_list=[delta])\n")


def _attacks(n):
  return "import numpy as np\n" + "".join(
      f"keep{i} = tf.placeholder(tf.float32, [1, 8])\n"
      f"delta{i} = tf.Variable(np.zeros([1, 8]), dtype=tf.float32)\n"
      f"adv{i} = image + delta{i} * keep{i}\n"
      f"loss{i} = -model(adv{i})[0, 1]\n"
      f"train{i} = tf.train.AdamOptimizer().minimize(loss{i}, "
      f"var_list=[delta{i}])\n" for i in range(n))


def _feeds_in_one_loop(n):
  """`n` placeholders fed item by item in one training loop."""
  return _attacks(n) + "feed = {}\nfor step in range(100):\n" + "".join(
      f"  feed[keep{i}] = region{i}\n" for i in range(n)) + (
          "  sess.run(train0, feed_dict=feed)\n")


def _feeds_in_one_function(n):
  """`n` feeds in one function, before the loop that trains."""
  return _attacks(n) + "def main(region):\n  feed = {}\n" + "".join(
      f"  feed[keep{i}] = region\n  x{i} = {i}\n" for i in range(n)) + (
          "  for step in range(100):\n"
          "    sess.run(train0, feed_dict=feed)\nmain(np.ones(3))\n")


@pytest.mark.parametrize("build, found", [
    (_products_of_one_input, lambda n: n),
    (_feeds_in_one_loop, lambda n: n),
    (_feeds_in_one_function, lambda n: n)])
def test_the_work_in_masks_is_linear(build, found):
  # Was quadratic: each product followed every read of the variable
  # again (x12.2 at 4N on t58-sgm), each feed walked its whole loop
  # (x9.7) or its whole function (x4.8, its walk mostly in `ast`) again;
  # x4.0 each now.
  (small, few), (large, many) = (_work(build(n)) for n in (24, 96))
  assert (len(few[0]), len(many[0])) == (found(24), found(96))
  assert large <= 4.5 * small, (small, large)
