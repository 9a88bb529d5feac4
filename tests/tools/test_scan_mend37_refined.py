"""`tfpartial scan`'s refined-stage rule after the review of t45 (the
two-stage generator whose second stage refines the first's output, PG2's
`G2 = G1 + DiffMap`, the first stage's op picked only before a bound of
the loop's counter): every step of the class that may run from the bound
on counts, a step with no list training everything and an apply of
gradients training the list it zips them with; lists are told apart by
name, not by a piece of their text; the message says what runs; and what
the rule reads of a class is read once, so a class of many two-stage
models costs about the same per model however many it holds."""

import textwrap

import pytest

import scanned
import test_scan_refined_stage as refined

from tfpartial._tools.scan import _scan

_SOURCE = refined._TRAINER % ("G_var2", "G1 + DiffMap", "G2", "step < 22000",
                              "g_optim1", "g_optim2")
_BUILT = ("            self.g_optim1, self.g_optim2, self.d_optim = "
          "self._getOptimizer(")
_RUN = "                    self.sess.run(self.d_optim)"


def _with_step(built, run="                    self.sess.run(self.g_ft)"):
  """The PG2 trainer with `built` added before its steps are made and
  `run` after the discriminator's step, from the bound on."""
  source = _SOURCE.replace(_BUILT, built + _BUILT)
  return source.replace(_RUN, _RUN + "\n" + run)


def _found(source):
  return [each for each in scanned.found(source)
          if each[0] == "var-list-filter"]


@pytest.mark.parametrize("built", [
    # A fine-tuning step of the whole model: no list, so every variable.
    "            self.g_ft = tf.train.AdamOptimizer(1e-6).minimize("
    "self.L1Loss2)\n",
    # Gradients of both lists applied together.
    "            gv = self.G_var1 + self.G_var2\n"
    "            self.g_ft = tf.train.AdamOptimizer(1e-6).apply_gradients("
    "zip(tf.gradients(self.g_loss2, gv), gv))\n",
    # Computed over both lists, then applied.
    "            opt = tf.train.AdamOptimizer(1e-6)\n"
    "            gvs = opt.compute_gradients(self.g_loss2, "
    "var_list=self.G_var1 + self.G_var2)\n"
    "            self.g_ft = opt.apply_gradients(gvs)\n",
    # An apply over the first stage's list alone, by the list's name.
    "            opt = tf.train.AdamOptimizer(1e-6)\n"
    "            self.g_ft = opt.apply_gradients(zip(tf.gradients("
    "self.g_loss1, self.G_var1), self.G_var1))\n",
    # Both lists kept in an attribute of their own.
    "            self.G_all = self.G_var1 + self.G_var2\n"
    "            self.g_ft = tf.train.AdamOptimizer(1e-6).minimize("
    "self.g_loss2, var_list=self.G_all)\n",
], ids=["minimize_without_a_list", "apply_over_both_lists",
        "computed_over_both_then_applied", "apply_over_the_first_list",
        "attribute_holding_both"])
def test_a_later_step_training_the_first_stage_is_silent(built):
  assert _found(_with_step(built)) == []


@pytest.mark.parametrize("built", [
    "            gv = self.G_var2\n"
    "            self.g_ft = tf.train.AdamOptimizer(1e-6).apply_gradients("
    "zip(tf.gradients(self.g_loss2, gv), gv))\n",
    # A list filtered by name: read as its name, as before.
    "            self.G_own = [v for v in self.G_var2 if 'bias' in v.name]\n"
    "            self.g_ft = tf.train.AdamOptimizer(1e-6).minimize("
    "self.g_loss2, var_list=self.G_own)\n",
], ids=["apply_over_the_second_list", "filtered_second_list"])
def test_a_later_step_over_the_second_list_alone_is_still_found(built):
  assert _found(_with_step(built)) == [("var-list-filter", 41)]


def test_a_step_run_before_the_bound_only_does_not_count():
  # The fine-tuning step of the whole model run beside the first
  # stage's, before the bound only.
  built = ("            self.g_ft = tf.train.AdamOptimizer(1e-6).minimize("
           "self.L1Loss2)\n")
  source = _with_step(built, run="").replace(
      "                    self.sess.run(self.g_optim1)",
      "                    self.sess.run(self.g_optim1)\n"
      "                    self.sess.run(self.g_ft)")
  assert _found(source) == [("var-list-filter", 41)]


