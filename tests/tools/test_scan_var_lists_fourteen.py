"""`tfpartial scan`'s `var-list-filter` on lists that leave variables
out in ways part fourteen's real code showed: a loop that skips the
pairs whose variable a name test picks (`if any(n in var.name for n in
self.exclude_vars): continue`) before it keeps the rest, and a second
such filter after the first step shown at the first; a filtered step of
one function beside another function's step over a list nothing binds
(no other half of a model), or over every variable; a helper's list that
adds the embedding tables only under a test of a flag it is given,
passed a flag that varies (also where a comprehension in the constructor
reuses the name of the local helper that makes the variables); a scope
of a few scalars trained in one arm of a flag's `if` whose other arm
trains the list the model returned; a list handed to a function trained
beside the same loss's step over every variable. The look-alikes stay
silent: a skip of the pairs without a gradient, a skip whose branch
keeps the pair too; another function's step over a list of its own or
one made elsewhere (over every variable it is another way to fine-tune:
see test_scan_var_lists_relaxed); the flag's helper passed a literal, or
testing what is no parameter; the other arm training every variable or
the same scope, a handed list trained alone or beside another loss's
step. Synthetic sources in the shape of real code."""

import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan


def _found(text, others=()):
  sources = [_files.Source("t.py", textwrap.dedent(text)), *(
      _files.Source(path, textwrap.dedent(source)) for path, source in others)]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, f.line) for f in findings]


_SKIPPED = """\
    def train(loss):
        optimizer = tf.train.AdamOptimizer(0.1)
        grad_and_vars = optimizer.compute_gradients(loss)
        kept = []
        for grad, var in grad_and_vars:
            if {test}:
                {skip}
                continue
            kept.append((grad, var))
        return optimizer.apply_gradients(kept)
    """

_KEPT_BY_AN_OBJECT = """\
    class Optimizer:
        def __init__(self, exclude_vars=None, skip_vars=None):
            self.exclude_vars = exclude_vars
            self.skip_vars = skip_vars

        def __call__(self, loss):
            optimizer = tf.train.AdamOptimizer(0.1)
            grad_and_vars = optimizer.compute_gradients(loss)
            if self.exclude_vars is not None:
                kept = []
                for grad, var in grad_and_vars:
                    if any(name in var.name for name in self.exclude_vars):
                        LOGGER.info("Not training %s", var.name)
                        continue
                    kept.append((grad, var))
                grad_and_vars = kept
            train_op = optimizer.apply_gradients(grad_and_vars)
            if self.skip_vars:
                rest = []
                for grad, var in grad_and_vars:
                    if any(name in var.name for name in self.skip_vars):
                        continue
                    rest.append((grad, var))
                skipping = optimizer.apply_gradients(rest)
                train_op = tf.cond(step < 10, lambda: skipping,
                                   lambda: train_op)
            return train_op
    """

_TWO_BUILDERS = """\
    def create_optimizer(loss, lr):
        optimizer = tf.train.AdamOptimizer(lr)
        {other}
        grads = tf.gradients(loss, tvars)
        return optimizer.apply_gradients(zip(grads, tvars))


    def create_optimizer_v10(loss, lr):
        optimizer = tf.train.AdamOptimizer(lr)
        tvars = tf.trainable_variables()
        kept = [v for v in tvars if 'pooler' in v.name or 'bert' not in v.name]
        grads = tf.gradients(loss, kept)
        return optimizer.apply_gradients(zip(grads, kept))
    """

_KB = """\
    class KB:
        def __init__(self, data):
            def variable(shape, name):
                return tf.Variable(tf.zeros(shape), name=name)
            self.entities = variable([data.n, 4], 'entities')
            self.rules = [variable([3, 4], 'rules')]
            pairs = dict(a=variable([2, 4], 'a'))
            self.rules += [variable for _, variable in pairs.items()]

        def get_trainable_variables(self, rules_only=False):
            variables = []
            if {test}:
                variables += [self.entities]
            variables += self.rules
            return variables
    """

_KB_TRAINED = """\
    from kb import KB

    def main(data, n_only_rules_epochs):
        kb = KB(data)
        optimizer = tf.train.AdamOptimizer(0.1)
        for epoch, x in enumerate(data):
            with tf.GradientTape() as tape:
                rules_only = n_only_rules_epochs > epoch
                loss = tf.reduce_sum(kb.entities * x)
            trained = kb.get_trainable_variables(rules_only={flag})
            grads = tape.gradient(loss, trained)
            optimizer.apply_gradients(zip(grads, trained))
    """

