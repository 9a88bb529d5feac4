"""`tfpartial scan`'s `var-list-filter` where a helper chooses the list a
step trains (slim's `_get_variables_to_train()`, a helper of another
module): the finding is at the statement inside the helper that keeps
some variables, and its message names the step and the call. Each source
is synthetic, in the shape of part eleven's slim trainers."""

import re
import textwrap

import pytest
import scanned

from tfpartial._tools.scan import _files
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
    # A multi-path spatial transformer: under a flag, each path's helper
    # keeps the last blocks of its part's scope, else the whole part; two
    # filters in one function, each narrower than its own part.
    "two helpers each keeping sub-scopes of their part": ({"t.py": """\
        LOC = 'stn/localization'
        CLS = 'stn/classification'
        loc_scopes = ['stn/localization/logits', 'stn/localization/Mixed_5c']
        cls_scopes = ['stn/classification/logits', 'stn/classification/Mixed_5c']
        FLAGS = tf.app.flags.FLAGS

        def _get_loc_vars_to_train(train_scope):
          if FLAGS.train_partial_layers:
            chosen = []
            for scope in train_scope:
              chosen.extend(tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
            return chosen
          return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, LOC)

        def _get_cls_vars_to_train(train_scope):
          if FLAGS.train_partial_layers:
            chosen = []
            for scope in train_scope:
              chosen.extend(tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope))
            return chosen
          return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, CLS)

        def main(_):
          loc_vars = _get_loc_vars_to_train(loc_scopes)
          cls_vars = _get_cls_vars_to_train(cls_scopes)
          _, loc_grads = model_deploy.optimize_clones(
              clones, optimizer_loc, var_list=loc_vars)
          loss, cls_grads = model_deploy.optimize_clones(
              clones, optimizer_cls, var_list=cls_vars)
        """}, [("var-list-filter", "t.py", 11), ("var-list-filter", "t.py", 19)]),
    # A fine-grained classifier's own helper, named as slim's library
    # function (`get_trainable_variables(scopes)`): the project's, read.
    "a helper of the project named as a library's": ({"t.py": """\
        def get_trainable_variables(trainable_scopes):
          if trainable_scopes is None:
            return tf.trainable_variables()
          variables_to_train = []
          for scope in trainable_scopes:
            variables = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope)
            variables_to_train.extend(variables)
          return variables_to_train

        def train(total_loss, optimizer, trainable_scopes=None):
          trainable_vars = get_trainable_variables(trainable_scopes)
          return slim.learning.create_train_op(
              total_loss, optimizer, variables_to_train=trainable_vars)
        """}, [("var-list-filter", "t.py", 6)]),
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


def test_two_helpers_keeping_whole_parts_stay_silent():
  # The same two helpers keeping, under the flag, the scope of their
  # whole part: between them the two steps train the model.
  text = PLACED["two helpers each keeping sub-scopes of their part"][0][
      "t.py"].replace(
          "['stn/localization/logits', 'stn/localization/Mixed_5c']",
          "['stn/localization']").replace(
              "['stn/classification/logits', 'stn/classification/Mixed_5c']",
              "['stn/classification']")
  assert scanned.in_project({"t.py": text}) == []


def test_a_helper_of_another_module_names_the_step_s_file():
  files = PLACED["a helper of another module"][0]
  sources = [_files.Source(path, text) for path, text in files.items()]
  [finding], _ = _scan.scan_project(sources)
  assert finding.path == "tf_utils.py"
  assert finding.message.startswith(
      "`var_list` filtered by name or scope for `optimize_clones` (line 6), "
      "returned by `_get_variables_to_train()` (line 5) in "
      "train.py: ")
