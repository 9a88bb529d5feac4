"""`tfpartial scan`'s refined-stage rule after the second review of its
mend (PG2's two-stage generator, `G2 = G1 + DiffMap`, the first stage's
op picked only before a bound of the loop's counter): where the rule
cannot read what a step run from the bound on trains, it says nothing.
A list built by a call (`tf.trainable_variables()`, a helper, a scoped
collection) or a filter of one may hold the first stage's; a step made
by a helper (another module's, the module's own, one nested in the
method) may train it; an op read anywhere outside the before-arms of the
counter's tests (after the `if`, in a second loop, another method, a
second test's later arm) runs from the bound on; a method building steps
from its parameters is read once per call site. The finding stands at
the earliest read of the second stage's op in the later arm; and what
the rule reads of a class, callees included, grows linearly with it."""

import sys
import textwrap

import pytest

import scanned
import test_scan_refined_stage as refined

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

_SOURCE = refined._TRAINER % ("G_var2", "G1 + DiffMap", "G2", "step < 22000",
                              "g_optim1", "g_optim2")
_B = "            "
_BUILT = _B + "self.g_optim1, self.g_optim2, self.d_optim = self._getOptimizer("
_RUN = "                    self.sess.run(self.d_optim)"
_LOOP_END = _RUN + "\n"
_FT = _B + "self.g_ft = tf.train.AdamOptimizer(1e-6).minimize(self.L1Loss2, "


def _with_step(built, run="                    self.sess.run(self.g_ft)",
               source=_SOURCE):
  """The PG2 trainer with `built` added before its steps are made and
  `run` after the discriminator's step, from the bound on."""
  source = source.replace(_BUILT, built + _BUILT)
  return source.replace(_RUN, _RUN + "\n" + run) if run else source


def _found(files):
  if isinstance(files, str):
    files = {"t.py": files}
  return [(idiom, line) for idiom, _, line in scanned.in_project(files)
          if idiom == "var-list-filter"]


def test_the_trainer_alone_is_found():
  assert _found(_SOURCE) == [("var-list-filter", 39)]


@pytest.mark.parametrize("built", [
    _B + "t_vars = tf.trainable_variables()\n" + _FT + "var_list=t_vars)\n",
    _B + "self.t_vars = tf.trainable_variables()\n" + _FT
    + "var_list=self.t_vars)\n",
    _B + "self.G_all = [v for v in tf.trainable_variables() if 'Generator' "
    "in v.name]\n" + _FT + "var_list=self.G_all)\n",
    _B + "self.G_all = lib.params_with_name('Generator')\n" + _FT
    + "var_list=self.G_all)\n",
    _B + "g_all = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, "
    "scope='Generator')\n" + _FT + "var_list=g_all)\n",
    _B + "t_vars = tf.trainable_variables()\n" + _B + "self.g_vars = [var "
    "for var in t_vars if 'Generator' in var.name]\n" + _FT
    + "var_list=self.g_vars)\n",
], ids=["local_trainable_variables", "attribute_trainable_variables",
        "filter_of_all", "params_with_name", "scoped_collection",
        "dcgan_filter_of_a_name"])
def test_a_later_step_over_a_list_built_by_a_call_is_silent(built):
  assert _found(_with_step(built)) == []


def test_a_later_step_over_a_filter_of_the_second_list_is_found():
  built = (_B + "self.G_sub = [v for v in self.G_var2 if 'conv' in v.name]\n"
           + _FT + "var_list=self.G_sub)\n")
  assert _found(_with_step(built)) == [("var-list-filter", 41)]


def test_a_discriminator_list_built_by_a_call_is_silent():
  # PG2's own `lib.params_with_name('Discriminator.')`: its step runs
  # from the bound on and may hold any variable (a known miss).
  source = _SOURCE.replace(
      "self.D_z, self.D_var = DCGANDiscriminator(\n"
      "                tf.concat([self.x_target, G2], 0))\n",
      "self.D_z = DCGANDiscriminator(tf.concat([self.x_target, G2], 0))\n"
      "            self.D_var = lib.params_with_name('Discriminator.')\n")
  assert source != _SOURCE
  assert _found(source) == []


