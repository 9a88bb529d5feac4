"""Part forty's motivation head (40i): a step's list is the values of the
dicts of variables the model is given whole, minus some named entries
(`list(set(w.values() + b.values()) - set([w['W_beta']]) -
set([w['W_Um']]))`): the model reads the entries left out and no step
trains them, so they stay fixed: found at the list, as a hand-written
list of some entries (`[w['out']]`) is. Silent: entries another step
trains (by the dict's values or by those entries), a dict the model is
not given whole, a name taken out that is no entry, a key the dict lacks, a
dict of anything but variables, a dict of variables only a step of their
own reads.

Left as strict xfails: the list is recognised easily (a recogniser of
the complement beside `_hand_made._some_entries` made every case here
pass), but part 40's tree stays silent after it: its three losses each
train their own dicts' list (scene, action, motivation), so the gate
that reads a step as one half of a split whose other halves other
losses train (`_filter_gates._own_training` -> `_split`) drops it, and
that halves gate is being reworked on branch t63-halves; the cases below
that need the finding wait for it (see the report of t63-miss40)."""

import pytest

import scanned

_SOURCE = '''
import tensorflow as tf


def model_fn(x, w, b):
    h = tf.matmul(x, w['w1']) + b['b1']
    return tf.matmul(h, w['out']) + tf.matmul(h, w['beta'])


def run_training():
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 2])
    w = {
        'w1': tf.get_variable('mc_w1', [4, 8]),
        'out': tf.get_variable('mc_out', [8, 2]),
        'beta': tf.get_variable('beta', [8, 2]),
    }
    b = {'b1': tf.get_variable('mc_b1', [8])}
    varlist = {varlist}
    logit = {model}
    loss = tf.reduce_mean(tf.square(logit - y))
    opt = tf.train.AdamOptimizer(0.1)
    grads = opt.compute_gradients(loss, varlist)
    train = tf.group(opt.apply_gradients(grads))
    {other}
    sess = tf.Session()
    for step in range(100):
        sess.run(train)


run_training()
'''

_MINUS = "list(set(list(w.values()) + list(b.values())) - set([w['beta']]))"
_MODEL = "model_fn(x, w, b)"


def _source(varlist=_MINUS, model=_MODEL, other="pass"):
  return _SOURCE.replace("{varlist}", varlist).replace(
      "{model}", model).replace("{other}", other)


def _line(source):
  return next(i for i, text in enumerate(source.split("\n"), 1)
              if "varlist = " in text)


def _found(source):
  return [("var-list-filter", _line(source))]


_CHAINED = ("list(set(w.values() + b.values()) - set([w['beta']]) "
            "- set([w['out']]))")
_LITERAL = "list(set(list(w.values()) + list(b.values())) - {w['beta']})"

_WAITS = pytest.mark.xfail(strict=True, reason=(
    "blocked by the halves gate (t63-halves): no recogniser of a dict's "
    "values minus entries is committed until it is settled"))

# Part 40's shape: three dicts, each trained by a loss of its own, the
# motivation loss reading the others' outputs; only that step runs.
_THREE = _SOURCE.replace("{model}", "model_fn(x, w, b) + tf.matmul(x, s['s1'])"
                         ).replace("{varlist}", _MINUS).replace("{other}", (
    "s_loss = tf.reduce_sum(tf.matmul(x, s['s1']))\n"
    "    s_step = tf.train.AdamOptimizer(0.1).minimize(\n"
    "        s_loss, var_list=list(s.values()))")).replace(
        "    b = {'b1'", "    s = {'s1': tf.get_variable('s1', [4, 2])}\n"
        "    b = {'b1'")

_CASES = [
    pytest.param(_source(), _found(_source()), id="values-minus-entry",
                 marks=_WAITS),
    pytest.param(_source(_CHAINED), _found(_source(_CHAINED)),
                 id="py2-values-minus-two", marks=_WAITS),
    pytest.param(_source(_LITERAL), _found(_source(_LITERAL)),
                 id="set-literal", marks=_WAITS),
    pytest.param(_THREE, _found(_THREE), id="three-losses", marks=_WAITS),
    pytest.param(_source(other=(
        "head = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=list("
        "b.values()))")), _found(_source()), id="other-step-other-dict",
                 marks=_WAITS),
    pytest.param(_source(other=(
        "extra = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=["
        "w['beta']])")), [], id="left-out-trained-by-hand-list"),
    pytest.param(_source(other=(
        "extra = tf.train.AdamOptimizer(0.01).minimize(loss, var_list=list("
        "w.values()))")), [], id="left-out-trained-by-values"),
    pytest.param(_source(
        "list(set(list(w.values()) + list(b.values())) - set([x]))"), [],
                 id="not-an-entry"),
    pytest.param(_source(
        "list(set(list(w.values()) + list(b.values())) - set([w['nope']]))"),
                 [], id="key-not-in-dict"),
    pytest.param(_source().replace(
        "'beta': tf.get_variable('beta', [8, 2]),",
        "'beta': tf.constant(1.0, shape=[8, 2]),"), [],
                 id="not-a-variable"),
]


@pytest.mark.parametrize("source, expected", _CASES)
def test_dict_complement(source, expected):
  found = [f for f in scanned.found(source) if f[0] == "var-list-filter"]
  assert found == expected
