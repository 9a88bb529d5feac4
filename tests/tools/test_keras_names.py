"""`verify` on a `.keras` archive whose config.json is damaged.

config.json is untrusted input: it only tells `_keras_names` the classes
and options of the layers, but a value of the wrong JSON type where Keras
writes a class name, a list of layers or an option must be bad input (exit
2, one line naming the file and the place in config.json), never a
`TypeError` from inside the reader and never a silent guess.
"""

import json
import re
import zipfile

import keras
import pytest

import helpers
import tfpartial
from tfpartial import cli

pytestmark = helpers.needs_keras_3


def _archive(tmp_path):
  """A saved functional model holding a Sequential; the spec freezing its
  Dense kernel's first row."""
  inner = keras.Sequential(
      [keras.Input((4,)), keras.layers.Dense(2, name="out"),
       keras.layers.LayerNormalization(name="norm")], name="head")
  inputs = keras.Input((3,))
  model = keras.Model(inputs, inner(keras.layers.Dense(4, name="hidden")(
      inputs)), name="net")
  kernel = next(v for v in model.weights if v.path.endswith("hidden/kernel"))
  tfpartial.freeze(kernel, 0).to_json(tmp_path / "spec.json")
  model.save(tmp_path / "model.keras")
  return tmp_path / "model.keras"


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
  """`_archive`, saved once for the module: each test only reads it and
  rewrites a copy of it in its own folder (its spec.json stands beside it)."""
  return _archive(tmp_path_factory.mktemp("archive"))


def _rewritten(archive, tmp_path, damage):
  """A copy of `archive` whose config.json is `damage(config)`; the other
  members copied as they are (model.weights.h5 stays uncompressed)."""
  copy = tmp_path / "after.keras"
  with zipfile.ZipFile(archive) as source, zipfile.ZipFile(copy, "w") as out:
    for member in source.infolist():
      data = source.read(member)
      if member.filename == "config.json":
        data = json.dumps(damage(json.loads(data))).encode()
      out.writestr(member, data)
  return copy


def _layer(config, *positions):
  """The entry of config.json's layer at `positions` (nested models)."""
  for position in positions:
    config = config["config"]["layers"][position]
  return config


def _set(value, *positions, key="class_name", options=False):
  def damage(config):
    entry = _layer(config, *positions)
    (entry["config"] if options else entry)[key] = value
    return config
  return damage


def _verify(capsys, before, after, spec):
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec)])
  out, err = capsys.readouterr()
  return code, out, err


