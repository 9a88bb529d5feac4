"""`verify` on a damaged Keras HDF5 file of the older format.

Such a file lists its layers (`layer_names`) and each layer's weights
(`weight_names`) in attributes; those lists are untrusted input: a list
that is not one, or a name of something the file does not hold as a
dataset, is bad input (exit 2) with one line naming the file and the
problem, never a traceback.
"""

import json

import h5py
import numpy as np
import pytest

import helpers
from tfpartial import cli


def _legacy_h5(path, layer_names=(b"dense",),
               weight_names=(b"dense/kernel:0", b"dense/bias:0"),
               kernel_as_group=False):
  """A Keras 2 `save_weights("w.h5")` file of one Dense layer, as given."""
  with h5py.File(path, "w") as file:
    file.attrs["layer_names"] = np.asarray(layer_names)
    group = file.create_group("dense")
    group.attrs["weight_names"] = np.asarray(weight_names)
    if kernel_as_group:
      group.create_group("dense/kernel:0")
    else:
      group["dense/kernel:0"] = np.ones((3, 2), np.float32)
    group["dense/bias:0"] = np.zeros(2, np.float32)
  return path


@pytest.mark.parametrize("damage, problem", [
    pytest.param(dict(kernel_as_group=True),
                 r"the layer 'dense' lists the weight 'dense/kernel:0', "
                 r"which is not a dataset in it", id="weight_is_a_group"),
    pytest.param(dict(layer_names=(b"dense", b"head")),
                 r"layer_names lists the layer 'head', which is not a group "
                 r"in the file", id="layer_missing"),
    pytest.param(dict(weight_names=(b"dense/kernel:0", b"dense/gone:0")),
                 r"the layer 'dense' lists the weight 'dense/gone:0', which "
                 r"is not a dataset in it", id="weight_missing"),
    pytest.param(dict(layer_names=np.int64(5)),
                 r"the attribute layer_names of / is not a list of names",
                 id="layer_names_scalar"),
    pytest.param(dict(weight_names=b"dense/kernel:0"),
                 r"the attribute weight_names of /dense is not a list of "
                 r"names", id="weight_names_scalar"),
    pytest.param(dict(weight_names=np.array([1, 2])),
                 r"the attribute weight_names of /dense is not a list of "
                 r"names", id="weight_names_numbers"),
])
def test_a_damaged_legacy_h5_is_bad_input_in_one_line(tmp_path, capsys,
                                                      damage, problem):
  before = _legacy_h5(tmp_path / "before.h5")
  after = _legacy_h5(tmp_path / "after.h5", **damage)
  spec = tmp_path / "spec.json"
  spec.write_text(json.dumps({"dense/kernel": {"freeze": "0"}}))
  code = cli.main(["verify", str(before), str(after), "--spec", str(spec)])
  out, err = capsys.readouterr()
  assert code == 2, out + err
  assert "Traceback" not in err and out == "", out + err
  (line,) = err.strip().splitlines()
  assert line.startswith(
      f"tfpartial verify: error: cannot read {after}: "), line
  import re  # pylint: disable=g-import-not-at-top
  assert re.search(problem, line), line


def test_an_undamaged_legacy_h5_verifies(tmp_path, capsys):
  before = _legacy_h5(tmp_path / "before.h5")
  spec = tmp_path / "spec.json"
  spec.write_text(json.dumps({"dense/kernel": {"freeze": "0"}}))
  code = cli.main(["verify", str(before), str(helpers.copy_of(before)),
                   "--spec", str(spec)])
  out, err = capsys.readouterr()
  assert code == 0, out + err
  assert "OK: every frozen element of 1 variable(s)" in out, out


def test_names_in_chunked_attributes_are_read_in_order(tmp_path, capsys):
  """Keras splits a long list over `weight_names0`, `weight_names1`, ...
  past HDF5's attribute size."""
  path = _legacy_h5(tmp_path / "chunked.h5")
  with h5py.File(path, "a") as file:
    group = file["dense"]
    del group.attrs["weight_names"]
    group.attrs["weight_names0"] = np.asarray([b"dense/kernel:0"])
    group.attrs["weight_names1"] = np.asarray([b"dense/bias:0"])
  spec = tmp_path / "spec.json"
  spec.write_text(json.dumps({"dense/kernel": {"freeze": "0"},
                              "dense/bias": {"freeze": "1"}}))
  code = cli.main(["verify", str(path), str(helpers.copy_of(path)),
                   "--spec", str(spec)])
  out, err = capsys.readouterr()
  assert code == 0, out + err
  assert "OK: every frozen element of 2 variable(s)" in out, out
