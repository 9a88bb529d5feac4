"""should59 (issue 30): small items the last round's reads left.

A keyword named `labels=` or `targets=` on a call that runs the group a
later stage trains is an input of that group only when the project
function called feeds it to a call that makes variables (a head that
concatenates its `targets` to its input: a var-list-filter, as the same
head given the value by position); a target the callee only measures
against (a distillation teacher's soft labels, a pseudo-label) stays no
input, and a call outside the project keeps its `labels=` a target.

`_reset_inputs` reads its scope once, not once per step.

A helper's `x.format(...)` and `x.as_list()` are pure ops only when `x`
is a string (a literal, a name bound only to literals) or a shape (`.shape`,
`get_shape()`, a name bound only to one): a user object's `format` or
`as_list` method may make the kernel's variable, and the var-list-filter
around the convolution is then found.

A counter test's flags are read in three more spellings, each only when
the flag is set in exactly the two arms (one on, one off) and read after
the test in the same loop: `if not flag:` (its arms swapped), a tuple
assignment of flags (`single, multi = True, False`), and `self.flag`
(counted over the class, less `__init__`, whose default is set before
any loop). A flag also set elsewhere (a method the loop calls), flags
alternating by parity, or both on in one arm choose no stage.
Synthetic sources in the shape of real code."""

import ast

import pytest
import scanned
import test_scan_flagged_stages as flagged
import test_scan_helper_makers as helpers
import test_scan_scoped_blocks as scoped

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan.idioms._wholes import _reset_inputs

# `scoped_blocks`' VAE and its head's later stage: `{helper}` defines
# functions, `{head}` stands for the head's block, `{cost}` sets the
# head's `super_cost`.
_STAGES = scoped._SEMI.replace(
    "[None, 10])\n", "[None, 10])\n{helper}\n").replace(
        'with tf.compat.v1.variable_scope("supervised"):\n'
        "    logits = dense(inputs=HEAD_INPUT, units=2)\n", "{head}\n").replace(
            "super_cost = SUPER_COST\n", "{cost}\n").replace(
                "FIRST", "vae_optimizer").replace("SECOND", "super_optimizer")
assert "HEAD_INPUT" not in _STAGES and "SUPER_COST" not in _STAGES

_COST = ("super_cost = tf.compat.v1.losses.sparse_softmax_cross_entropy("
         "logits=logits, labels=y)")
_HEAD = ("def head(inputs, {name}):\n"
         "    return dense(inputs=tf.concat([inputs, {name}], 1), units=2)\n")
_OPENING = ("def head(inputs, {name}):\n"
            "    with tf.compat.v1.variable_scope('supervised'):\n"
            "        both = tf.concat([inputs, {name}], 1)\n"
            "        return dense(inputs=both, units=2)\n")
_BLOCK = "with tf.compat.v1.variable_scope('supervised'):\n    {call}\n"
_MEASURING = ("def head(inputs, {name}):\n"
              "    with tf.compat.v1.variable_scope('supervised'):\n"
              "        logits = dense(inputs=inputs, units=2)\n"
              "    return tf.reduce_mean(tf.square(logits - {name}))\n")


def _program(helper, head, cost=_COST):
  return _STAGES.format(helper=helper, head=head, cost=cost)


def _step_line(source):
  """The later stage's filtered list, where the finding is."""
  return 1 + next(number for number, line in enumerate(
      source.splitlines()) if line.startswith("supervised_vars = "))


@pytest.mark.parametrize("name", ["targets", "labels", "target", "label"])
def test_a_target_keyword_a_head_concatenates_is_an_input(name):
  source = _program(_HEAD.format(name=name), _BLOCK.format(
      call=f"logits = head(x, {name}=z)"))
  assert scanned.found(source) == [("var-list-filter", _step_line(source))]


@pytest.mark.parametrize("name", ["targets", "labels"])
def test_a_target_keyword_a_scope_opening_head_concatenates_is_an_input(
    name):
  source = _program(_OPENING.format(name=name),
                    f"logits = head(x, {name}=z)")
  assert scanned.found(source) == [("var-list-filter", _step_line(source))]


def test_the_same_head_given_the_value_by_position_is_found():
  source = _program(_HEAD.format(name="targets"), _BLOCK.format(
      call="logits = head(x, z)"))
  assert scanned.found(source) == [("var-list-filter", _step_line(source))]