_HELPER = ("def make_op(loss, var_list=None):\n"
           "    return tf.train.AdamOptimizer(1e-6).minimize(loss, "
           "var_list=var_list)\n")


def test_a_step_made_by_another_modules_helper_is_silent():
  source = _with_step(_B + "self.g_ft = make_op(self.L1Loss2)\n").replace(
      "    import tflib as lib\n",
      "    import tflib as lib\n    from opt_utils import make_op\n")
  assert _found({"t.py": source, "opt_utils.py":
                 "import tensorflow as tf\n" + _HELPER}) == []


def test_a_step_made_by_the_modules_helper_is_silent():
  source = _with_step(_B + "self.g_ft = make_op(self.L1Loss2)\n").replace(
      "    import tflib as lib\n",
      "    import tflib as lib\n" + textwrap.indent(_HELPER, "    "))
  assert _found(source) == []


def test_a_step_made_by_a_nested_helper_is_silent():
  built = (_B + "def make():\n" + _B + "    return tf.train.AdamOptimizer("
           "1e-6).minimize(self.L1Loss2)\n" + _B + "self.g_ft = make()\n")
  assert _found(_with_step(built)) == []


@pytest.mark.parametrize("source", [
    _SOURCE.replace(_LOOP_END, _LOOP_END
                    + "            for epoch in range(10):\n"
                    "                self.sess.run(self.g_optim1)\n"
                    "                self.sess.run(self.g_optim2)\n"),
    _SOURCE + "\n        def finetune(self):\n"
    "            for it in range(1000):\n"
    "                self.sess.run([self.g_optim1, self.g_optim2])\n",
    _SOURCE.replace(_LOOP_END, _LOOP_END
                    + "                if step < 30000:\n"
                    "                    pass\n"
                    "                else:\n"
                    "                    self.sess.run(self.g_optim1)\n"),
    _SOURCE.replace(_LOOP_END, _LOOP_END
                    + "                self.sess.run(self.g_optim1)\n"),
], ids=["second_loop", "another_method", "second_tests_later_arm",
        "after_the_if"])
def test_the_first_stages_op_run_outside_a_before_arm_is_silent(source):
  assert source != _SOURCE
  assert _found(source) == []


def test_a_helper_method_is_read_once_per_call_site():
  source = _SOURCE.replace(
      _BUILT, _B + "self.g_extra, _ = self._one(self.L1Loss2, self.G_var2)\n"
      + _B + "self.g_ft, _ = self._one(self.L1Loss2, self.G_var1 + "
      "self.G_var2)\n" + _BUILT).replace(
          "        def build_model(self):",
          "        def _one(self, loss, var):\n"
          "            op = tf.train.AdamOptimizer(1e-6).minimize(loss, "
          "var_list=var)\n            return op, loss\n\n"
          "        def build_model(self):").replace(
              _LOOP_END, _LOOP_END + "                    "
              "self.sess.run(self.g_ft)\n")
  assert _found(source) == []


def test_an_apply_over_both_lists_of_fed_gradients_is_silent():
  built = (_B + "self.grads_in = [tf.placeholder(tf.float32) for _ in "
           "range(4)]\n" + _B + "self.g_ft = tf.train.AdamOptimizer(1e-6)"
           ".apply_gradients(zip(self.grads_in, self.G_var1 + self.G_var2))\n")
  assert _found(_with_step(built)) == []


def test_the_finding_stands_at_the_later_arms_read():
  source = _SOURCE.replace(_LOOP_END, _LOOP_END + "            print("
                           "'trained', self.g_optim2.name)\n")
  assert _found(source) == [("var-list-filter", 39)]


def _rule_work(text):
  """The calls the rule makes, those of what it calls included, in a
  scan of one file holding `text`: counted, not timed."""
  count, inside = [0], [0]

  def profile(frame, event, arg):
    del arg
    rule = frame.f_code.co_name == "hits" and (
        frame.f_code.co_filename.endswith("_refined_stage.py"))
    if event == "call":
      inside[0] += rule
      count[0] += inside[0] > 0
    elif event == "return":
      inside[0] -= rule
    elif event == "c_call":
      count[0] += inside[0] > 0

  sources = [_files.Source("big.py", text)]
  sys.setprofile(profile)
  try:
    _scan.scan_project(sources)
  finally:
    sys.setprofile(None)
  return count[0]


