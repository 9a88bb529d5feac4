"""`tfpartial scan` reads a notebook as IPython runs it: magics, shell
escapes and help lines become placeholders at their indentation, a cell
magic whose body is not Python skips its cell, and each cell parses on its
own, so one cell never drops a notebook."""

import ast
import contextlib
import io
import json
import os
import pathlib
import subprocess

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _main

# A grads-mask, the scan's plainest finding, at line 4 of its cell.
GRADS_MASK = """\
optimizer = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.5)
grads_and_vars = optimizer.compute_gradients(loss)
mask = tf.constant([0.0, 1.0, 1.0])
train_op = optimizer.apply_gradients([(g * mask, v) for g, v in grads_and_vars])
"""

# IPython syntax that made a whole notebook "not parse" (each one alone).
IPYTHON = {
    "shell escape alone in an if block":
        "if not os.path.exists('data'):\n    !wget -q https://x.org/d.zip\n",
    "shell escape with continuation lines":
        "!pip install tensorflow \\\n    numpy \\\n    pandas\nimport os\n",
    "line magic with a continuation line":
        "%env CUDA_VISIBLE_DEVICES=0 \\\n  TF_CPP_MIN_LOG_LEVEL=3\n",
    "bash cell": "%%bash\nfor f in *.py; do\n  echo \"$f\"\ndone\n",
    "any cell magic whose body is not Python":
        "%%html\n<div class='x'>\n  <b>training</b>\n</div>\n",
    "magic inside a try": "try:\n    %load_ext tensorboard\n"
                          "except ImportError:\n    pass\n",
    "magic inside a for": "for name in ['a', 'b']:\n    !echo {name}\n",
    "help lines": "np.sum?\n??tf.Variable\ntf.Variable??\n",
    "magics assigned": "files = !ls *.csv\nstamp, = %sx date\n",
    "double-bang and autocall escapes": "!!nvidia-smi\n/print 1, 2\n",
    "get_ipython lines": "get_ipython().system('nvidia-smi')\n"
                         "get_ipython().run_line_magic('matplotlib', "
                         "'inline')\n",
}


