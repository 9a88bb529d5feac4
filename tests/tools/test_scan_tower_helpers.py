"""`tfpartial scan` on towers whose `compute_gradients` list a helper
returns: `tower_grads.append(tower_gradients(opt, loss))` holds one list
of pairs per tower as the call itself would, so a slice of its transpose
keeps some variables. A helper that returns the tower's fields (its
gradients beside its loss) is a tower function: a slice of the
transpose picks fields, and stays silent. Paraphrased from multi-GPU
training scripts (a `tower_loss`/`average_gradients` pair)."""

import scanned

_HELPER = """\
    import tensorflow as tf

    def tower_gradients(opt, loss):
      %s

    def train(opt, losses):
      tower_grads = []
      for i, loss in enumerate(losses):
        with tf.device('/gpu:%%d' %% i):
          tower_grads.append(tower_gradients(opt, loss))
      per_var = list(zip(*tower_grads))[:-2]
      avg = [(tf.add_n([g for g, _ in gv]) / len(gv), gv[0][1])
             for gv in per_var]
      return opt.apply_gradients(avg)
"""


def test_a_helper_returning_the_pairs_list_is_a_tower_of_pairs():
  assert scanned.found(_HELPER % "return opt.compute_gradients(loss)") == [
      ("var-list-filter", 11)]


def test_a_helper_returning_a_name_bound_to_the_pairs_list_is_one_too():
  body = "grads = opt.compute_gradients(loss)\n      return grads"
  assert scanned.found(_HELPER % body) == [("var-list-filter", 12)]


def test_a_helper_returning_the_towers_fields_is_silent():
  body = "grads = opt.compute_gradients(loss)\n      return grads, loss"
  assert scanned.found(_HELPER % body) == []


def test_a_helper_that_may_return_something_else_is_silent():
  body = ("if loss is None:\n        return None, None\n"
          "      return opt.compute_gradients(loss)")
  assert scanned.found(_HELPER % body) == []