def _pairs(k, run_b="self.op_b{i}", extra=""):
  """A class of `k` two-stage models, each first stage's op run before
  the bound and each second's from it on."""
  return ("import tensorflow as tf\n\nclass T(object):\n"
          "    def build(self):\n" + "".join(
              f"        G{i}, D{i}, self.va{i}, self.vb{i} = Gen{i}(self.x)\n"
              f"        S{i} = G{i} + D{i}\n"
              f"        self.loss_{i} = tf.reduce_mean(G{i})\n"
              f"        self.loss2_{i} = tf.reduce_mean(S{i})\n"
              f"        self.op_a{i} = tf.train.AdamOptimizer(1e-3)"
              f".minimize(self.loss_{i}, var_list=self.va{i})\n"
              f"        self.op_b{i} = tf.train.AdamOptimizer(1e-3)"
              f".minimize(self.loss2_{i}, var_list=self.vb{i})\n"
              for i in range(k)) + extra
          + "    def train(self):\n        for step in range(100000):\n"
          "            if step < 1000:\n" + "".join(
              f"                self.sess.run(self.op_a{i})\n"
              for i in range(k)) + "            else:\n" + "".join(
                  "                self.sess.run(" + run_b.format(i=i) + ")\n"
                  for i in range(k)))


def _shared(k):
  """Each second stage also trained from the bound on by a step over
  one list of every second stage's (read again for each step before)."""
  every = " + ".join(f"self.vb{i}" for i in range(k))
  return _pairs(k, "[self.op_b{i}, self.op_c{i}]", (
      f"        self.all_vb = {every}\n" + "".join(
          f"        self.op_c{i} = tf.train.AdamOptimizer(1e-3).minimize("
          f"self.loss2_{i}, var_list=self.all_vb)\n" for i in range(k))))


def _same_lists(k):
  """`k` steps over each stage's one list, the first stage's before the
  bound (every first against every second, before)."""
  return ("import tensorflow as tf\n\nclass T(object):\n"
          "    def build(self):\n"
          "        G, D, self.va, self.vb = Gen(self.x)\n"
          "        S = G + D\n        self.l1 = tf.reduce_mean(G)\n"
          "        self.l2 = tf.reduce_mean(S)\n" + "".join(
              f"        self.op_a{i} = tf.train.AdamOptimizer(1e-3).minimize("
              f"self.l1, var_list=self.va)\n"
              f"        self.op_b{i} = tf.train.AdamOptimizer(1e-3).minimize("
              f"self.l2, var_list=self.vb)\n" for i in range(k))
          + "    def train(self):\n        for step in range(100000):\n"
          "            if step < 1000:\n                self.sess.run([" + ", ".join(
              f"self.op_a{i}" for i in range(k)) + "])\n            else:\n"
          "                self.sess.run([" + ", ".join(
              f"self.op_b{i}" for i in range(k)) + "])\n")


@pytest.mark.parametrize("shape", [_pairs, _shared, _same_lists],
                         ids=["pairs", "shared_later_list", "same_lists"])
def test_the_rule_and_its_callees_grow_linearly(shape):
  n = 10
  small, large = (_rule_work(shape(k)) for k in (n, 4 * n))
  assert large <= 4.5 * small, (small, large)


@pytest.mark.parametrize("shape", [_pairs, _shared, _same_lists],
                         ids=["pairs", "shared_later_list", "same_lists"])
def test_the_many_stages_are_found(shape):
  # One finding at each second stage's read from the bound on.
  source = shape(3)
  reads = [number for number, line in enumerate(source.splitlines(), 1)
           for i in range(3) if f"self.op_b{i}" in line and "run(" in line]
  assert sorted(_found(source)) == [("var-list-filter", n) for n in reads]


def test_a_step_made_by_a_helper_into_a_local_of_the_loop_is_silent():
  source = _SOURCE.replace(
      "            for step in range(",
      "            ft = make_op(self.L1Loss2)\n            for step in range(")
  source = source.replace(_RUN, _RUN + "\n                    self.sess.run(ft)")
  assert _found(source) == []
