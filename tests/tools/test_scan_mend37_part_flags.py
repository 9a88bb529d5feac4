"""`tfpartial scan`'s part flags after review 37 (`_part_flags`): a flag
counts as a part's only when the gate can compute its name (the part is
a value the gate's name takes, or a key the parts are read by, as
`"{}_variables".format(name)` reads `"backbone_variables"`), and a script
counts as handing its flags to the training only when the holder reaches
the gated function's config parameter through the calls it is passed to
(not `print`, not logging, not a function that never trains). Silent
twins: other `train_*` booleans beside the parts (`train_from_scratch`,
`train_shuffle`), a holder printed or logged, a holder given to a
function that never reaches the gate, a tool's own `args.train_*`.
Found twins: the DETR fine-tuning with its config handed on through two
functions or by keyword, parts named by a literal loop."""

import textwrap

import pytest
import scanned

import test_scan_part_flags as part_flags


def _found(script, extra=None):
  files = {"optimizers.py": part_flags._OPTIMIZERS % part_flags._FORMATTED,
           "training.py": part_flags._TRAINING,
           "finetune.py": part_flags._SCRIPT % script}
  files.update(extra or {})
  return [(idiom, path, line) for idiom, path, line in scanned.in_project(
      files) if idiom == "var-list-filter"]


@pytest.mark.parametrize("script", [
    # Two booleans of the gate's prefix that name no part.
    """config.train_from_scratch = False
        config.train_shuffle = True""",
    # Every part on; a boolean naming no part off.
    """config.train_backbone = True
        config.train_transformers = True
        config.train_nlayers = True
        config.train_from_scratch = False""",
], ids=["no_part_named", "every_part_on_beside_another_flag"])
def test_flags_naming_no_part_are_silent(script):
  assert _found(script) == []


def test_a_tools_own_train_flags_are_silent():
  tools = """\
      import argparse

      def main():
          args = argparse.Namespace()
          args.train_verbose = False
          args.train_log = True
          print(args)
      """
  assert _found("pass", {"tools.py": tools}) == []


_KEPT = """\
    import logging
    import tensorflow as tf
    import training

    def report(config):
        return sorted(vars(config))

    def show(config, detr):
        %s
    """


@pytest.mark.parametrize("handed", [
    "print(config)",
    "logging.info(config)",
    # A function of the project that never reaches the gate.
    "report(config)",
    # The training's own module, but a function that holds no gate.
    "training.summary(detr, config)",
], ids=["printed", "logged", "to_a_function_that_never_trains",
        "to_a_training_function_without_the_gate"])
def test_a_holder_that_never_reaches_the_gate_is_silent(handed):
  script = _KEPT % ("""config.train_backbone = False
        config.train_nlayers = True
        """ + handed)
  training = textwrap.dedent(part_flags._TRAINING) + (
      "\ndef summary(model, config):\n    print(model, config)\n")
  assert [each for each in scanned.in_project({
      "optimizers.py": part_flags._OPTIMIZERS % part_flags._FORMATTED,
      "training.py": training,
      "show.py": script}) if each[0] == "var-list-filter"] == []


def test_a_config_handed_on_through_two_functions_is_found():
  runner = """\
      import training

      def run(detr, data, optimizers, cfg):
          training.fit(detr, data, optimizers, cfg)
      """
  script = part_flags._SCRIPT.replace(
      "training.fit(detr, train_dt, optimizers, config)",
      "runner.run(detr, train_dt, optimizers, config)").replace(
          "import training", "import runner")
  assert [each for each in scanned.in_project({
      "optimizers.py": part_flags._OPTIMIZERS % part_flags._FORMATTED,
      "training.py": part_flags._TRAINING, "runner.py": runner,
      "finetune.py": script % part_flags._VOC})
          if each[0] == "var-list-filter"] == [
              ("var-list-filter", "finetune.py", 6)]


def test_a_config_handed_on_by_keyword_is_found():
  script = part_flags._SCRIPT.replace(
      "training.fit(detr, train_dt, optimizers, config)",
      "training.fit(detr, train_dt, optimizers=optimizers, config=config)")
  assert [each for each in scanned.in_project({
      "optimizers.py": part_flags._OPTIMIZERS % part_flags._FORMATTED,
      "training.py": part_flags._TRAINING,
      "finetune.py": script % part_flags._VOC})
          if each[0] == "var-list-filter"] == [
              ("var-list-filter", "finetune.py", 6)]


_LOOPED = """\
    import tensorflow as tf

    def train(model, opts, data, cfg):
        for x in data:
            with tf.GradientTape(persistent=True) as tape:
                loss = model.loss(x)
            for name in ("encoder", "decoder"):
                if getattr(cfg, "train_" + name):
                    part = getattr(model, name).trainable_variables
                    opts[name].apply_gradients(
                        zip(tape.gradient(loss, part), part))

    def main(cfg, model, opts, data):
        cfg.train_encoder = False
        cfg.train_decoder = True
        cfg.train_from_scratch = False
        train(model, opts, data, cfg)
    """


def test_parts_named_by_a_literal_loop_are_found():
  assert [each for each in scanned.found(_LOOPED)
          if each[0] == "var-list-filter"] == [("var-list-filter", 14)]


def test_a_flag_outside_a_literal_loops_parts_is_silent():
  assert [each for each in scanned.found(_LOOPED.replace(
      "cfg.train_encoder = False", "cfg.train_embeddings = False"))
          if each[0] == "var-list-filter"] == []
