"""Mends of t60 tf2gan (`_unpacked`, `_part_of_self`): a data helper
filling its batch by `append` still carries what it appends; a part
reached through a weightless supplier is judged by what the code does,
not its name; a plain class that hands what it holds to a builtin
(`map(self.net, ...)`) may run it; each supplier class and each helper
is read once (work grows with the code). Synthetic sources."""

import textwrap

import pytest
import scanned
import test_scan_t60_tf2gan as t60

# Filled by mutation: each row appended comes from `rows`.
_APPENDED = """\
    import numpy as np

    def sample(rows, marks, n):
      picks = np.random.randint(0, len(rows), n)
      a, b = [], []
      for k in picks:
        a.append(rows[k])
        b.append(marks[k])
      return np.array(a), np.array(b)
    """
_INDEXED = """\
    import numpy as np

    def sample(rows, marks, n):
      picks = np.random.randint(0, len(rows), n)
      return rows[picks], marks[picks]
    """
_STAGED = """\
    import tensorflow as tf
    from helpers import sample

    def fit(data, marks, steps):
      enc = tf.keras.Sequential([tf.keras.layers.Dense(6)])
      dec = tf.keras.Sequential([tf.keras.layers.Dense(3)])
      head = tf.keras.Sequential([tf.keras.layers.Dense(2)])
      opt1 = tf.keras.optimizers.SGD()
      opt2 = tf.keras.optimizers.SGD()
      for _ in range(steps):
        with tf.GradientTape() as tape:
          rec = tf.reduce_mean(tf.square(dec(enc(data)) - data))
        both = enc.trainable_variables + dec.trainable_variables
        grads = tape.gradient(rec, both)
        opt1.apply_gradients(zip(grads, both))
      z = enc(data)
      for _ in range(steps):
        with tf.GradientTape() as tape:
          u, v = sample(z, marks, 4)
          err = tf.reduce_mean(tf.square(head(u) - v))
        h_grads = tape.gradient(err, head.trainable_variables)
        opt2.apply_gradients(zip(h_grads, head.trainable_variables))
      return head
    """


@pytest.mark.parametrize("helper", [_APPENDED, _INDEXED],
                         ids=["appended", "indexed"])
def test_a_head_on_a_frozen_encoder_batched_by_a_helper(helper):
  files = {"helpers.py": helper, "fit.py": _STAGED}
  assert [(idiom, line) for idiom, path, line in scanned.in_project(files)
          ] == [("var-list-filter", 21)]


# `Holder` runs what it holds through a builtin.
_MAPPER = t60._SUPPLIER.replace(
    "return self.net(args[0])", "return list(map(self.net, args[:1]))[0]")


@pytest.mark.parametrize("attribute, supply, pick_d", [
    ("old_encoder", t60._SUPPLIER, "Supplier(1)"),
    ("frozen_encoder", t60._SUPPLIER, "Supplier(1)"),
    ("base_encoder", t60._SUPPLIER, "Supplier(1)"),
    ("encoder", _MAPPER, "Holder(self.encoder)"),
], ids=["old_name", "frozen_name", "base_name", "holder_maps"])
def test_an_untrained_encoder_below_a_supplier_is_found(attribute, supply,
                                                        pick_d):
  real = "x" if pick_d.startswith("Holder") else f"self.{attribute}(x)"
  gan = t60._GAN_CLASS.format(pick_d=pick_d, real_input=real,
                              g_step=t60._G_STEP).replace(
                                  "self.encoder =", f"self.{attribute} =")
  files = {"supply.py": supply, "gan.py": gan}
  assert [line for idiom, path, line in scanned.in_project(files)
          if idiom == "var-list-filter"] == [22]


def _suppliers(n):
  """A model of `n` critics, each fed through its own supplier object and
  trained by its own step, and a supplier class of `n` methods."""
  lines = ["import tensorflow as tf", "", "class Feed:",
           "  def __init__(self, k):", "    self.k = k", "",
           "  def __call__(self, *a):", "    return a[:self.k]", ""]
  lines += [f"  def part{i}(self, *a):\n    return a[{i}:]\n"
            for i in range(n)]
  lines += ["", "class Pair(tf.keras.Model):", "  def __init__(self):",
            "    super().__init__()",
            "    self.maker = tf.keras.layers.Dense(4)",
            "    self.m_opt = tf.keras.optimizers.SGD()"]
  for i in range(n):
    lines += [f"    self.feed{i} = Feed(1)",
              f"    self.critic{i} = tf.keras.layers.Dense(1)",
              f"    self.opt{i} = tf.keras.optimizers.SGD()"]
  lines += ["", "  def train_step(self, x):"]
  for i in range(n):
    lines += [f"    with tf.GradientTape() as t{i}:",
              f"      s{i} = tf.reduce_mean(self.critic{i}("
              f"self.feed{i}(self.maker(x), x)))",
              f"    w{i} = self.critic{i}.trainable_variables",
              f"    self.opt{i}.apply_gradients(zip(t{i}.gradient(s{i}, w{i}),"
              f" w{i}))"]
  lines += ["    with tf.GradientTape() as tm:",
            "      s = -tf.reduce_mean(" + " + ".join(
                f"self.critic{i}(self.feed{i}(self.maker(x), x))"
                for i in range(n)) + ")",
            "    w = self.maker.trainable_variables",
            "    self.m_opt.apply_gradients(zip(tm.gradient(s, w), w))",
            "    return s", ""]
  return "\n".join(lines)


def test_each_supplier_class_is_read_once():
  small, large = (scanned.scan_work(_suppliers(n), "_part_of_self.py")
                  for n in (4, 16))
  assert small > 20 and large <= 5 * small, (small, large)


def _chained(n):
  """A helper of `n` parameters whose `n` elements all read one chain of
  `n` statements, unpacked once after a GAN."""
  params = ", ".join(f"q{i}" for i in range(n))
  helper = ["import numpy as np", "", f"def rows({params}):",
            "  c0 = np.arange(4)"]
  helper += [f"  c{j} = c{j - 1} + 1" for j in range(1, n)]
  helper += ["  return " + ", ".join(f"q{i}[c{n - 1}]" for i in range(n))]
  names = ", ".join(["x", "y_hat"] + [f"r{i}" for i in range(n - 2)])
  given = ", ".join(["xs", "made"] + ["xs"] * (n - 2))
  body = textwrap.dedent(t60._GANITE.format(
      decoded="z", unpack=f"{names} = rows({given})")).replace(
          "from data import batch\n", "")
  return "\n".join(helper) + "\n\n" + body


def test_a_helper_is_read_once_however_many_elements():
  small, large = (scanned.scan_work(_chained(n), "_runs/_unpacked.py")
                  for n in (4, 16))
  assert small > 20 and large <= 5 * small, (small, large)
