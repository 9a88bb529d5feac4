"""`tfpartial scan`'s `var-list-filter` on a configured flag per part of a
model (part thirty's DETR fine-tuning, 30c): the training applies each
part's gradients only under `if getattr(config, "train_{}".format(name)):`
and a fine-tuning script sets `config.train_backbone = False` beside
`config.train_nlayers = True` before it hands the config to the
training: the backbone's step never runs, so the pretrained backbone
stays fixed while the new heads train. Found at the script's assignment
of the part left off. Silent twins: every part on (training from
scratch), every part off (a config's defaults, an evaluation), a flag
turned on again later in the same script (a warm-up of that part), a
computed flag that gates no step (a layer built or not), the halves of a
GAN both on, a negated gate, and a config never handed on. Each source is
synthetic, in the shape of the DETR forks' code."""

import pytest
import scanned

# The training side: a part's gradients applied only while its flag is
# on (`%s`: how the flag's name is computed).
_OPTIMIZERS = """\
    import tensorflow as tf

    def setup_optimizers(model, config):
        return {
            "backbone_optimizer": tf.keras.optimizers.Adam(1e-5),
            "transformers_optimizer": tf.keras.optimizers.Adam(1e-4),
            "nlayers_optimizer": tf.keras.optimizers.Adam(1e-3),
            "backbone_variables": model.get_layer("backbone").trainable_variables,
            "transformers_variables": model.get_layer("transformer").trainable_variables,
            "nlayers_variables": model.get_layer("heads").trainable_variables,
        }

    def aggregate_grad_and_apply(name, optimizers, gradients, config):
        optimizer_name = "{}_optimizer".format(name)
        variables_name = "{}_variables".format(name)
        %s
            optimizers[optimizer_name].apply_gradients(
                zip(gradients, optimizers[variables_name]))
    """

_FORMATTED = """train_part_name = "train_{}".format(name)
        if getattr(config, train_part_name):"""

_TRAINING = """\
    import tensorflow as tf
    from optimizers import aggregate_grad_and_apply

    def fit(model, train_dt, optimizers, config):
        for images, targets in train_dt:
            with tf.GradientTape() as tape:
                loss = model.loss(model(images), targets)
            steps = model.split_gradients(tape.gradient(loss, model.trainable_variables))
            for name in steps:
                aggregate_grad_and_apply(name, optimizers, steps[name], config)
    """

# The script (`%s`: what it sets before handing the config on).
_SCRIPT = """\
    import tensorflow as tf
    import training
    from optimizers import setup_optimizers

    def run_finetuning(config, detr, train_dt):
        %s
        optimizers = setup_optimizers(detr, config)
        for epoch_nb in range(10):
            training.fit(detr, train_dt, optimizers, config)
    """

_VOC = """config.train_backbone = tf.Variable(False)
        config.train_transformers = tf.Variable(False)
        config.train_nlayers = tf.Variable(True)"""


def _found(script, gate=_FORMATTED, optimizers=_OPTIMIZERS):
  return [(idiom, path, line) for idiom, path, line in scanned.in_project({
      "optimizers.py": optimizers % gate, "training.py": _TRAINING,
      "finetune.py": _SCRIPT % script}) if idiom == "var-list-filter"]


@pytest.mark.parametrize("script, gate, line", [
    # Part thirty's finetune_voc.py: flags as variables, the transformer
    # switched on after the first epoch; the backbone never.
    (_VOC + """
        for epoch_nb in range(10):
            if epoch_nb > 0:
                config.train_transformers.assign(True)
            training.fit(detr, train_dt, setup_optimizers(detr, config), config)""",
     _FORMATTED, 6),
    # finetune_coco.py: plain booleans.
    ("""config.train_backbone = False
        config.train_transformers = True""", _FORMATTED, 6),
    # The flag's name joined by `+`, the gate on it directly.
    ("""config.train_nlayers = True
        config.train_backbone = False""",
     'if getattr(config, "train_" + name):', 7),
    # An f-string.
    (_VOC, 'if getattr(config, f"train_{name}"):', 6),
], ids=["variables_one_switched_on_later", "booleans", "joined", "f_string"])
def test_a_part_whose_flag_the_script_turns_off_is_found(script, gate, line):
  assert _found(script, gate) == [("var-list-filter", "finetune.py", line)]


@pytest.mark.parametrize("script", [
    # train_coco.py: training every part.
    """config.train_backbone = True
        config.train_transformers = True
        config.train_nlayers = True""",
    # Every part off: a config's defaults, an evaluation run.
    """config.train_backbone = False
        config.train_transformers = False""",
    # A warm-up: the backbone off for the first epoch, then on.
    """config.train_backbone = False
        config.train_nlayers = True
        config.train_backbone = True""",
    """config.train_backbone = tf.Variable(False)
        config.train_nlayers = tf.Variable(True)
        config.train_backbone.assign(True)""",
    # A flag of another prefix than the gate's.
    """config.use_backbone = False
        config.use_nlayers = True""",
], ids=["every_part_on", "every_part_off", "switched_on_again",
        "assigned_on_again", "other_prefix"])
def test_scripts_leaving_no_part_off_are_silent(script):
  assert _found(script) == []


def test_a_negated_gate_is_silent():
  # `if not getattr(config, "train_" + name)`: the step runs while the
  # flag is off; the script's off part trains.
  gate = 'if not getattr(config, "train_" + name):'
  assert _found("""config.train_backbone = False
        config.train_nlayers = True""", gate) == []


def test_a_computed_flag_gating_no_step_is_silent():
  # `use_{name}` builds a layer or not: nothing is left out of a step.
  optimizers = _OPTIMIZERS.replace(
      "optimizers[optimizer_name].apply_gradients(\n"
      "                zip(gradients, optimizers[variables_name]))",
      "config.layers.append(name)\n"
      "        optimizers[optimizer_name].apply_gradients(\n"
      "            zip(gradients, optimizers[variables_name]))")
  assert _found("""config.train_backbone = False
        config.train_nlayers = True""", _FORMATTED, optimizers) == []


def test_a_config_never_handed_on_is_silent():
  # The flags set, but the config goes nowhere after them.
  script = """\
    import tensorflow as tf

    class Config:
        def __init__(self):
            self.train_backbone = False
            self.train_nlayers = True
    """
  found = [each for each in scanned.in_project({
      "optimizers.py": _OPTIMIZERS % _FORMATTED, "training.py": _TRAINING,
      "config.py": script}) if each[0] == "var-list-filter"]
  assert found == []


_GAN = """\
    import tensorflow as tf

    def train(gen, disc, opts, data, cfg):
        for real, z in data:
            with tf.GradientTape(persistent=True) as tape:
                fake = gen(z)
                losses = {"gen": -tf.reduce_mean(disc(fake)),
                          "disc": tf.reduce_mean(disc(fake)) - tf.reduce_mean(disc(real))}
            for name, net in (("gen", gen), ("disc", disc)):
                if getattr(cfg, "train_" + name):
                    grads = tape.gradient(losses[name], net.trainable_variables)
                    opts[name].apply_gradients(zip(grads, net.trainable_variables))

    def main(cfg, gen, disc, opts, data):
        cfg.train_gen = True
        cfg.train_disc = True
        train(gen, disc, opts, data, cfg)
    """


def test_a_gans_two_halves_both_on_are_silent():
  assert [each for each in scanned.found(_GAN)
          if each[0] == "var-list-filter"] == []
