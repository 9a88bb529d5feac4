"""mend42 (issue 30): the should59 review's must-fix items.

A head that sizes its output layer from its labels (`units=labels.shape[-1]`,
`n_out = int(labels.get_shape()[-1])`) only measures against them: a name
read through `.shape`, `get_shape()`, `tf.shape`, `len` or `int` reaches no
maker, and a maker is fed only through its data argument (the first
positional, `inputs=` or `x=`).

A `self.flag` is counted over its class whatever keeps the ops: a method
the loop calls that sets it again (`self.single = i % 2 == 0`) makes it no
stage's switch; a default set in `__init__` is set before any loop and
changes no phase.

A string's `format` is pure for any string-valued expression (a
concatenation, `%`, an f-string, a parameter with a string default), and
`as_list()` is pure unless its object is bound to a class of the project.
Synthetic sources in the shape of real code."""

import pytest
import scanned
import test_scan_flagged_stages as flagged
import test_scan_helper_makers as helpers
import test_scan_should59 as should59

# `should59`'s measuring head, sizing its output from the labels.
_SHAPED = [
    should59._MEASURING.replace("units=2", "units={name}.shape[-1]"),
    should59._MEASURING.replace(
        "    with", "    n_out = int({name}.get_shape()[-1])\n    with").replace(
            "units=2", "units=n_out"),
    should59._MEASURING.replace("units=2", "units=tf.shape({name})[-1]"),
    should59._MEASURING.replace("units=2", "units=len({name})"),
    should59._MEASURING.replace(
        "    with", "    n = {name}.shape\n    with").replace(
            "units=2", "units=n[-1]"),
    should59._MEASURING.replace(
        "units=2", "units=2, name=str({name}.shape[-1])"),
]


@pytest.mark.parametrize("head", _SHAPED, ids=[
    "shape", "int-get-shape", "tf-shape", "len", "shape-name", "name-kw"])
def test_a_head_sized_from_its_labels_only_measures_against_them(head):
  assert "{name}" in head and head != should59._MEASURING
  source = should59._program(head.format(name="labels"), "",
                             "super_cost = head(x, labels=x_hat[:, :2])")
  assert scanned.found(source) == []


def test_a_head_concatenating_labels_and_sizing_from_them_is_found():
  head = should59._HEAD.replace("units=2", "units={name}.shape[-1]")
  source = should59._program(head.format(name="labels"), should59._BLOCK.format(
      call="logits = head(x, labels=z)"))
  assert scanned.found(source) == [
      ("var-list-filter", should59._step_line(source))]


# A class whose `train` keeps its ops in locals and switches `self.single`.
_LOCAL = """
import tensorflow as tf


def fc(x, out_d, name):
    w = tf.compat.v1.get_variable(name + '_w', [int(x.shape[1]), out_d])
    b = tf.compat.v1.get_variable(name + '_b', [out_d])
    return tf.matmul(x, w) + b


class Net(object):
    def __init__(self, sess):
        self.sess = sess
        INIT
    def schedule(self, i):
        SCHED

    def train(self, x, y):
        with tf.compat.v1.variable_scope('r2n'):
            h = fc(x, 8, name='l1')
            out = fc(tf.nn.relu(fc(h, 8, name='att_1st')), 1, name='lfc2')
        loss = tf.reduce_mean(tf.square(out - y))
        base_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/l')]
        att_var = [v for v in tf.compat.v1.trainable_variables() if v.name.startswith('r2n/att')]
        base_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(loss, var_list=base_var)
        att_optim = tf.compat.v1.train.AdamOptimizer(1e-4).minimize(loss, var_list=att_var)
        for epoch in range(50):
            for i in range(100):
                if epoch <= 30:
                    self.single = True
                else:
                    self.single = False
                CALL
                if self.single:
                    self.sess.run(base_optim)
                else:
                    self.sess.run([loss, att_optim])
"""


def _local(init="pass", sched="pass", call="pass"):
  return _LOCAL.replace("INIT", init).replace("SCHED", sched).replace(
      "CALL", call)


def test_a_self_flag_a_called_method_sets_again_chooses_no_stage():
  # The base list is found as on main (its layers are in `train` alone);
  # the attention list is not: the flag alternates by parity.
  code = _local(sched="self.single = i % 2 == 0", call="self.schedule(i)")
  assert flagged._found(code) == flagged._stages(code)[:1]


@pytest.mark.parametrize("init", ["pass", "self.single = False"],
                         ids=["no-default", "init-default"])
def test_a_self_flag_with_local_ops_chooses_each_stage(init):
  code = _local(init=init)
  assert flagged._found(code) == flagged._stages(code)


def test_a_self_flag_with_ops_on_self_and_an_init_default_chooses_each():
  code = should59._on_self(should59._STAGED).replace(
      "    def base(self, x):",
      "    def __init__(self):\n        self.single = False\n"
      "        self.multi = False\n\n    def base(self, x):")
  assert flagged._found(code) == flagged._stages(code)


# `_helper_makers._pure`: strings and shapes read as such.
@pytest.mark.parametrize("helper", [
    "def flip(psfs, fmt='{}_flipped'):\n"
    "    logging.info(fmt.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
    "PREFIX = 'optics'\nNAME = PREFIX + '/{}_flipped'\n\ndef flip(psfs):\n"
    "    logging.info(NAME.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
    "def flip(psfs):\n    return tf.reshape(psfs, [1, 1, _n(psfs.shape), 1])"
    "\n\ndef _n(shape):\n    return shape.as_list()[0]\n",
    "def flip(psfs):\n    name = '%s/{}' % 'optics'\n"
    "    logging.info(name.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
    "def flip(psfs, where='optics'):\n"
    "    logging.info(f'{where}/{{}}'.format(psfs.name))\n"
    "    return tf.reverse(psfs, [0])\n",
], ids=["param-default", "concat", "shape-param", "percent", "f-string"])
def test_string_templates_and_shape_parameters_make_none(helper):
  assert helpers._found(helper, "flip(psfs)") == []


def _heads(n):
  """`n` calls of one measuring head of `n` statements, each given the
  earlier stage's output as its `labels=`."""
  head = ("def head(inputs, labels):\n" + "".join(
      f"    labels{i} = labels * {i}\n" for i in range(n)) + (
          "    with tf.compat.v1.variable_scope('supervised'):\n"
          "        logits = dense(inputs=inputs, units=2)\n"
          "    return tf.reduce_mean(tf.square(logits - labels))\n"))
  return should59._program(head, "", "super_cost = tf.add_n([" + ", ".join(
      f"head(x, labels=x_hat[:, {i}:{i + 2}])" for i in range(n)) + "])")


def test_a_heads_parameter_is_followed_once_however_often_it_is_called():
  # Was followed again for every call: x6.9 on t59-should, x3.5 now.
  assert scanned.found(_heads(3)) == []
  small, large = (scanned.scan_work(_heads(n), "_stage_marks.py")
                  for n in (10, 40))
  assert large <= 5 * small, (small, large)
