"""`tfpartial scan`'s `stop-gradient-mix` on `tf.contrib.model_pruning`'s
`apply_mask` reached through a module of the project that imports it
(part twenty-eight's Sparse-DeepSpeech, 28e: `cudnn_pruning.apply_mask(
h1, scope='h1')`, `cudnn_pruning` importing `apply_mask` from the
library), and the masks' update op built only under `if FLAGS.apply_mask
and FLAGS.update_masks:` with `update_masks` off by default: the loaded
masks stay fixed, so the masked weights' zeroed elements never train.
Silent twins: an `and` whose flags are all on by default, an `or` one of
whose flags is on, the update built unguarded (magnitude pruning), and a
project's own `apply_mask` that is not the library's."""

import pytest

import scanned

_SPARSITY = """\
    import tensorflow as tf
    from tensorflow.contrib.model_pruning.python import pruning
    from tensorflow.contrib.model_pruning.python.pruning import apply_mask

    class CudnnPruning(pruning.Pruning):
        pass
    """

_MAIN = """\
    import tensorflow as tf
    from util import cudnn_pruning

    tf.app.flags.DEFINE_boolean('update_masks', UPDATE, 'update the masks')
    tf.app.flags.DEFINE_boolean('apply_mask', APPLY, 'apply binary masks')
    FLAGS = tf.app.flags.FLAGS

    def dense(x, h1):
        if FLAGS.apply_mask:
            h1 = cudnn_pruning.apply_mask(h1, scope='h1')
        return tf.matmul(x, h1)

    def train(loss, global_step):
        step = tf.train.AdamOptimizer(1e-4).minimize(loss, global_step)
        if TEST:
            p = cudnn_pruning.CudnnPruning(None, global_step=global_step)
            mask_update_op = p.conditional_mask_update_op()
        else:
            mask_update_op = []
        return tf.group(step, mask_update_op)
    """

_AND = "FLAGS.apply_mask and FLAGS.update_masks"


def _found(update="False", apply="False", test=_AND, sparsity=_SPARSITY):
  main = _MAIN.replace("UPDATE", update).replace("APPLY", apply).replace(
      "TEST", test)
  return scanned.in_project({"main.py": main,
                             "util/cudnn_pruning.py": sparsity,
                             "util/__init__.py": ""})


@pytest.mark.parametrize("apply", ["False", "True"])
def test_a_reexported_apply_mask_with_updates_off_by_default_is_found(
    apply):
  assert _found(apply=apply) == [("stop-gradient-mix", "main.py", 10)]


def test_apply_mask_imported_by_name_from_the_project_module_is_found():
  main = _MAIN.replace(
      "from util import cudnn_pruning",
      "from util import cudnn_pruning\n"
      "from util.cudnn_pruning import apply_mask").replace(
          "cudnn_pruning.apply_mask", "apply_mask").replace(
              "UPDATE", "False").replace("APPLY", "True").replace(
                  "TEST", _AND)
  assert scanned.in_project({"main.py": main,
                             "util/cudnn_pruning.py": _SPARSITY,
                             "util/__init__.py": ""}) == [
      ("stop-gradient-mix", "main.py", 11)]


def test_the_library_imported_here_under_an_and_of_flags_is_found():
  main = _MAIN.replace(
      "from util import cudnn_pruning",
      "from tensorflow.contrib.model_pruning.python import pruning\n"
      "from tensorflow.contrib.model_pruning.python.pruning import apply_mask"
  ).replace("cudnn_pruning.apply_mask", "apply_mask").replace(
      "cudnn_pruning.CudnnPruning", "pruning.Pruning").replace(
          "UPDATE", "False").replace("APPLY", "True").replace("TEST", _AND)
  assert scanned.in_project({"main.py": main}) == [
      ("stop-gradient-mix", "main.py", 11)]


@pytest.mark.parametrize("update, apply, test", [
    # Updates on by default: magnitude pruning recomputes the masks.
    ("True", "True", _AND),
    # Either flag builds the update, one on by default.
    ("False", "True", "FLAGS.apply_mask or FLAGS.update_masks"),
    # Built unguarded.
    ("False", "False", "True"),
], ids=["and_all_on", "or_one_on", "unguarded"])
def test_masks_updated_by_default_are_silent(update, apply, test):
  assert _found(update, apply, test) == []


def test_a_projects_own_apply_mask_is_silent():
  # Not the library's: a dropout the project calls `apply_mask`.
  sparsity = """\
    import tensorflow as tf

    def apply_mask(x, scope):
        return tf.nn.dropout(x, rate=0.1)

    class CudnnPruning(object):
        def conditional_mask_update_op(self):
            return tf.no_op()
    """
  assert _found(sparsity=sparsity) == []
