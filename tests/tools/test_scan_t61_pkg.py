"""`tfpartial scan` on a package copied as a repository's root: its files
import each other through the package's name (`from icd.modules import
decoder`) and no folder of that name is scanned (`_renamed`). The head
is taken as the project's own only when a module reached through it
imports through it in turn and every import through it resolves
below one folder of the tree, to at least two distinct modules, none to
the importing module itself; one head, one root; folders above the
scanned tree never decide.

The probes of the read of t60-sgm37 (1 to 8) are the tests named
`test_probe_*`; `modules.py` (or the file named) holds the sink: a
decoder whose table's row 0 is replaced by zeros.
Synthetic projects, each in the shape of real code."""

import os

import pytest

import scanned
from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _scan

SINK = """\
import tensorflow as tf


def decoder(ids, vocab_size, dim):
  table = tf.get_variable("decoder_embedding", [vocab_size, dim])
  table = tf.concat((tf.zeros(shape=[1, dim]), table[1:, :]), 0)
  inputs = tf.nn.embedding_lookup(table, ids)
  return tf.layers.dense(inputs, vocab_size)
"""

# The same decoder reading its whole table: every row trains.
WHOLE = SINK.replace(
    "  table = tf.concat((tf.zeros(shape=[1, dim]), table[1:, :]), 0)\n", "")

UTILS = """\
def now_string():
  return "now"


MAX_LEN = 128
"""


def _model(imports, call="decoder"):
  """A `networks.py` that imports as `imports` says and trains the
  decoder it calls as `call`."""
  return imports + f"""
import tensorflow as tf


class Model(object):
  def __init__(self, ids, labels):
    logits = {call}(ids, 100, 16)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    self.train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)
"""


def _icd(imports, call="decoder", sink=SINK, prefix=""):
  """A package copied as the root: `networks.py` (importing), the sink
  `modules.py`, `utils.py` and a `train.py` that imports both through
  the package's name."""
  return {
      prefix + "networks.py": _model(imports, call),
      prefix + "modules.py": sink,
      prefix + "utils.py": UTILS,
      prefix + "train.py": (
          "from icd.networks import Model\n"
          "from icd.utils import now_string\n\n"
          "model = Model(None, None)\nprint(now_string())\n"),
  }


SINK_AT = ("stop-gradient-mix", "modules.py", 6)


@pytest.mark.parametrize("imports, call", [
    ("from icd.modules import decoder\n", "decoder"),
    ("from icd import modules\n", "modules.decoder"),  # S1.
    ("import icd.modules as m\n", "m.decoder"),  # S2.
    ("import icd.modules\n", "icd.modules.decoder"),  # S3.
])
def test_a_package_copied_as_the_root_is_followed(imports, call):
  assert scanned.in_project(_icd(imports, call)) == [SINK_AT]


@pytest.mark.parametrize("imports, call", [
    ("from icd.modules import decoder\n", "decoder"),
    ("from icd import modules\n", "modules.decoder"),
    ("import icd.modules as m\n", "m.decoder"),
    ("import icd.modules\n", "icd.modules.decoder"),
])
def test_the_same_decoder_reading_its_whole_table_is_silent(imports, call):
  assert scanned.in_project(_icd(imports, call, sink=WHOLE)) == []


def test_one_import_through_the_package_names_a_missing_module():
  # Twin: `icd.lib.other` is no module of the tree: the head is not the
  # project's (an installed package of that name may hold it).
  files = _icd("from icd.modules import decoder\n"
               "from icd.lib.other import helper\n")
  assert scanned.in_project(files) == []


def test_a_name_imported_that_the_module_does_not_define():
  # Twin: `utils.py` defines no `load_csv`: the head is not the project's.
  files = _icd("from icd.modules import decoder\n"
               "from icd.utils import load_csv\n")
  assert scanned.in_project(files) == []


def test_the_package_in_a_folder_of_the_tree():
  files = _icd("from icd.modules import decoder\n", prefix="src/")
  files["README_example.py"] = "from icd.train import model\n"
  files["src/train.py"] += "model = 1\n"
  assert scanned.in_project(files) == [
      ("stop-gradient-mix", "src/modules.py", 6)]


def test_the_package_in_a_folder_with_a_subfolder_missing():
  # Twin of the above: `icd.lib.other` is nowhere below `src/`.
  files = _icd("from icd.modules import decoder\n"
               "from icd.lib.other import helper\n", prefix="src/")
  assert scanned.in_project(files) == []


def test_probe_0_a_lone_import_is_no_evidence():
  files = {"networks.py": _model("from icd_coding.modules import decoder\n"),
           "modules.py": SINK}
  assert scanned.in_project(files) == []


def test_probe_1_a_third_party_head_beside_a_utils_module():
  files = {"train.py": _model("from official.utils import decoder\n"),
           "utils.py": SINK}
  assert scanned.in_project(files) == []


def test_probe_1_twice_through_the_head_with_one_name_missing():
  # `official.utils` and `official.nlp`: `nlp.py` is no module here.
  files = {"train.py": _model("from official.utils import decoder\n"
                              "from official.nlp import bert\n"),
           "utils.py": SINK}
  assert scanned.in_project(files) == []


def test_probe_2_one_head_has_one_root():
  files = {"a/train.py": _model("from pkg.a.helpers import prep\n"
                                "from pkg.modules import decoder\n"),
           "a/helpers.py": "def prep(x):\n  return x\n",
           "a/modules.py": SINK,
           "modules.py": WHOLE}
  assert scanned.in_project(files) == []