@pytest.mark.parametrize("name", ["labels", "targets"])
def test_a_target_the_head_only_measures_against_is_no_input(name):
  source = _program(_MEASURING.format(name=name), "",
                    f"super_cost = head(x, {name}=x_hat[:, :2])")
  assert scanned.found(source) == []


def test_a_pseudo_label_of_the_earlier_stage_is_no_input():
  source = _program("", _BLOCK.format(
      call="logits = dense(inputs=x, units=2)\n"
           "    pseudo = tf.argmax(x_hat[:, :2], 1)"),
      "super_cost = tf.compat.v1.losses.sparse_softmax_cross_entropy("
      "logits=logits, labels=pseudo)")
  assert scanned.found(source) == []


def test_a_teachers_soft_labels_in_the_students_block_are_no_input():
  source = _program("", _BLOCK.format(
      call="logits = dense(inputs=x, units=2)\n"
           "    soft = tf.nn.softmax(x_hat[:, :2] / 4.0)\n"
           "    super_cost = tf.reduce_mean("
           "tf.nn.softmax_cross_entropy_with_logits("
           "labels=soft, logits=logits))"), "")
  assert scanned.found(source) == []


# `_reset_inputs`: a latent code searched anew for each item (DVBPR).
def _searches(n):
  """`n` latent codes of one scope, each set anew in its own loop and
  searched by its own step through a generator it is handed to."""
  return ("import numpy as np\nimport tensorflow as tf\n"
          "gan = DCGAN(sess)\nx = np.random.normal(0, 0.5, size=[16, 256])\n"
          + "".join(
              f"z{i} = tf.Variable(x, dtype=tf.float32)\n"
              f"obj{i} = tf.reduce_mean(score(gan.get_gen(z{i}, y)))\n"
              f"opt{i} = tf.train.AdamOptimizer(0.01).minimize("
              f"-obj{i}, var_list=[z{i}])\n"
              f"for cat in range(6):\n"
              f"    sess.run(z{i}.assign(x))\n"
              f"    for it in range(50):\n"
              f"        sess.run(opt{i})\n" for i in range(n)))


def _gate_answers(source):
  """What `reset_each_pass` answers for each step of the module."""
  tree = ast.parse(source)
  scope = _scopes.collect(tree)
  steps = [(node, next(k.value for k in node.keywords if k.arg == "var_list"))
           for node in scope.nodes if isinstance(node, ast.Call) and (
               _names.call_name(node) == "minimize")]
  return [_reset_inputs.reset_each_pass(var_list, step, scope)
          for step, var_list in steps]


def test_each_search_reset_in_its_loop_trains_inputs():
  assert _gate_answers(_searches(3)) == [True, True, True]


def test_a_search_set_before_its_loop_is_no_reset():
  source = _searches(2).replace("for cat in range(6):\n    sess.run(z1",
                                "sess.run(z1").replace(
      "sess.run(z1.assign(x))\n    for it", "sess.run(z1.assign(x))\nfor it")
  assert _gate_answers(source) == [True, False]


def test_the_gate_reads_its_scope_once_not_once_per_step():
  # Was quadratic: each step walked the whole scope for its holders,
  # runs, loops and calls, then checked every loop for every run.
  small, large = (scanned.calls_made(
      lambda: _gate_answers(_searches(n)), "_reset_inputs.py")[0]
                  for n in (30, 120))
  assert large <= 6 * small, (small, large)


# `_helper_makers._pure`: `format` and `as_list` of strings and shapes.
_BANK = ("class Bank(object):\n"
         "    def format(self, psfs):\n"
         "        return tf.get_variable('w', [1, 1, 15, 1]) * psfs\n"
         "    def as_list(self):\n"
         "        return [tf.get_variable('v', [1, 1, 15, 1])]\n\n")


