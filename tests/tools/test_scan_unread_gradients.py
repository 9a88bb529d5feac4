"""`tfpartial scan`: gradients computed for some variables into a name
nothing reads (lampinen/shared_representations' `W1_grad =
tf.gradients(loss, [W1])[0]`, its print commented out) are never
applied: no step leaves the other variables out. Read and applied, the
same gradients train only the variables they name, and stay found.
Likewise a name nothing reads is decided from the syntax tree, not from
words (a string or a comment naming it reads nothing), and a call of
the builtin `locals`, `vars`, `eval`, `exec` or `sys.modules` may read
any name, while a variable or a parameter that merely shares a
builtin's name (`vars = tf.trainable_variables()`) reads nothing."""

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

_TF2 = """\
    import tensorflow as tf
    model = build_model()
    opt = tf.keras.optimizers.Adam()
    for x, y in data:
      with tf.GradientTape(persistent=True) as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
      head = [v for v in model.trainable_variables if "head" in v.name]
      head_grads = tape.gradient(loss, head)
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply_gradients(zip(grads, model.trainable_variables))
      {use}
    """



def _tf1(use, tail=""):
  return _TF1.format(tail=tail, use=use)


# Each source, and the line of its finding (None: silent).
CASES = {
    "tf1: tf.gradients of one variable, never read": (_tf1(""), None),
    "tf2: tape.gradient of a scope, never read": (_TF2.format(use=""),
                                                  None),
    "named in a string only": (_tf1(
        'print("W1_grad is left for later")'), None),
    "named in a comment after the code": (_tf1(
        "", tail="  # W1_grad: see W1_grad below"), None),
    "named in a docstring": (_tf1('"""W1_grad is kept for a plot."""'),
                             None),
    # A variable or a parameter named like a builtin is not the builtin.
    "a variable named vars": (_tf1("").replace(
        "train = optimizer.minimize(loss)",
        "vars = tf.trainable_variables()\n"
        "    train = optimizer.minimize(loss, var_list=vars)"), None),
    "a parameter named eval": (_tf1(
        "def evaluate(eval):\n      return eval + 1"), None),
    # Called, too: the call is of the parameter, not the builtin.
    "a parameter named eval, called": (_tf1(
        "def evaluate(eval):\n      return eval(1)"), None),
    "tf1: the same gradient applied": (_tf1(
        "step = optimizer.apply_gradients([(W1_grad, W1)])"), 8),
    "tf2: the same gradients applied": (_TF2.format(
        use="opt.apply_gradients(zip(head_grads, head))"), 7),
    "read by locals()": (_tf1(
        "step = optimizer.apply_gradients("
        "[(locals()['W1_' + 'grad'], W1)])"), 8),
    "read by eval": (_tf1(
        "step = optimizer.apply_gradients("
        "[(eval('W1_' + 'grad'), W1)])"), 8),
    # Conservative: a read anywhere in the module counts, a function's
    # own parameter of the same name too.
    "a function's own name alike": (_tf1(
        "def show(W1_grad):\n      return W1_grad"), 8),
    "read in an f-string's expression": (_tf1(
        'tf.print(f"{W1_grad}")'), 8),
    "read by getattr of sys.modules": (_tf1(
        "import sys\n    step = optimizer.apply_gradients("
        "[(getattr(sys.modules[__name__], 'W1_' + 'grad'), W1)])"), 8),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_are_found_where_an_expression_may_read_them(name):
  code, line = CASES[name]
  assert scanned.in_text(code, "var-list-filter") == (
      [] if line is None else [("var-list-filter", line)])