def test_a_list_whose_name_starts_with_the_first_ones_is_another():
  # The discriminator's list named `G_var10`: it holds `G_var1` as text
  # only.
  source = _SOURCE.replace("self.D_var", "self.G_var10")
  assert _found(source) == [("var-list-filter", 39)]


def test_the_message_says_what_runs_from_the_bound_on():
  findings = [f for f in _scan.scan_text("t.py", textwrap.dedent(_SOURCE))
              if f.idiom == "var-list-filter"]
  assert len(findings) == 1, findings
  message = findings[0].message
  # `d_optim` runs too: not "only `self.g_optim2` runs".
  assert "only `self.g_optim2` runs" not in message
  assert "`self.g_optim1` no longer runs" in message
  assert "no step run from the bound on trains it" in message


def _stages(k):
  """One class: `k` two-stage generators, each stage's op built in
  `build`; the loop runs every first stage's op before its bound and
  every second's from it on (the review's shape)."""
  return ("import tensorflow as tf\n\nclass T(object):\n"
          "    def build(self):\n" + "".join(
              f"        G{i}, D{i}, self.va{i}, self.vb{i} = Gen{i}(self.x)\n"
              f"        S{i} = G{i} + D{i}\n"
              f"        self.loss_{i} = tf.reduce_mean(G{i})\n"
              f"        self.loss2_{i} = tf.reduce_mean(S{i})\n"
              for i in range(k)) + "".join(
                  f"        self.op_a{i} = tf.train.AdamOptimizer(1e-3)"
                  f".minimize(self.loss_{i}, var_list=self.va{i})\n"
                  f"        self.op_b{i} = tf.train.AdamOptimizer(1e-3)"
                  f".minimize(self.loss2_{i}, var_list=self.vb{i})\n"
                  for i in range(k))
          + "    def train(self):\n"
          "        for step in range(100000):\n"
          "            if step < 1000:\n"
          "                self.sess.run([" + ", ".join(
              f"self.op_a{i}" for i in range(k)) + "])\n"
          "            else:\n"
          "                self.sess.run([" + ", ".join(
              f"self.op_b{i}" for i in range(k)) + "])\n")


def _stages_by_helper(k):
  """The same, each pair of ops made by a method of its own from its
  parameters and unpacked into attributes by `build` (PG2's shape)."""
  return ("import tensorflow as tf\n\nclass T(object):\n" + "".join(
      f"    def _ops{i}(self, loss1, loss2, var1, var2):\n"
      f"        op1 = tf.train.AdamOptimizer(1e-3).minimize(loss1, "
      f"var_list=var1)\n"
      f"        op2 = tf.train.AdamOptimizer(1e-3).minimize(loss2, "
      f"var_list=var2)\n"
      f"        return op1, op2\n" for i in range(k))
          + "    def build(self):\n" + "".join(
              f"        G{i}, D{i}, self.va{i}, self.vb{i} = Gen{i}(self.x)\n"
              f"        S{i} = G{i} + D{i}\n"
              f"        self.loss_{i} = tf.reduce_mean(G{i})\n"
              f"        self.loss2_{i} = tf.reduce_mean(S{i})\n"
              f"        self.op_a{i}, self.op_b{i} = self._ops{i}("
              f"self.loss_{i}, self.loss2_{i}, self.va{i}, self.vb{i})\n"
              for i in range(k))
          + "    def train(self):\n"
          "        for step in range(100000):\n"
          "            if step < 1000:\n" + "".join(
              f"                self.sess.run(self.op_a{i})\n"
              for i in range(k)) + "            else:\n" + "".join(
                  f"                self.sess.run(self.op_b{i})\n"
                  for i in range(k)))


@pytest.mark.parametrize("shape", [_stages, _stages_by_helper],
                         ids=["built_in_place", "built_by_helpers"])
def test_the_rule_reads_a_class_of_many_stages_once(shape):
  n = 5
  small, large = (sum(scanned.scan_work(shape(k), where) for where in (
      "_refined_stage.py", "_refined_facts.py")) for k in (n, 4 * n))
  assert large <= 6 * small, (small, large)


@pytest.mark.parametrize("shape", [_stages, _stages_by_helper],
                         ids=["built_in_place", "built_by_helpers"])
def test_each_of_many_stages_is_found(shape):
  # One finding at each second stage's read from the bound on.
  source = shape(3)
  reads = [number for number, line in enumerate(source.splitlines(), 1)
           for i in range(3) if f"self.op_b{i}" in line and "run(" in line]
  assert sorted(_found(source)) == [("var-list-filter", n) for n in reads]
