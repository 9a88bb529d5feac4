"""`tfpartial scan`'s `var-list-filter` where the step is a call that
names its list `trainable_variables=` (TensorFlow Probability's
`tfp.math.minimize`, `tfp.vi.fit_surrogate_posterior`), and where a
fitting helper the scan cannot read (imported from a library, part
twenty's streaming GP planner: `optimize_model(self.param_model,
trainable_variables=...)` from `sgptools`) is given a filtered or sliced
list by `trainable_variables=` or `variables_to_train=`: that keyword
alone says the call trains the list. Not `var_list=` nor `variables=`
of a helper the scan cannot read (a saver's, a restore's). Each source is
synthetic."""

import ast
import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _scan
from tfpartial._tools.scan.idioms._sources._train_step import var_list_of


def _call(text):
  return ast.parse(text).body[0].value


def test_a_keyword_names_the_list_before_minimize_s_last_argument():
  chosen = var_list_of(_call(
      "tfp.math.minimize(loss_fn, 100, optimizer, trainable_variables=v)"))
  assert isinstance(chosen, ast.Name) and chosen.id == "v"


def test_minimize_s_last_positional_argument_without_the_keyword():
  chosen = var_list_of(_call("opt.minimize(closure, variables)"))
  assert isinstance(chosen, ast.Name) and chosen.id == "variables"


_TFP = """\
    import tensorflow_probability as tfp


    def fit(model, loss_fn, optimizer):
      return tfp.math.minimize(
          loss_fn, 100, optimizer,
          trainable_variables={chosen})
    """


@pytest.mark.parametrize("chosen, expected", [
    ("model.trainable_variables[1:]", [("var-list-filter", 7)]),
    ("[v for v in model.trainable_variables if 'head' in v.name]",
     [("var-list-filter", 7)]),
    ("model.trainable_variables", []),
], ids=["sliced", "by-name", "whole"])
def test_tfp_minimize_trains_its_trainable_variables(chosen, expected):
  assert scanned.found(_TFP.format(chosen=chosen)) == expected


_SCIPY = """\
    import gpflow


    def fit(model):
      opt = gpflow.optimizers.Scipy()
      opt.minimize(model.training_loss, {chosen})
    """


@pytest.mark.parametrize("chosen, expected", [
    ("model.trainable_variables[1:]", [("var-list-filter", 6)]),
    ("model.trainable_variables", []),
], ids=["sliced", "whole"])
def test_gpflow_scipy_minimize_s_positional_list(chosen, expected):
  assert scanned.found(_SCIPY.format(chosen=chosen)) == expected


# A planner refitting its streaming GP: the inducing points (the first
# trainable variable) held unless configured to train.
_PLANNER = """\
    from sgptools.utils.gpflow import optimize_model


    class Planner(object):

      def update_param(self, data):
        self.param_model.update(data)
        trainable_variables = None if self.train_param_inducing else \\
            self.param_model.trainable_variables[1:]
        optimize_model(self.param_model,
                       trainable_variables=trainable_variables,
                       **self.param_model_kwargs)
    """


def test_a_slice_given_to_a_helper_outside_the_scanned_code():
  assert scanned.found(_PLANNER) == [("var-list-filter", 9)]


def test_its_message_says_the_helper_is_outside_the_scanned_code():
  findings = _scan.scan_text("p.py", textwrap.dedent(_PLANNER))
  assert len(findings) == 1
  assert "`optimize_model` (line 10)" in findings[0].message
  assert "outside the scanned code" in findings[0].message


_HELPER = """\
    import tensorflow as tf
    from trainers import {name}


    def fine_tune(model, loss):
      {line}
    """


@pytest.mark.parametrize("name, line, expected", [
    ("optimize_model",
     "optimize_model(model, trainable_variables=model.trainable_variables"
     "[2:])", [("var-list-filter", 6)]),
    ("train",
     "train(loss, variables_to_train=[v for v in tf.trainable_variables() "
     "if v.name.startswith('head')])", [("var-list-filter", 6)]),
    # The whole list: nothing left out.
    ("optimize_model",
     "optimize_model(model, trainable_variables=model.trainable_variables)",
     []),
    # `variables=` and `var_list=` of a helper the scan cannot read may
    # restore, save or count them.
    ("train",
     "train(loss, variables=[v for v in tf.trainable_variables() "
     "if v.name.startswith('head')])", []),
    ("restore",
     "restore(model, var_list=[v for v in tf.global_variables() "
     "if 'enc' in v.name])", []),
], ids=["sliced", "variables-to-train", "whole", "variables", "restore"])
def test_helpers_outside_the_scanned_code(name, line, expected):
  assert scanned.found(_HELPER.format(name=name, line=line)) == expected


def test_a_saver_of_filtered_variables_stays_silent():
  assert scanned.found("""\
      import tensorflow as tf

      saver = tf.train.Saver(
          var_list=[v for v in tf.global_variables() if 'enc' in v.name])
      """) == []


_GAN = """\
    import tensorflow as tf
    from trainers import train_step


    def build(g_loss, d_loss):
      g_vars = [v for v in tf.trainable_variables()
                if v.name.startswith('gen')]
      d_vars = [v for v in tf.trainable_variables()
                if v.name.startswith('disc')]
      return (train_step(g_loss, trainable_variables=g_vars),
              {second})
    """


@pytest.mark.parametrize("second, expected", [
    # Between them the two calls train every variable.
    ("train_step(d_loss, trainable_variables=d_vars)", []),
    # The discriminator's half trained by no call: left out.
    ("d_vars", [("var-list-filter", 6)]),
], ids=["both-halves", "one-half"])
def test_a_gan_s_halves_each_given_to_a_helper(second, expected):
  assert scanned.found(_GAN.format(second=second)) == expected


def test_a_function_of_the_project_is_read_not_guessed():
  # The project's own `report` trains nothing: the keyword says nothing.
  assert scanned.found("""\
      import tensorflow as tf


      def report(loss, trainable_variables):
        print(loss, len(trainable_variables))


      def fine_tune(model, loss):
        report(loss, trainable_variables=model.trainable_variables[1:])
      """) == []


def test_a_library_s_fit_named_by_its_module_path():
  assert scanned.found("""\
      import tensorflow_probability as tfp


      def fit(target_log_prob, surrogate, optimizer):
        return tfp.vi.fit_surrogate_posterior(
            target_log_prob, surrogate, optimizer, 200,
            trainable_variables=surrogate.trainable_variables[1:])
      """) == [("var-list-filter", 7)]


def test_a_function_that_passes_its_list_on_to_such_a_helper():
  # Found where the function is given the slice.
  assert scanned.found("""\
      from sgptools.utils.gpflow import optimize_model


      def refit(model, variables):
        optimize_model(model, trainable_variables=variables)


      def update(model):
        refit(model, model.trainable_variables[1:])
      """) == [("var-list-filter", 9)]


_METHOD = """\
    import tensorflow as tf
    {defined}

    class Runner(object):

      def update(self, model):
        self.trainer.fit(model,
                         trainable_variables=model.trainable_variables[1:])
    """


@pytest.mark.parametrize("defined, expected", [
    ("", [("var-list-filter", 8)]),
    # A method of the project of that name is read instead: it only logs.
    ("\n\n    class Trainer(object):\n\n"
     "      def fit(self, model, trainable_variables):\n"
     "        self.log(len(trainable_variables))\n", []),
], ids=["unread", "the-project-s-own"])
def test_a_method_the_flow_cannot_follow(defined, expected):
  assert scanned.found(_METHOD.format(defined=defined)) == expected