_EITHER_ARM = """\
    def model_fn(features, labels, flag_bias, model_class):
        model = model_class()
        logits, variables_graph = model(features)
        if flag_bias:
            with tf.variable_scope('bias_opt'):
                beta = tf.get_variable('beta', initializer=1.0)
            variables_bias = tf.get_collection(
                tf.GraphKeys.GLOBAL_VARIABLES, scope='bias_opt')
            logits = beta * logits
        loss = tf.losses.softmax_cross_entropy(labels, logits)
        optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
        if flag_bias:
            train_op = optimizer.minimize(loss, var_list=variables_bias)
        else:
            train_op = optimizer.minimize(loss, var_list={other})
        return train_op
    """

_HANDED = """\
    class Solver:
        def __init__(self, loss, aux_loss, fc_vars=None):
            self.loss = loss
            self.solver_op = {whole}
            if fc_vars is not None:
                self.fc_solver_op = self.get_solver_op(var_list=fc_vars)

        def get_solver_op(self, var_list=None, loss=None):
            if var_list is None:
                var_list = tf.trainable_variables()
            if loss is None:
                loss = self.loss
            return tf.train.AdamOptimizer(0.1).minimize(loss, var_list=var_list)
    """

POSITIVE = {
    "skipped_by_name": (_SKIPPED.format(
        test="'embedding' in var.name", skip="pass"), 9),
    "skipped_by_names_logged": (_SKIPPED.format(
        test="any(s in var.name for s in frozen_scopes)",
        skip="print('frozen', var.name)"), 9),
    "kept_by_an_object": (_KEPT_BY_AN_OBJECT, 15),
    "beside_an_unbound_list": (_TWO_BUILDERS.format(other="pass"), 11),
    "beside_every_variable": (_TWO_BUILDERS.format(
        other="tvars = tf.trainable_variables()"), 11),
    "scope_against_the_models_list": (_EITHER_ARM.format(
        other="variables_graph"), 7),
    "handed_beside_every_variable": (_HANDED.format(
        whole="self.get_solver_op()"), 6),
}

NEGATIVE = {
    "no_gradient_skipped": _SKIPPED.format(
        test="grad is None", skip="print('no gradient', var.name)"),
    "skip_keeps_it_too": _SKIPPED.format(
        test="'embedding' in var.name",
        skip="kept.append((tf.clip_by_norm(grad, 1.0), var))"),
    "beside_a_list_of_its_own": _TWO_BUILDERS.format(
        other="tvars = critic.trainable_variables"),
    "beside_a_list_made_elsewhere": _TWO_BUILDERS.format(
        other="tvars = build_var_list()"),
    "scope_against_every_variable": _EITHER_ARM.format(
        other="tf.trainable_variables()"),
    "scope_against_itself": _EITHER_ARM.format(other="variables_bias"),
    "handed_alone": _HANDED.format(whole="None"),
    "handed_beside_another_loss": _HANDED.format(
        whole="self.get_solver_op(loss=aux_loss)"),
}


FLAGGED = {
    "flag_tested_is_false": ("rules_only is False", "rules_only", 10),
    "flag_tested_not": ("not rules_only", "rules_only", 10),
}

NOT_FLAGGED = {
    "flag_passed_a_literal": ("not rules_only", "True"),
    "an_attribute_tested": ("self.entities is not None", "rules_only"),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_a_helper_leaving_out_what_a_flag_passed_to_it_says(name):
  test, flag, line = FLAGGED[name]
  assert _found(_KB_TRAINED.format(flag=flag), [
      ("kb.py", _KB.format(test=test))]) == [("var-list-filter", line)]


@pytest.mark.parametrize("name", sorted(NOT_FLAGGED))
def test_a_helper_without_a_varying_flag_stays_silent(name):
  test, flag = NOT_FLAGGED[name]
  assert _found(_KB_TRAINED.format(flag=flag), [
      ("kb.py", _KB.format(test=test))]) == []


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_a_list_leaving_out_part_of_the_model(name):
  text, line = POSITIVE[name]
  assert _found(text) == [("var-list-filter", line)]


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_a_look_alike_stays_silent(name):
  assert _found(NEGATIVE[name]) == []