def test_probe_2_the_same_with_the_sink_at_the_root():
  # Twin: the root's `modules.py` is the one `pkg.modules` names.
  # (`a/helpers.py`, reached as `pkg.a.helpers`, imports through `pkg`.)
  files = {"a/train.py": _model("from pkg.a.helpers import prep\n"
                                "from pkg.modules import decoder\n"),
           "a/helpers.py": "from pkg.modules import decoder\n\n\n"
                           "def prep(x):\n  return x\n",
           "a/modules.py": WHOLE,
           "modules.py": SINK}
  assert scanned.in_project(files) == [SINK_AT]


def test_probe_3_a_vendored_layout_tail():
  files = {"train.py": _model("from models.research.slim import decoder\n"),
           "research/slim.py": SINK}
  assert scanned.in_project(files) == []


def test_probe_4_an_import_of_the_importer_itself():
  files = {"networks.py": _model("from pkg.networks import decoder\n"
                                 "from pkg.utils import now_string\n"),
           "modules.py": SINK,
           "utils.py": UTILS}
  assert scanned.in_project(files) == []  # No RecursionError either.


def test_probe_5_modules_importing_each_other():
  files = {"a.py": "from pkg.b import decoder\n",
           "b.py": "from pkg.a import decoder\n",
           "modules.py": SINK,
           "networks.py": _model("from pkg.a import decoder\n")}
  assert scanned.in_project(files) == []


def test_probe_6_a_third_party_layers_import_inside_layers_py():
  files = {"layers.py": "from keras.layers import Embedding, Dense\n",
           "modules.py": SINK,
           "networks.py": _model(
               "from modules import decoder\n"
               "from layers import Embedding, Dense\n",
               "Dense(100)(Embedding(100, 16)(ids)) + decoder")}
  assert scanned.in_project(files) == [SINK_AT]


def test_probe_7_a_sink_in_the_module_importing_its_own_tail():
  layers = """\
import tensorflow as tf
from keras.layers import Layer


class ZeroPadEmbedding(Layer):
  def build(self, input_shape):
    self.table = self.add_weight("table", [100, 16])

  def call(self, ids):
    table = tf.concat((tf.zeros(shape=[1, 16]), self.table[1:, :]), 0)
    return tf.nn.embedding_lookup(table, ids)
"""
  files = {"layers.py": layers,
           "modules.py": SINK,
           "networks.py": _model(
               "from modules import decoder\n"
               "from layers import ZeroPadEmbedding\n",
               "tf.layers.dense(ZeroPadEmbedding()(ids), 100) + decoder")}
  assert sorted(scanned.in_project(files)) == [
      ("stop-gradient-mix", "layers.py", 10), SINK_AT]


def _found_under(files, prefix):
  """The findings of `files` scanned with each path under `prefix`, the
  prefix taken off again."""
  sources = [_files.Source(os.path.join(prefix, path), text)
             for path, text in files.items()]
  findings, errors = _scan.scan_project(sources)
  assert not errors, errors
  return [(f.idiom, os.path.relpath(f.path, prefix), f.line)
          for f in findings]


@pytest.mark.parametrize("imports, found", [
    ("from icd_coding.modules import decoder\n"
     "from icd_coding.utils import now_string\n", [SINK_AT]),
    ("from icd_coding.modules import decoder\n", []),  # Probe 0.
])
def test_probe_8_folders_above_the_tree_never_decide(tmp_path, imports,
                                                     found):
  files = {"networks.py": _model(imports), "modules.py": SINK,
           "utils.py": UTILS}
  if found:  # `train.py` imports `networks.py` through the head: the
    # package refers to itself (probe 0 stays a lone import).
    files["train.py"] = "from icd_coding.networks import Model\n"
  assert _found_under(files, "proj") == found
  assert _found_under(files, os.path.join("icd_coding", "proj")) == found
  assert _found_under(files, str(tmp_path / "icd_coding" / "proj")) == found


def test_a_folder_of_the_tree_named_as_the_head_is_no_renamed_package():
  # `icd_coding/` is scanned: `icd_coding.modules` is looked for there
  # (and is not), never at the root.
  files = {"networks.py": _model("from icd_coding.modules import decoder\n"
                                 "from icd_coding.utils import now_string\n"),
           "modules.py": SINK, "utils.py": UTILS,
           "icd_coding/other.py": "x = 1\n"}
  assert scanned.in_project(files) == []


def _chained(n):
  """A package copied as the root of `n` modules each importing the
  next's function through the package's name, the last one a sink."""
  files = {}
  for i in range(n):
    files[f"m{i}.py"] = (
        f"from pkg.m{i + 1} import f{i + 1}\n\n\n"
        f"def f{i}(ids, vocab_size, dim):\n"
        f"  return f{i + 1}(ids, vocab_size, dim)\n")
  files[f"m{n}.py"] = SINK.replace("def decoder", f"def f{n}")
  files["train.py"] = _model("from pkg.m0 import f0\n", "f0")
  return {p: _files.Source(p, t) for p, t in files.items()}


def test_the_roots_cost_grows_linearly_with_the_imports():
  work = []
  for n in (10, 40):
    sources = list(_chained(n).values())
    calls, (findings, errors) = scanned.calls_made(
        lambda s=sources: _scan.scan_project(s), "_renamed.py")
    assert not errors and [f.path for f in findings] == [f"m{n}.py"]
    work.append(calls)
  assert work[1] <= 4.5 * work[0], work
