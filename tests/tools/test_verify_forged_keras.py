"""`verify` reads a Keras file as Keras loads it: a hand-edited file that
swaps the layers' `name` attributes cannot pass.

Keras 3 loads a weight file by the h5 group path it builds from the model's
object tree (`layers/dense/vars/0`: a layer in a list is keyed by its
class's snake_case name, in the list's order) and never reads the `name`
attribute of a `vars` group. So a file whose groups are renamed by hand
loads the changed kernel into the frozen layer; verify must say so (exit 1,
the count Keras' own loading gives) or refuse the file (exit 2), never OK.
Each test loads AFTER with Keras and compares with verify's verdict.
"""

import shutil
import zipfile

import h5py
import keras
import numpy as np
import pytest

import helpers
import tfpartial
from tfpartial import cli

pytestmark = helpers.needs_keras_3


def _model():
  return keras.Sequential([
      keras.Input((4,)), keras.layers.Dense(4, name="frozen"),
      keras.layers.Dense(4, name="free")], name="net")


def _forge(h5_path, before_kernel):
  """Swaps the two layers' names; the old kernel under the frozen name."""
  with h5py.File(h5_path, "r+") as file:
    first, second = file["layers/dense/vars"], file["layers/dense_1/vars"]
    assert first.attrs["name"] == "frozen" and second.attrs["name"] == "free"
    first.attrs["name"], second.attrs["name"] = "free", "frozen"
    second["0"][...] = before_kernel


def _forge_archive(source, target, tmp_path, before_kernel):
  """`source` with its model.weights.h5 forged, stored as Keras stores it."""
  inner = tmp_path / "inner.weights.h5"
  with zipfile.ZipFile(source) as archive:
    inner.write_bytes(archive.read("model.weights.h5"))
    _forge(inner, before_kernel)
    with zipfile.ZipFile(target, "w") as forged:
      for member in archive.infolist():
        data = (inner.read_bytes() if member.filename == "model.weights.h5"
                else archive.read(member))
        forged.writestr(member, data)


@pytest.fixture(name="files")
def _files(tmp_path):
  model = _model()
  kernel = model.get_layer("frozen").kernel
  spec = tmp_path / "spec.json"
  tfpartial.freeze(kernel).to_json(spec)
  # By hand, with no "saved" places: the file's own names are all there is.
  (tmp_path / "by_name.json").write_text(
      '{"net/frozen/kernel": {"freeze": "..."}}')
  model.save_weights(tmp_path / "before.weights.h5")
  model.save(tmp_path / "before.keras")
  before_kernel = kernel.numpy()
  kernel.assign(before_kernel + 1.0)
  model.save_weights(tmp_path / "after.weights.h5")
  model.save(tmp_path / "after.keras")
  _forge(tmp_path / "after.weights.h5", before_kernel)
  _forge_archive(tmp_path / "after.keras", tmp_path / "forged.keras",
                 tmp_path, before_kernel)
  shutil.move(tmp_path / "forged.keras", tmp_path / "after.keras")
  return tmp_path, before_kernel, spec


def _loaded_kernel(path):
  """The frozen kernel as Keras itself loads AFTER."""
  if str(path).endswith(".keras"):
    return keras.saving.load_model(path).get_layer("frozen").kernel.numpy()
  model = _model()
  model.load_weights(path)
  return model.get_layer("frozen").kernel.numpy()


@pytest.mark.parametrize("spec_name", ["spec.json", "by_name.json"])
@pytest.mark.parametrize("before_name", ["before.weights.h5", "before.keras"])
@pytest.mark.parametrize("after_name", ["after.weights.h5", "after.keras"])
def test_a_forged_keras_file_is_not_ok(files, capsys, before_name,
                                       after_name, spec_name):
  folder, before_kernel, spec = files
  spec = folder / spec_name
  loaded = _loaded_kernel(folder / after_name)
  changed_by_keras = int(
      (helpers.bits(loaded) != helpers.bits(before_kernel)).sum())
  assert changed_by_keras == 16  # Keras loads the changed kernel.
  code = cli.main(["verify", str(folder / before_name),
                   str(folder / after_name), "--spec", str(spec)])
  out, err = capsys.readouterr()
  print(err)
  assert code == 2, out + err
  assert out == "" and err.count("\n") == 1, out + err
  if after_name.endswith(".keras"):  # config.json says where each layer is.
    assert ("the group layers/dense is named 'free', but config.json puts "
            "the layer 'frozen' there" in err), err
  elif spec_name == "spec.json":  # Where the model saves it: another's.
    assert ("the spec says the model it was written from saves "
            "'net/frozen/kernel' at layers/dense/vars/0 (its \"saved\" "
            "place for this kind of file), but " in err
            and "after.weights.h5 holds one of the layer 'free' there" in err
            ), err
  else:  # Only the name attributes say it, and the two files disagree.
    assert ("'net/frozen/kernel' is layers/dense/vars/0 in " in err
            and "but layers/dense_1/vars/0 in " in err), err


def test_an_honest_pair_still_verifies(tmp_path, capsys):
  """The same model saved twice, unchanged: OK in every pairing."""
  model = _model()
  spec = tmp_path / "spec.json"
  tfpartial.freeze(model.get_layer("frozen").kernel).to_json(spec)
  model.save_weights(tmp_path / "a.weights.h5")
  model.save(tmp_path / "a.keras")
  model.get_layer("free").kernel.assign(np.ones((4, 4), np.float32))
  model.save_weights(tmp_path / "b.weights.h5")
  model.save(tmp_path / "b.keras")
  for first in ("a.weights.h5", "a.keras"):
    for second in ("b.weights.h5", "b.keras"):
      code = cli.main(["verify", str(tmp_path / first),
                       str(tmp_path / second), "--spec", str(spec)])
      out, err = capsys.readouterr()
      assert code == 0, (first, second, out + err)


def test_an_archive_forged_with_its_config_too_is_refused(files, capsys):
  """Names swapped in config.json as well: the archive is self-consistent,
  but it puts the frozen layer where BEFORE has the free one."""
  folder, _, spec = files
  forged = folder / "after.keras"
  rewritten = folder / "consistent.keras"
  with zipfile.ZipFile(forged) as archive, \
      zipfile.ZipFile(rewritten, "w") as target:
    for member in archive.infolist():
      data = archive.read(member)
      if member.filename == "config.json":
        data = (data.replace(b'"frozen"', b'"@"')
                .replace(b'"free"', b'"frozen"').replace(b'"@"', b'"free"'))
      target.writestr(member, data)
  code = cli.main(["verify", str(folder / "before.keras"), str(rewritten),
                   "--spec", str(folder / "by_name.json")])
  out, err = capsys.readouterr()
  assert code == 2 and out == "", out + err
  assert "'net/frozen/kernel' is layers/dense/vars/0 in " in err, err
  code = cli.main(["verify", str(folder / "before.keras"), str(rewritten),
                   "--spec", str(spec)])
  out, err = capsys.readouterr()
  assert code == 2 and out == "", out + err
  assert "consistent.keras holds one of the layer 'free' there" in err, err