# The functional model's layers: 0 the input, 1 `hidden`, 2 `head`, whose
# layers are 0 `out` (its input layer is not listed) and 1 `norm`.
@pytest.mark.parametrize("damage, problem", [
    pytest.param(_set(["Dense"], 1), r"config\.layers\[1\]\.class_name is "
                 r"an array, not a string", id="class_name_array"),
    pytest.param(_set({"name": "Dense"}, 1), r"config\.layers\[1\]\."
                 r"class_name is an object, not a string",
                 id="class_name_object"),
    pytest.param(_set(["Dense"], 2, 0), r"config\.layers\[2\]\.config\."
                 r"layers\[0\]\.class_name is an array, not a string",
                 id="nested_class_name_array"),
    pytest.param(_set(7, 2, 1, key="module"), r"config\.layers\[2\]\."
                 r"config\.layers\[1\]\.module is an integer, not a string",
                 id="module_number"),
    pytest.param(_set(["x"], 1, key="registered_name"), r"config\.layers\[1\]"
                 r"\.registered_name is an array, not a string or null",
                 id="registered_name_array"),
    pytest.param(_set([1, 2], 1, key="config"), r"config\.layers\[1\]\."
                 r"config is an array, not an object", id="layer_config_array"),
    pytest.param(_set(["hidden"], 1, key="name", options=True),
                 r"config\.layers\[1\]\.config\.name is an array, not a "
                 r"string or null", id="layer_name_array"),
    pytest.param(_set({"0": {}}, 2, key="layers", options=True),
                 r"config\.layers\[2\]\.config\.layers is an object, not an "
                 r"array", id="layers_object"),
    pytest.param(lambda c: {**c, "config": {**c["config"], "layers": "all"}},
                 r"config\.layers is a string, not an array",
                 id="top_layers_string"),
    pytest.param(lambda c: [c], r"the top level is an array, not an object",
                 id="top_level_array"),
    pytest.param(lambda c: dict(c, config=None), r"^.*config\.json .*config "
                 r"is null, not an object", id="top_config_null"),
    pytest.param(_set("no", 1, key="use_bias", options=True),
                 r"config\.layers\[1\]\.config\.use_bias is a string, not "
                 r"true or false", id="dense_option_string"),
    pytest.param(_set(1, 2, 1, key="scale", options=True),
                 r"config\.layers\[2\]\.config\.layers\[1\]\.config\.scale "
                 r"is an integer, not true or false", id="norm_option_number"),
    pytest.param(_set(2.0, 1, key="lora_rank", options=True),
                 r"config\.layers\[1\]\.config\.lora_rank is a number, not "
                 r"an integer or null", id="lora_rank_float"),
    pytest.param(_set("4", 1, key="lora_rank", options=True),
                 r"config\.layers\[1\]\.config\.lora_rank is a string, not "
                 r"an integer or null", id="lora_rank_string"),
])
def test_a_malformed_config_is_bad_input_naming_the_file_and_place(
    tmp_path, capsys, archive, damage, problem):
  after = _rewritten(archive, tmp_path, damage)
  code, out, err = _verify(capsys, archive, after,
                           archive.parent / "spec.json")
  assert code == 2, out + err
  assert "Traceback" not in err and out == "", out + err
  (line,) = err.strip().splitlines()
  assert line.startswith(f"tfpartial verify: error: {after}: config.json is "
                         "not a model's config ("), line
  assert re.search(problem, line), line


@pytest.mark.parametrize("damage", [
    pytest.param(lambda c: c, id="as_saved"),
    pytest.param(lambda c: {}, id="empty"),
    # Keys tfpartial does not read may hold anything.
    pytest.param(_set([1], 1, key="units", options=True), id="units_array"),
    pytest.param(_set({"a": []}, 1, key="build_config"), id="build_config"),
    # A custom layer's own options are its business, not a built-in's.
    pytest.param(lambda c: _set("keras_hub", 1, key="module")(
        _set("x", 1, key="use_bias", options=True)(c)), id="custom_option"),
])
def test_a_well_formed_config_verifies(tmp_path, capsys, archive, damage):
  after = _rewritten(archive, tmp_path, damage)
  code, out, err = _verify(capsys, archive, after,
                           archive.parent / "spec.json")
  assert code == 0, out + err
  assert "OK: every frozen element of 1 variable(s)" in out, out


def test_variable_names_of_an_unchecked_config_is_no_guess_and_no_error():
  """`_keras_names.variable_names` itself never raises on a config that
  `check_config` did not see (what any other caller may hand it)."""
  from tfpartial._tools.verify import _keras_names  # pylint: disable=g-import-not-at-top
  from tfpartial._tools.verify import _checkpoints  # pylint: disable=g-import-not-at-top
  Stored = _checkpoints.Stored
  stored = [Stored("layers/dense/vars/0", (3, 2), "float32"),
            Stored("layers/dense/vars/1", (2,), "float32")]
  for class_name in (["Dense"], {"Dense": 1}, 3, None):
    owner = _keras_names.Owner(
        "layers/dense", ("dense",), stored, in_list=True,
        config={"class_name": class_name, "module": "keras.layers"})
    assert _keras_names.variable_names(owner) is None, class_name
  owner.config = {"class_name": "Dense", "module": "keras.layers"}
  assert _keras_names.variable_names(owner) == ["kernel", "bias"]
