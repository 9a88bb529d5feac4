"""`tfpartial scan`'s `var-list-filter` where a generic helper keeps the
variables whose names hold its parameter and the project calls it with
several literal names (part sixteen's octree CNN: `get_variables_with_
name(name='cls_header')` beside `name='ocnn'`): the helper chooses
nothing, so the finding is at the step. Each source is synthetic."""

import scanned

_HELPER = """\
    import tensorflow as tf


    def get_variables_with_name(name):
      return [v for v in tf.trainable_variables() if name in v.name]


    class Optimizer(object):

      def __init__(self, var_list=None):
        self.var_list = var_list

      def __call__(self, total_loss):
        return tf.train.MomentumOptimizer(0.1, 0.9).minimize(
            total_loss, var_list=self.var_list)


    def head_only(total_loss):
      var_list = get_variables_with_name(name='cls_header')
      return Optimizer(var_list=var_list)(total_loss)


    def restore_backbone():
      return tf.train.Saver(get_variables_with_name(name='ocnn'))
    """


def test_a_generic_helper_s_filter_is_shown_at_the_step():
  assert scanned.found(_HELPER) == [("var-list-filter", 14)]


def test_a_helper_called_with_one_name_stays_the_place():
  text = _HELPER.replace("name='ocnn'", "name='cls_header'")
  assert scanned.found(text) == [("var-list-filter", 5)]


def test_the_helper_called_in_the_step_s_function_is_shown_at_the_call():
  # There the call beside the step, handed the literal name, is the
  # choice (`_helper_choice.names_given`), not the helper's filter.
  text = _HELPER.replace("var_list=self.var_list)",
                         "var_list=get_variables_with_name('fc'))")
  assert scanned.found(text) == [("var-list-filter", 15)]

