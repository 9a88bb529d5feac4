"""`tfpartial scan`: a model's weights swapped for a forward pass and
set back (20181867/Continual-Learning-with-Hypermodels' replay: `backup
= model.get_weights().copy()`, some entries of a copy replaced by an
old task's, `model.set_weights(current)`, the model run, then
`model.set_weights(backup)` before the step) write nothing the step
keeps: no write-back. The same write kept through the step, or set
back only after it, stays found."""

import pytest

import scanned

_SWAP = """\
    import copy
    import tensorflow as tf

    def train_step(model, optimizer, x, y, loss_fn):
      with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
      grads = tape.gradient(loss, model.trainable_variables)
      optimizer.apply_gradients(zip(grads, model.trainable_variables))

    def train_epoch(model, optimizer, data, old_tasks, loss_fn):
      for x, y in data:
        train_step(model, optimizer, x, y, loss_fn)
        with tf.GradientTape() as tape:
          loss = tf.constant(0.0)
          backup = model.get_weights().copy()
          for old, snapshot in old_tasks:
            current = model.get_weights().copy()
            for i in range(2):
              current[i] = copy.deepcopy(old[i])
            model.set_weights(current)
            out = model(snapshot)
            loss += tf.reduce_sum(tf.square(out - snapshot))
            {inside}
          {after}
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        {last}
    """

SILENT = {
    "set back after the loop, before the step": _SWAP.format(
        inside="", after="model.set_weights(backup)", last=""),
    "set back in the loop, after the forward pass": _SWAP.format(
        inside="model.set_weights(backup)", after="", last=""),
    "set back, the backup taken again for a later swap": _SWAP.format(
        inside="", after="model.set_weights(backup)",
        last="backup = model.get_weights().copy()"),
}

FOUND = {
    "never set back": (_SWAP.format(inside="", after="", last=""), 20),
    "set back only after the step": (_SWAP.format(
        inside="", after="", last="model.set_weights(backup)"), 20),
    "set back to a copy taken after the write": (_SWAP.format(
        inside="backup = model.get_weights()\n" + " " * 12 +
        "model.set_weights(backup)", after="", last=""), 20),
}


@pytest.mark.parametrize("name", sorted(SILENT))
def test_weights_swapped_and_set_back_are_no_write_back(name):
  assert scanned.in_text(SILENT[name], "write-back") == []


@pytest.mark.parametrize("name", sorted(FOUND))
def test_weights_kept_through_the_step_are_found(name):
  code, line = FOUND[name]
  assert scanned.in_text(code, "write-back") == [("write-back", line)]