@pytest.mark.parametrize("helper", [
    _BANK + "BANK = Bank()\n\ndef flip(psfs):\n"
    "    return BANK.format(psfs)\n",
    _BANK + "BANK = Bank()\n\ndef flip(psfs, bank):\n"
    "    return bank.format(psfs)\n",
    _BANK + "BANK = Bank()\n\ndef flip(psfs):\n"
    "    return BANK.as_list()[0] * psfs\n",
    _BANK + "BANK = Bank()\n\ndef flip(psfs, bank):\n"
    "    return bank.as_list()[0] * psfs\n",
])
def test_a_user_objects_format_or_as_list_may_make_a_variable(helper):
  kernel = "flip(psfs, BANK)" if "bank)" in helper else "flip(psfs)"
  assert helpers._found(helper, kernel) == helpers._at(helper, kernel)


@pytest.mark.parametrize("helper", [
    "def flip(psfs):\n    logging.info('{} flipped'.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
    "NAME = '{}_flipped'\n\ndef flip(psfs):\n"
    "    logging.info(NAME.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
    "def flip(psfs):\n    n = psfs.shape.as_list()[0]\n"
    "    return tf.reshape(psfs, [1, 1, n, 1])\n",
    "def flip(psfs):\n    shape = psfs.get_shape()\n"
    "    return tf.reshape(psfs, [1, 1, shape.as_list()[0], 1])\n",
])
def test_a_strings_format_and_a_shapes_as_list_make_none(helper):
  assert helpers._found(helper, "flip(psfs)") == []


# `_scheduled._Flags`: `if not flag:`, tuple flags, `self.flag`.
_ARMS = ("                if epoch <= 30:\n"
         "                    single = True\n"
         "                    multi = False\n"
         "                else:\n"
         "                    single = False\n"
         "                    multi = True\n")
_STAGED = flagged._STAGED.replace("TEST", "epoch <= 30")
assert _ARMS in _STAGED


def _negated(code):
  return code.replace("                if multi:\n",
                      "                if not single:\n")


def _tupled(code, first="True, False", second="False, True"):
  return code.replace(_ARMS, (
      "                if epoch <= 30:\n"
      f"                    single, multi = {first}\n"
      "                else:\n"
      f"                    single, multi = {second}\n"))


def _on_self(code):
  return code.replace("single", "self.single").replace(
      "multi", "self.multi")


@pytest.mark.parametrize("code", [
    _negated(_STAGED),
    _tupled(_STAGED),
    _on_self(_STAGED),
    _negated(_on_self(_STAGED)),
    _tupled(_on_self(_STAGED)),
    _STAGED.replace(
        "                if single:\n"
        "                    self.sess.run(self.base_optim)\n"
        "                if multi:\n",
        "                if not single:\n"
        "                    self.sess.run(self.base_optim)\n"
        "                else:\n").replace(
            "single = True", "single = X").replace(
                "single = False", "single = True").replace(
                    "single = X", "single = False"),
    # A default in `__init__` is set before any loop: no phase changes.
    _on_self(_STAGED).replace(
        "    def base(self, x):",
        "    def __init__(self):\n        self.single = True\n\n"
        "    def base(self, x):"),
], ids=["not", "tuple", "self", "not-self", "tuple-self", "not-else",
        "self-default"])
def test_flags_in_more_spellings_choose_each_stage(code):
  assert code != _STAGED
  assert flagged._found(code) == flagged._stages(code)


@pytest.mark.parametrize("code", [
    _negated(_STAGED.replace("epoch <= 30", "i % 2 == 0")),
    _tupled(_STAGED.replace("epoch <= 30", "i % 2 == 0")),
    _on_self(_STAGED.replace("epoch <= 30", "i % 2 == 0")),
    _tupled(_STAGED, second="True, True"),
    _negated(_STAGED.replace("multi = True", "multi = True\n"
                             "                    single = True")),
    _on_self(_STAGED).replace("epoch <= 30", "self.single_view"),
    _negated(_STAGED).replace("epoch <= 30", "self.single_view"),
    _tupled(_STAGED.replace("epoch <= 30", "cfg.single")),
], ids=["not-parity", "tuple-parity", "self-parity", "tuple-both-on",
        "not-set-thrice", "self-config", "not-config",
        "tuple-config"])
def test_flags_in_more_spellings_that_choose_no_stage(code):
  assert code != _STAGED
  assert flagged._found(code) == []


def test_a_gan_with_negated_flags_trains_both_halves():
  code = _negated(_STAGED).replace(
      "minimize(self.loss, var_list=att_var)",
      "minimize(-self.loss, var_list=att_var)")
  assert flagged._found(code) == []
