"""`tfpartial scan`'s `var-list-filter` gates of round twenty-nine, as a
review of them asked: a network loaded from saved arrays is looked for
in every function, whatever other class defines one of the same name; a
step's kept scope leaves a loaded one out only as TensorFlow's scope
filter matches, from the start of the name; an A3C worker's list paired
with its gradients is no freeze only when those gradients are taken
over the local network's whole list; a loop's counter is a training
phase only in the outermost loop around the test; and only a block
opening a variable scope is the one `get_variable_scope()` reads inside
it. Each source is synthetic."""

import scanned
import test_scan_a3c_workers as a3c
import test_scan_dropped_later as dropped
import test_scan_lists_twenty_nine as twenty_nine
import test_scan_loaded_network as loaded

_SRNTT = loaded._SRNTT % (loaded._FEATURE, loaded._KEPT, "self.net_upscale")

# A class after SRNTT with methods of the same names.
_OTHER = """
    class Other:
        def %s(self, inputs, maps=None):
            return None, None
    """


def test_a_later_class_with_a_method_named_like_the_training_one():
  assert scanned.found(_SRNTT + _OTHER % "train") == [("var-list-filter", 31)]


def test_a_later_class_with_a_method_named_like_the_network_one():
  assert scanned.found(_SRNTT + _OTHER % "model") == [("var-list-filter", 31)]


def test_a_kept_scope_inside_the_loaded_name_keeps_it_in():
  # `startswith('extractor')` keeps no variable of `content_extractor`.
  source = loaded._SRNTT % (
      loaded._FEATURE,
      "v.name.startswith('texture_transfer') or "
      "v.name.startswith('extractor')", "self.net_upscale")
  assert scanned.found(source) == [("var-list-filter", 31)]


def test_a_kept_scope_the_loaded_name_starts_with_still_keeps_it():
  source = loaded._SRNTT % (
      loaded._FEATURE,
      "v.name.startswith('texture_transfer') or "
      "v.name.startswith('content')", "self.net_upscale")
  assert scanned.found(source) == []


def _workers(thread):
  files = {"thread.py": thread, "network.py": a3c._NETWORK,
           "applier.py": a3c._APPLIER, "train.py": a3c._TRAIN}
  return scanned.in_project(files)


_PAIRED = "self._get_accum_grad_name(x) in accum_grad_names"


def test_a_worker_whose_gradients_cover_a_narrowed_local_list_is_found():
  # The gradients are taken over `W` only: the global `b` never trains.
  thread = a3c._THREAD.format(condition=_PAIRED).replace(
      "self.local_network.get_vars())",
      "[v for v in self.local_network.get_vars() if 'W' in v.name])")
  assert _workers(thread) == [("var-list-filter", "thread.py", 23)]


def test_a_worker_whose_gradients_cover_the_whole_local_list_is_silent():
  assert _workers(a3c._THREAD.format(condition=_PAIRED)) == []


# The switch of AGGAN's trainers moved into the loop over the images: its
# counter starts again every epoch, so the "phases" alternate.
_INNER = dropped._MAIN.replace("""\
                    %s
                    for i in range(self.max_images):
""", """\
                    for i in range(self.max_images):
                        %s
""")

_INNER_SWITCH = dropped._SWITCH.replace(
    "epoch < self._switch", "i < 100").replace("\n", "\n    ")


def test_a_switch_on_an_inner_loops_counter_is_silent():
  assert scanned.in_project({"model.py": dropped._MODEL,
                             "main.py": _INNER % _INNER_SWITCH}) == []


def test_a_switch_on_the_outer_loops_counter_inside_the_inner_one():
  choice = _INNER_SWITCH.replace("i < 100", "epoch < self._switch")
  assert scanned.in_project({"model.py": dropped._MODEL,
                             "main.py": _INNER % choice}) == [
                                 ("var-list-filter", "main.py", 26),
                                 ("var-list-filter", "main.py", 27)]


# The model's scope name read inside a `name_scope` block of its
# variable-scope block: `get_variable_scope()` there is the model's.
_READ_IN_NAME_SCOPE = twenty_nine._READ_INSIDE.replace(
    "            self.scope = tf.get_variable_scope().name\n",
    "            with tf.name_scope('info'):\n"
    "                self.scope = tf.get_variable_scope().name\n")


def test_the_scope_name_read_in_a_name_scope_of_the_models_block_is_silent():
  assert scanned.found(_READ_IN_NAME_SCOPE.replace("EXTRA", "pass")) == []


def test_a_layer_built_after_that_block_is_found():
  code = _READ_IN_NAME_SCOPE.replace(
      "EXTRA", "self.head = tf.layers.dense(self.obs, 3, name='head')")
  assert scanned.found(code) == [("var-list-filter", 19)]
