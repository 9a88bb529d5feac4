"""`tfpartial scan`'s `var-list-filter` where a helper chooses the list a
step trains (slim's `_get_variables_to_train()`, a helper of another
module): the finding is at the statement inside the helper that keeps
some variables, and its message names the step and the call. Each source
is synthetic, in the shape of part eleven's slim trainers."""

import re
import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _scan

_SLIM_HELPER = textwrap.dedent("""\
    def _get_variables_to_train():
      if FLAGS.trainable_scopes is None:
        return tf.trainable_variables()
      scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
      variables_to_train = []
      for scope in scopes:
        variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
        variables_to_train.extend(variables)
      return variables_to_train
    """)

_SLIM_MAIN = textwrap.dedent("""\
    def main(_):
      variables_to_train = {call}
      total_loss, grads = model_deploy.optimize_clones(
          clones, optimizer, var_list=variables_to_train)
      return optimizer.apply_gradients(grads)
    """)

PLACED = {
    # slim's trainer: the scopes of the command line, kept per scope.
    "slim's helper in the same module": (
        {"t.py": "FLAGS = tf.app.flags.FLAGS\n\n\n" + _SLIM_HELPER + "\n\n"
                 + _SLIM_MAIN.format(call="_get_variables_to_train()")},
        [("var-list-filter", "t.py", 10)]),
    # SSD's trainer: the helper lives in a module of utilities.
    "a helper of another module": (
        {"tf_utils.py": "FLAGS = tf.app.flags.FLAGS\n\n\n" + _SLIM_HELPER,
         "train.py": "import tf_utils\n\n\n" + _SLIM_MAIN.format(
             call="tf_utils._get_variables_to_train()")},
        [("var-list-filter", "tf_utils.py", 10)]),
    # SSR's pruning trainer: slim's scopes when `--update_layer_name` is
    # not given, else the variables of the layer it names; the flag given
    # is the choice (the other branch is what runs without it).
    "a helper's branch for a flag given": ({"t.py": """\
        FLAGS = tf.app.flags.FLAGS

        def _get_variables_to_train():
          if FLAGS.update_layer_name is None:
            if FLAGS.trainable_scopes is None:
              return tf.trainable_variables()
            scopes = [s.strip() for s in FLAGS.trainable_scopes.split(',')]
            variables_to_train = []
            for scope in scopes:
              variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
              variables_to_train.extend(variables)
          else:
            variables_to_train = []
            for var in tf.trainable_variables():
              if FLAGS.update_layer_name in var.name:
                variables_to_train.append(var)
          return variables_to_train

        def main(_):
          variables_to_train = _get_variables_to_train()
          total_loss, grads = model_deploy.optimize_clones(
              clones, optimizer, var_list=variables_to_train)
          return optimizer.apply_gradients(grads)
        """}, [("var-list-filter", "t.py", 16)]),
}


@pytest.mark.parametrize("name", sorted(PLACED))
def test_a_list_a_helper_chooses_is_found_in_the_helper(name):
  files, expected = PLACED[name]
  assert scanned.in_project(files) == expected


def test_the_message_names_the_step_and_the_call():
  text = "FLAGS = tf.app.flags.FLAGS\n\n\n" + _SLIM_HELPER + "\n\n" + (
      _SLIM_MAIN.format(call="_get_variables_to_train()"))
  [finding] = _scan.scan_text("t.py", text)
  assert re.findall(r"\(line (\d+)\)", finding.message) == ["17", "16"]
  assert "`_get_variables_to_train()`" in finding.message
