"""`tfpartial scan`'s `stop-gradient-mix` on a weight masked by
`tf.contrib.model_pruning`'s `apply_mask`: reported when the masks stay
fixed (their update op built only under a flag that is off by default),
silent when magnitude pruning recomputes them with each step."""

import pytest

import scanned

_MODEL = """\
    from tensorflow.contrib.model_pruning.python.pruning import apply_mask
    from tensorflow.contrib.model_pruning.python.pruning import Pruning

    flags.DEFINE_string('pruning_hparams', DEFAULT, 'pruning settings')

    def embed(ids, vocab_size, width):
      table = apply_mask(tf.get_variable('word_embeddings',
                                         [vocab_size, width]))
      return tf.gather(table, ids)

    def train_op(loss, global_step, prune_config_flag):
      step = tf.train.AdamOptimizer(1e-4).minimize(loss, global_step)
      if prune_config_flag:
        prune = Pruning(prune_config_flag, global_step=global_step)
        update = prune.conditional_mask_update_op()
      else:
        update = tf.no_op()
      return tf.group(step, update)

    op = train_op(loss, step, prune_config_flag=FLAGS.pruning_hparams)
    """


@pytest.mark.parametrize("default, expected", [
    # No pruning settings by default: the loaded masks never change.
    ("''", [("stop-gradient-mix", 7)]),
    # Pruning by default: the masks are recomputed from the weights.
    ("'begin_pruning_step=0,target_sparsity=0.9'", []),
], ids=["masks-fixed-by-default", "masks-recomputed"])
def test_masks_of_the_pruning_library(default, expected):
  assert scanned.in_text(_MODEL.replace("DEFAULT", default)) == expected
