"""`tfpartial scan` on the shapes found in public code that freezes parts
of variables by hand (docs/guides/scan.md, "How precise it is"): each
snippet is written here in the same shape, with a negative beside it."""

import pytest

import scanned


_found = scanned.in_text


POSITIVE = {
    # NumPy's in-place `*=` on the arrays of `get_weights()`, then written
    # back: the loop name is an element of the list that is written.
    "weight-remask in place over get_weights": ("""\
        class Pruner:
          def reapply(self, net):
            arrays = net.get_weights()
            for k, a in enumerate(arrays):
              a *= self.keep[k]
            net.set_weights(arrays)
            return net
        """, [("weight-remask", 6)]),
    # A Constraint subclass (its name says nothing) multiplying by a value
    # fixed when it was made, with Keras' `multiply([a, b])`.
    "weight-remask constraint subclass, keras multiply": ("""\
        class ZeroSome(Constraint):
          def __init__(self, pattern=None):
            self.pattern = pattern
          def __call__(self, w):
            if self.pattern is not None:
              w = multiply([w, K.variable(value=self.pattern)])
            return w
        """, [("weight-remask", 4)]),
    # A var_list grown with `+=` from scope lookups, beside a restore list
    # filtered the same way (a restore is not a second training group).
    "var-list-filter grown with +=": ("""\
        def build(loss, excluded, whole):
          restore = tf.contrib.framework.get_variables_to_restore(
              exclude=excluded)
          if whole:
            chosen = None
          else:
            chosen = []
            for s in excluded:
              chosen += tf.contrib.framework.get_variables(s)
          opt = tf.train.AdamOptimizer(1e-3)
          return opt.minimize(loss, var_list=chosen)
        """, [("var-list-filter", 9)]),
}

NEGATIVE = {
    # The mask is computed from the weight at each call: a projection.
    "constraint subclass projecting": """\
        class NonNegative(Constraint):
          def __call__(self, w):
            return w * K.cast(K.greater_equal(w, 0.), K.floatx())
        """,
    "constraint subclass scaling by its own norm": """\
        class UnitNorm(Constraint):
          def __init__(self, axis=0):
            self.axis = axis
          def __call__(self, w):
            return w / (K.epsilon() + K.sqrt(K.sum(K.square(w),
                                                   axis=self.axis)))
        """,
    # Arrays of `get_weights()` scaled in place, with no mask, and a loop
    # over another list's elements.
    "in-place scaling without a mask": """\
        def shrink(net, factor):
          arrays = net.get_weights()
          for a in arrays:
            a *= factor
          net.set_weights(arrays)
        """,
    # Two groups filtered by scope, each trained: split training.
    "two scope lists grown with +=": """\
        def build(g_loss, d_loss, g_scopes, d_scopes):
          g_vars, d_vars = [], []
          for s in g_scopes:
            g_vars += tf.contrib.framework.get_variables(s)
          for s in d_scopes:
            d_vars += tf.contrib.framework.get_variables(s)
          opt = tf.train.AdamOptimizer(1e-4)
          return (opt.minimize(g_loss, var_list=g_vars),
                  opt.minimize(d_loss, var_list=d_vars))
        """,
    # A restore list filtered by scope and a full training.
    "restore list only": """\
        def build(loss, excluded):
          restore = tf.contrib.framework.get_variables_to_restore(
              exclude=excluded)
          saver = tf.train.Saver(restore)
          return tf.train.AdamOptimizer(1e-3).minimize(loss), saver
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_real_shape_found(name):
  code, expected = POSITIVE[name]
  assert _found(code) == expected


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_real_shape_not_found(name):
  assert _found(NEGATIVE[name]) == []