def _notebook(folder, *cells, name="n.ipynb", metadata=None):
  """A notebook of code cells (a dict is a cell as it is)."""
  path = pathlib.Path(folder) / name
  path.write_text(json.dumps({
      "cells": [cell if isinstance(cell, dict) else
                {"cell_type": "code", "source": cell.splitlines(True)}
                for cell in cells],
      "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}))
  return str(path)


def _run(paths):
  out, err = io.StringIO(), io.StringIO()
  status = _main.run(paths, "text", False, out, err)
  return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("cell", list(IPYTHON.values()), ids=list(IPYTHON))
def test_ipython_syntax_never_drops_a_notebook(tmp_path, cell):
  path = _notebook(tmp_path, cell, GRADS_MASK)
  status, out, err = _run([path])
  assert status == 1, err
  assert out.startswith(f"{path}:4:40: grads-mask: (cell 2) "), out
  assert "skipped" not in err


@pytest.mark.parametrize("cell", list(IPYTHON.values()), ids=list(IPYTHON))
def test_magics_in_the_cell_of_the_finding_keep_its_lines(tmp_path, cell):
  path = _notebook(tmp_path, "import tensorflow as tf\n", cell + GRADS_MASK)
  status, out, err = _run([path])
  skipped = cell.startswith("%%")
  assert status == (0 if skipped else 1), err
  if not skipped:
    line = cell.count("\n") + 4
    assert out.startswith(f"{path}:{line}:40: grads-mask: (cell 2) "), out
  assert "skipped" not in err


def test_a_magic_becomes_a_statement_at_its_indentation(tmp_path):
  source = _files.read(_notebook(tmp_path, (
      "for i in range(3):\n"
      "    if i:\n"
      "        !echo {i} \\\n"
      "          more\n"
      "    x = i\n"
      "files = !ls\n"
      "text = '''\n"
      "!this line is text, not a magic\n"
      "'''\n"), "y = f(1,\n      %not_a_magic_inside_brackets)\n"))
  lines = source.text.split("\n")
  assert lines[2].startswith("        ") and lines[2].strip() == "pass"
  assert lines[3].strip() == ""  # The continuation went with its magic.
  assert lines[5].startswith("files = ")
  assert lines[7] == "!this line is text, not a magic"
  assert "%not_a_magic" not in source.text
  assert source.notes == (f"{tmp_path / 'n.ipynb'}: cell 2, line 2: "
                          "skipped: does not parse (invalid syntax)",)


def test_cell_magics_whose_body_is_python_are_scanned(tmp_path):
  for magic in ("%%time", "%%timeit -n 1", "%%capture output",
                "%%writefile train.py"):
    path = _notebook(tmp_path, magic + "\n" + GRADS_MASK)
    status, out, err = _run([path])
    assert status == 1, (magic, err)
    assert out.startswith(f"{path}:5:40: grads-mask: (cell 1) "), magic


def test_a_cell_that_does_not_parse_is_reported_and_skipped(tmp_path):
  path = _notebook(tmp_path, "import tensorflow as tf\n",
                   "for i in range(3):\n    print('epoch', i\n",
                   GRADS_MASK)
  status, out, err = _run([path])
  assert status == 1
  assert out.startswith(f"{path}:4:40: grads-mask: (cell 3) "), out
  assert f"{path}: cell 2, line 2: skipped: does not parse (" in err


def test_a_python_2_cell_is_read(tmp_path):
  path = _notebook(tmp_path, "import tensorflow as tf\n",
                   "for i in range(3):\n    print 'epoch', i\n" + GRADS_MASK)
  status, out, err = _run([path])
  assert status == 1, err
  assert out.startswith(f"{path}:6:40: grads-mask: (cell 2) "), out
  assert "skipped" not in err


def test_line_numbers_survive_cr_line_ends_and_a_skipped_cell(tmp_path):
  path = _notebook(tmp_path,
                   {"cell_type": "code", "source": ["x = 1\r", "y = 2\r\n"]},
                   "print 'old'\n",
                   {"cell_type": "markdown", "source": "# Notes\n"},
                   {"cell_type": "code",
                    "source": GRADS_MASK.replace("\n", "\r")})
  status, out, err = _run([path])
  assert status == 1, err
  assert out.startswith(f"{path}:4:40: grads-mask: (cell 4) "), out


@pytest.mark.parametrize("source", [
    ["x = 1\n", 3], 3, {"text": "x = 1"}, ["x = 1\n", None],
    ["x = 1\n", ["y = 2\n"]]])
def test_a_cell_whose_source_is_not_text_skips_the_notebook(tmp_path,
                                                            source):
  path = _notebook(tmp_path, {"cell_type": "code", "source": source},
                   GRADS_MASK)
  ok = _notebook(tmp_path, GRADS_MASK, name="ok.ipynb")
  status, out, err = _run([str(tmp_path)])
  assert status == 1 and out.startswith(f"{ok}:4:40: grads-mask: ")
  assert f"{path}: skipped: not a notebook (cell 1: its source is not " \
         "text)" in err


def test_a_notebook_of_another_language_is_skipped(tmp_path):
  path = _notebook(tmp_path, GRADS_MASK, metadata={
      "kernelspec": {"language": "R", "name": "ir"}})
  status, _, err = _run([path])
  assert status == 2
  assert f"{path}: skipped: a notebook in R, not Python" in err


def test_a_notebook_in_format_3_is_read(tmp_path):
  path = tmp_path / "old.ipynb"
  path.write_text(json.dumps({"nbformat": 3, "worksheets": [{"cells": [
      {"cell_type": "markdown", "source": ["text"]},
      {"cell_type": "code", "input": GRADS_MASK.splitlines(True)}]}]}))
  status, out, err = _run([str(path)])
  assert status == 1, err
  assert out.startswith(f"{path}:4:40: grads-mask: (cell 2) "), out


def _corpus():
  """The team's development corpus (`shared/scan-corpus`), beside the
  repository or one folder up (a worktree)."""
  here = pathlib.Path(__file__).resolve().parents[2]
  for shared in (here.parent / "shared", here.parent.parent / "shared"):
    if (shared / "scan-corpus" / "corpus").is_dir():
      return shared / "scan-corpus" / "corpus"
  pytest.skip("the scan corpus (shared/scan-corpus) is not beside the "
              "repository")


def test_real_notebooks_read_cell_by_cell():
  corpus = _corpus()
  notebooks = sorted(corpus.glob("**/*.ipynb"))
  assert len(notebooks) >= 100
  noted = {}
  for notebook in notebooks:
    source = _files.read(str(notebook))
    ast.parse(source.text)
    if source.notes:
      noted[notebook.relative_to(corpus).as_posix()] = source.notes
  # Every cell of every notebook is read: the cells of its one Python 2
  # notebook (which print as Python 2 does) too, line for line.
  assert noted == {}
  inversion = _files.read(str(
      corpus / "positive/keras-team+keras-io/examples/generative/ipynb/"
      "fine_tune_via_textual_inversion.ipynb"))
  lines = inversion.text.split("\n")
  (where,) = [n for n, line in enumerate(lines, 1)
              if "grads[0] = tf.IndexedSlices(" in line]
  line, cell = inversion.locate(where)
  cells = json.loads((corpus / "positive/keras-team+keras-io/examples/"
                      "generative/ipynb/fine_tune_via_textual_inversion."
                      "ipynb").read_text())["cells"]
  assert "grads[0] = tf.IndexedSlices(" in "".join(
      cells[cell - 1]["source"]).split("\n")[line - 1]


# A mask on one variable (mechanical in a `.py` file; by hand in a
# notebook written on one line, as `_notebook` writes it), a filter that
# needs no port, and a gradient rebuilt by a `tf.where` on a fed mask (by
# hand in a `.py` file too), each a notebook's cell.
EXACT_FILTER = """\
x = tf.get_variable("base/w", [3])
y = tf.get_variable("head/w", [3])
loss = tf.reduce_sum(x * y)
train_vars = [v for v in tf.trainable_variables() if v.name.startswith("head")]
train_op = tf.train.AdamOptimizer(0.1).minimize(loss, var_list=train_vars)
"""
FED_WHERE = """\
x = tf.Variable([1.0, 2.0, 3.0])
loss = tf.reduce_sum(x * x)
opt = tf.train.GradientDescentOptimizer(0.1)
grads = opt.compute_gradients(loss)
mask = tf.placeholder(tf.float32, [3])
grads = [(tf.where(tf.equal(mask, 1.0), g, tf.zeros_like(g)), v) for g, v in grads]
train_op = opt.apply_gradients(grads)
"""


@pytest.mark.parametrize("cell, why", [
    ('x = tf.Variable([1.0, 2.0, 3.0], name="x")\n'
     "loss = tf.reduce_sum(tf.square(x - 5.0))\n" + GRADS_MASK,
     "a notebook: edit the cell as the port says"),
    (EXACT_FILTER, "nothing to port: the filter is exact"),
    (FED_WHERE, "the gradients are rebuilt with `tf.where`"),
], ids=["mechanical", "nothing-to-port", "by-hand-anyway"])
def test_a_notebook_says_why_its_port_is_by_hand(tmp_path, cell, why):
  # A finding whose port is by hand (or not needed) in a `.py` file says
  # so in a notebook too.
  path = _notebook(tmp_path, "import tensorflow as tf\n", cell)
  out, err = io.StringIO(), io.StringIO()
  assert _main.run([path], "json", False, out, err) == 1, err.getvalue()
  (finding,) = json.loads(out.getvalue())
  assert not finding["mechanical"]
  assert finding["by_hand"].startswith(why), finding["by_hand"]


def _written(folder, *cells, name="n.ipynb"):
  """A notebook as Jupyter writes it: indented, one source line a
  string, non-ASCII text as it is, an output and metadata beside."""
  path = pathlib.Path(folder) / name
  path.write_text(json.dumps({
      "cells": [{"cell_type": "markdown", "metadata": {},
                 "source": ["# Ré-entraîner\n", "x"]}] + [
          {"cell_type": "code", "execution_count": 1, "metadata": {},
           "outputs": [{"name": "stdout", "output_type": "stream",
                        "text": ["x = 1\n"]}],
           "source": cell.rstrip("\n").splitlines(True)} for cell in cells],
      "metadata": {"kernelspec": {"language": "python"}},
      "nbformat": 4, "nbformat_minor": 5}, indent=1, ensure_ascii=False)
                  + "\n", encoding="utf-8")
  return path


def test_a_notebook_written_a_string_a_line_is_ported_in_its_cells(
    tmp_path):
  # The port edits the cells' strings in the notebook's JSON, every other
  # byte kept (the magic line, the outputs, the markdown); it applies with
  # both tools from the folder the scan ran in, and the cell compiles.
  cell = ('x = tf.Variable([1.0, 2.0, 3.0], name="x")\n'
          "loss = tf.reduce_sum(tf.square(x - 5.0))\n" + GRADS_MASK)
  path = _written(tmp_path, "%pip install tfpartial\nimport numpy as np\n"
                  "import tensorflow.compat.v1 as tf\n", cell)
  out, err = io.StringIO(), io.StringIO()
  with _in(tmp_path):
    assert _main.run(["n.ipynb"], "text", True, out, err) == 1
  assert "port by hand" not in err.getvalue(), err.getvalue()
  diff = out.getvalue()
  assert diff.startswith("--- a/n.ipynb\n+++ b/n.ipynb\n"), diff
  (tmp_path / "port.diff").write_text(diff)
  before = json.loads(path.read_text(encoding="utf-8"))
  for tool in (["git", "apply", "--check", "port.diff"],
               ["patch", "-p1", "--dry-run", "-i", "port.diff"],
               ["patch", "-p1", "-s", "-i", "port.diff"]):
    done = subprocess.run(tool, cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
  after = json.loads(path.read_text(encoding="utf-8"))
  assert after["cells"][0] == before["cells"][0]
  assert after["cells"][1] == before["cells"][1]  # The magic too.
  ported = "".join(after["cells"][2]["source"])
  assert ported.startswith("import tfpartial\nx = tf.Variable("), ported
  assert "spec = tfpartial.freeze(\n    x, " in ported, ported
  assert after["cells"][2]["outputs"] == before["cells"][2]["outputs"]
  compile(ported, "cell", "exec")


@contextlib.contextmanager
def _in(folder):
  here = os.getcwd()
  os.chdir(folder)
  try:
    yield
  finally:
    os.chdir(here)


def test_a_notebook_not_written_a_string_a_line_is_ported_by_hand(tmp_path):
  # A cell's source as one string (nbformat allows it), or a notebook on
  # one line: the port is by hand, said where it is found.
  cell = ('x = tf.Variable([1.0, 2.0, 3.0], name="x")\n'
          "loss = tf.reduce_sum(tf.square(x - 5.0))\n" + GRADS_MASK)
  for path in (_notebook(tmp_path, "import tensorflow as tf\n", cell),
               _notebook(tmp_path, {"cell_type": "code", "source":
                                    "import tensorflow as tf\n" + cell},
                         name="m.ipynb")):
    out, err = io.StringIO(), io.StringIO()
    assert _main.run([path], "text", True, out, err) == 1
    assert out.getvalue() == ""
    assert ": grads-mask: a notebook: edit the cell as the port says" in (
        err.getvalue()), err.getvalue()


def test_the_lines_a_port_keeps_in_a_cell_keep_their_bytes(tmp_path):
  # A notebook written with `\u` escapes (json.dumps' default): the lines
  # of an edited cell that the port keeps are not rewritten.
  cell = ('x = tf.Variable([1.0, 2.0, 3.0], name="x")  # Poids gelé.\n'
          "loss = tf.reduce_sum(tf.square(x - 5.0))\n" + GRADS_MASK)
  (tmp_path / "n.ipynb").write_text(json.dumps({
      "cells": [{"cell_type": "code", "execution_count": None,
                 "metadata": {}, "outputs": [],
                 "source": ("import tensorflow as tf\n" + cell).rstrip(
                     "\n").splitlines(True)}],
      "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
  out, err = io.StringIO(), io.StringIO()
  with _in(tmp_path):
    assert _main.run(["n.ipynb"], "text", True, out, err) == 1
  changed = [line for line in out.getvalue().splitlines()
             if line[:1] in "+-" and line[:3] not in ("+++", "---")]
  assert not [line for line in changed if "Poids" in line], changed
  assert len(changed) == 6, changed  # The imports, the spec, the apply.
