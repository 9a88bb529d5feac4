"""`_dropped.unread_gradients` decides from the syntax tree, not from
words: a name bound to gradients is unread where no expression reads it
(a string or a comment naming it reads nothing), and read where an
expression does, in its module or, for a module's name, in another
module that imports it; a call of the builtin `locals`, `vars`, `eval`
or `exec`, or `sys.modules`, may read any name, so it keeps the step
found, and so does a getter of a built name or `vars` on the module in
a module importing it; a variable or parameter that merely shares a
builtin's name (`vars = tf.trainable_variables()`) reads nothing."""

import textwrap

import pytest

import scanned

_TF1 = """\
    import tensorflow as tf
    x = tf.placeholder(tf.float32, shape=[4, None])
    y = tf.placeholder(tf.float32, shape=[10, None])
    W1 = tf.Variable(tf.random_uniform([50, 4], 0., 0.1))
    W2 = tf.Variable(tf.random_uniform([10, 50], 0., 0.1))
    output = tf.nn.relu(tf.matmul(W2, tf.matmul(W1, x)))
    loss = tf.reduce_sum(tf.square(output - y))
    W1_grad = tf.gradients(loss, [W1])[0]{tail}
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    train = optimizer.minimize(loss)
    {use}
    """

SILENT = {
    "named in a string only": _TF1.format(
        tail="", use='print("W1_grad is left for later")'),
    "named in a comment after the code": _TF1.format(
        tail="  # W1_grad: see W1_grad below", use=""),
    "named in a docstring": _TF1.format(
        tail="", use='"""W1_grad is kept for a plot."""'),
    # A variable or a parameter named like a builtin is not the builtin.
    "a variable named vars": _TF1.format(tail="", use="").replace(
        "train = optimizer.minimize(loss)",
        "vars = tf.trainable_variables()\n"
        "    train = optimizer.minimize(loss, var_list=vars)"),
    "a parameter named eval": _TF1.format(
        tail="", use="def evaluate(eval):\n      return eval + 1"),
    # Called, too: the call is of the parameter, not the builtin.
    "a parameter named eval, called": _TF1.format(
        tail="", use="def evaluate(eval):\n      return eval(1)"),
}

FOUND = {
    "read by locals()": (_TF1.format(
        tail="", use="step = optimizer.apply_gradients("
        "[(locals()['W1_' + 'grad'], W1)])"), 8),
    "read by eval": (_TF1.format(
        tail="", use="step = optimizer.apply_gradients("
        "[(eval('W1_' + 'grad'), W1)])"), 8),
    # Conservative: a read anywhere in the module counts, a function's
    # own parameter of the same name too.
    "a function's own name alike": (_TF1.format(
        tail="", use="def show(W1_grad):\n      return W1_grad"), 8),
    "read in an f-string's expression": (_TF1.format(
        tail="", use='tf.print(f"{W1_grad}")'), 8),
    "read by getattr of sys.modules": (_TF1.format(
        tail="", use="import sys\n    step = optimizer.apply_gradients("
        "[(getattr(sys.modules[__name__], 'W1_' + 'grad'), W1)])"), 8),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_gradients_no_expression_reads_leave_nothing_out(name):
  assert scanned.in_text(SILENT[name], "var-list-filter") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_gradients_an_expression_may_read_are_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "var-list-filter") == [
      ("var-list-filter", line)]


@pytest.mark.parametrize("use", [
    "from model import W1_grad, W1, optimizer\n"
    "step = optimizer.apply_gradients([(W1_grad, W1)])\n",
    "import model\n"
    "step = model.optimizer.apply_gradients([(model.W1_grad, model.W1)])\n",
    "import model\nkey = 'W1_' + 'grad'\n"
    "step = model.optimizer.apply_gradients("
    "[(getattr(model, key), model.W1)])\n",
    "import model\nstep = model.optimizer.apply_gradients("
    "[(vars(model)['W1_' + 'grad'], model.W1)])\n",
], ids=["from-import", "module-attribute", "getattr-built-name",
        "module-vars"])
def test_a_modules_gradients_another_module_applies_are_found(use):
  model = textwrap.dedent(_TF1.format(tail="", use=""))
  found = scanned.in_project({"model.py": model, "train.py": use})
  assert ("var-list-filter", "model.py", 8) in found, found


def test_a_modules_gradients_no_module_reads_leave_nothing_out():
  model = textwrap.dedent(_TF1.format(tail="", use=""))
  found = scanned.in_project({
      "model.py": model,
      "train.py": "from model import train\nprint('W1_grad: none')\n"})
  assert [f for f in found if f[0] == "var-list-filter"] == [], found


def test_a_getter_in_a_module_not_importing_it_leaves_nothing_out():
  model = textwrap.dedent(_TF1.format(tail="", use=""))
  found = scanned.in_project({
      "model.py": model,
      "config.py": "def value(args, key):\n  return getattr(args, key)\n"})
  assert [f for f in found if f[0] == "var-list-filter"] == [], found
