"""`tfpartial scan` reads a project as a whole: helpers, methods, imports
(relative too), `super()`, loops and element assignment compose; ports
keep the file's bytes; work grows linearly with the file."""

import ast
import io
import os
import textwrap

import pytest

from tfpartial._tools.scan import _files
from tfpartial._tools.scan import _main
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scan
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis

import scanned


_scan_files = scanned.in_project


def test_a_helper_in_a_sibling_module_through_a_relative_import():
  assert _scan_files({
      "pkg/masks.py": """\
          def mask_gradients(grads, masks):
            return [g * m for g, m in zip(grads, masks)]
          """,
      "pkg/train.py": """\
          from .masks import mask_gradients
          def step(tape, loss, model, opt, masks):
            grads = tape.gradient(loss, model.trainable_variables)
            grads = mask_gradients(grads, masks)
            opt.apply_gradients(zip(grads, model.trainable_variables))
          """,
  }) == [("grads-mask", "pkg/masks.py", 2)]


def test_a_helper_a_package_re_exports_with_a_star_import():
  assert _scan_files({
      "pkg/__init__.py": """\
          from .prune_update import *
          """,
      "pkg/prune_update.py": """\
          def apply_gradients_prune(origin_func, grads_and_vars, masks):
            grads_and_vars = [(g * m, v) for (g, v), m in zip(grads_and_vars,
                                                               masks)]
            return origin_func(grads_and_vars)
          """,
      "examples/train.py": """\
          import pkg as nf
          def train(loss, masks):
            optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
            grads_and_vars = optimizer.compute_gradients(loss)
            return nf.apply_gradients_prune(optimizer.apply_gradients,
                                            grads_and_vars, masks)
          """,
  }) == [("grads-mask", "pkg/prune_update.py", 2)]


def test_a_helper_a_plain_module_imports_and_another_star_imports():
  # sgp-tools' benchmark: `from sgptools.methods import *`, where
  # methods.py imports `optimize_model` from utils/gpflow.py; Python's
  # star import passes on the names a module imports (no `__all__`).
  helper = """\
      def optimize_model(model, trainable_variables=None):
        opt = tf.keras.optimizers.Adam()
        opt.minimize(model.training_loss, var_list=trainable_variables)
      """
  user = """\
      from pkg.methods import *
      def fit(model):
        optimize_model(model,
                       trainable_variables=model.trainable_variables[1:])
      """
  assert _scan_files({
      "pkg/__init__.py": "",
      "pkg/gpflow.py": helper,
      "pkg/methods.py": "from pkg.gpflow import optimize_model\n",
      "bench/run.py": user,
  }) == [("var-list-filter", "bench/run.py", 4)]
  hidden = {  # `__all__` leaves it out; an import inside a function too.
      "pkg/__init__.py": "",
      "pkg/gpflow.py": helper,
      "pkg/methods.py": "from pkg.gpflow import optimize_model\n"
                        "__all__ = ['plan']\n",
      "bench/run.py": user,
  }
  assert _scan_files(hidden) == []
  hidden["pkg/methods.py"] = ("def plan():\n"
                              "  from pkg.gpflow import optimize_model\n")
  assert _scan_files(hidden) == []


def test_a_star_import_chain_is_searched_once_per_name():
  # TensorMol's packages star-import each other's modules in chains: each
  # reading of a name through them searched every chain again (115 files,
  # 15 CPU s). A name asked ten times is searched once.
  count = 6
  sources = [_files.Source(f"pkg/m{k}.py",
                          f"from .m{k + 1} import *  # helper\n")
             for k in range(count)]
  sources.append(_files.Source(f"pkg/m{count}.py", "def helper():\n  pass\n"))
  project = _project.Project(sources)
  first = project.modules[0]
  member = project.member
  calls = []

  def counted(*args, **kwargs):
    calls.append(args[1])
    return member(*args, **kwargs)

  project.member = counted  # The recursion calls through the instance.
  assert project.member(first, "helper") is not None
  once = len(calls)
  for _ in range(9):
    assert project.member(first, "helper") is not None
  assert once > 1 and len(calls) == once + 9, (once, len(calls))


def test_a_loop_append_and_an_element_assignment():
  assert _scan_files({"a.py": """\
      grads = tape.gradient(loss, weights)
      masked = []
      for g, m in zip(grads, masks):
        masked.append(tf.math.multiply(g, m))
      opt.apply_gradients(zip(masked, weights))
      grads[0] = tf.IndexedSlices(tf.where(cond, grads[0].values, 0),
                                  grads[0].indices, grads[0].dense_shape)
      opt.apply_gradients(zip(grads, weights))
      """}) == [("grads-mask", "a.py", 4), ("grads-mask", "a.py", 6)]


def test_an_optimizer_subclass_that_masks_then_calls_super():
  assert _scan_files({"opt.py": """\
      class MaskedAdam(tf.keras.optimizers.Adam):
        def apply_gradients(self, grads_and_vars, **kwargs):
          masked = [(g * m, v) for m, (g, v) in zip(self._masks,
                                                    grads_and_vars)]
          return super().apply_gradients(masked, **kwargs)
      """}) == [("grads-mask", "opt.py", 3)]


def test_a_filter_passed_through_functools_partial():
  assert _scan_files({"arch.py": """\
      import re
      def freeze_vars(variables, pattern):
        return [v for v in variables if not re.match(pattern, v.name)]
      """, "model_fn.py": """\
      import functools
      import arch
      def train(loss, opt, variable_filter_fn=None):
        var_list = tf.trainable_variables()
        if variable_filter_fn:
          var_list = variable_filter_fn(var_list)
        return opt.minimize(loss, var_list=var_list)
      def main(loss, opt, params):
        train(loss, opt, functools.partial(arch.freeze_vars,
                                           pattern=params["freeze"]))
      """}) == [("var-list-filter", "model_fn.py", 6)]  # The filter's call.


def test_a_helper_defined_beside_its_call_keeps_the_file_readable(tmp_path):
  (tmp_path / "t.py").write_text(textwrap.dedent("""\
      import tensorflow as tf
      def entry_stop_gradients(target, mask):
        mask_h = tf.abs(mask - 1)
        return tf.stop_gradient(mask_h * target) + mask * target
      w = tf.Variable([1.0, 2.0])
      used = entry_stop_gradients(w, tf.constant([0.0, 1.0]))
      train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
          tf.reduce_sum(used))
      """))
  out, err = io.StringIO(), io.StringIO()
  assert _main.run([str(tmp_path)], "text", True, out, err) == 1
  assert "not in list" not in err.getvalue()
  assert "stop_gradient" not in out.getvalue() or "+++ b/" in out.getvalue()


def test_the_diff_keeps_latin_1_a_bom_and_form_feeds(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  body = ("import tensorflow as tf\n"
          "x = tf.Variable([1.0, 2.0])\n"
          "mask = tf.constant([0.0, 1.0])\x0c\n"
          "name = 'caf\u00e9'  # \u2028 inside a comment\n"
          "grads = tf.gradients(loss, [x])\n"
          "train = opt.apply_gradients([(g * mask, x) for g in grads])\n")
  (tmp_path / "latin.py").write_bytes(
      b"# -*- coding: latin-1 -*-\n" + body.replace("\u2028", "").encode(
          "latin-1"))
  (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + body.encode("utf-8"))
  out, err = io.BytesIO(), io.StringIO()
  wrapper = io.TextIOWrapper(out, encoding="utf-8")
  assert _main.run(["latin.py", "bom.py"], "text", True, wrapper, err) == 1
  wrapper.flush()
  diff = out.getvalue()
  assert "caf\xe9".encode("latin-1") not in diff or b"latin.py" in diff
  assert b"+++ b/bom.py" in diff and b"+++ b/latin.py" in diff
  assert "port by hand" not in err.getvalue(), err.getvalue()
  (tmp_path / "port.diff").write_bytes(diff)
  assert os.system("patch -s -p1 -i port.diff") == 0
  latin = (tmp_path / "latin.py").read_bytes()
  assert "caf\xe9".encode("latin-1") in latin and b"import tfpartial" in latin
  bom = (tmp_path / "bom.py").read_bytes()
  assert bom.startswith(b"\xef\xbb\xbf") and b"\x0c\n" in bom
  assert "\u2028".encode("utf-8") in bom


def test_the_port_attaches_to_the_apply_the_mask_reaches():
  source = textwrap.dedent("""\
      import numpy as np
      import tensorflow as tf
      x = tf.Variable([1.0, 2.0, 3.0])
      opt = tf.keras.optimizers.SGD(0.1, momentum=0.9)
      mask = np.array([0.0, 1.0, 1.0], np.float32)
      for _ in range(3):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.square(x - 5.0))
        grads = tape.gradient(loss, [x])
        opt.apply_gradients(zip(grads, [x]))  # Warm-up.
      for _ in range(3):
        with tf.GradientTape() as tape:
          loss = tf.reduce_sum(tf.square(x - 5.0))
        grads = tape.gradient(loss, [x])
        grads = [g * mask for g in grads]
        opt.apply_gradients(zip(grads, [x]))
      """)
  (finding,) = _scan.scan_text("t.py", source)
  apply_lines = {e.line for e in finding.edits if "spec.apply_gradients" in
                 e.text}
  assert apply_lines == {16}, finding.edits


def test_work_grows_linearly_with_the_file():
  def visits(pairs):
    text = "".join(
        f"g{i % 7} = opt.compute_gradients(loss)\n"
        f"t{i} = opt.apply_gradients([(a * m{i % 5}, v) for a, v in g{i % 7}])\n"
        for i in range(pairs))
    project = _project.Project([_files.Source("big.py", text)])
    analysis = Analysis(project)
    for idiom in _scan.IDIOMS:
      idiom.detect(analysis)
    module = project.modules[0]
    assert module.scope is not None
    return analysis.flow.visits, len(module.scope.nodes)
  small, small_nodes = visits(500)
  large, large_nodes = visits(2000)
  # A bounded number of evaluations per node, whatever the file's size.
  assert small <= 4 * small_nodes and large <= 4 * large_nodes
  assert large / small <= 1.1 * large_nodes / small_nodes


def test_gradients_masked_by_the_caller_of_an_apply_helper():
  assert _scan_files({"a.py": """\
      def apply_masked(opt, grads_and_vars):
        return opt.apply_gradients(grads_and_vars)

      def train(opt, loss, mask):
        gv = opt.compute_gradients(loss)
        return apply_masked(opt, [(g * mask, v) for g, v in gv])
      """}) == [("grads-mask", "a.py", 6)]


def test_only_the_functions_that_name_a_sink_are_read():
  # Two hundred functions that name no sink, one that masks: the scan reads
  # the one (and the module), not the others.
  quiet = "".join(f"def f{i}(x):\n  y = x * {i}\n  return y + 1\n\n"
                  for i in range(200))
  text = quiet + textwrap.dedent("""\
      def step(opt, loss, mask):
        gv = opt.compute_gradients(loss)
        return opt.apply_gradients([(g * mask, v) for g, v in gv])
      """)
  project = _project.Project([_files.Source("a.py", text)])
  analysis = Analysis(project)
  hits = [h for idiom in _scan.IDIOMS for h in idiom.detect(analysis)]
  assert [(h.node.lineno) for h in hits] == [803]
  module = project.modules[0]
  read = [s.name for s in module.scope.read()]
  assert read == ["<module>", "step"], read


# Function bodies of many statements, as generated or hand-unrolled code
# has them: a step and a mask, a re-mask in a training loop, chained
# stop-gradients, write-backs after each step.
BODIES = {
    "grads": ("def f(opt, loss, m0, m1, m2, m3, m4):\n", lambda i: (
        f"  g{i % 7} = opt.compute_gradients(loss)\n"
        f"  t{i} = opt.apply_gradients([(a * m{i % 5}, v) for a, v in "
        f"g{i % 7}])\n")),
    "remask": ("def f(model, mask, w0, w1, w2):\n  for e in range(3):\n",
               lambda i: (f"    w{i % 3}.assign(w{i % 3} * mask)\n"
                          f"    x{i} = model.fit(x, y)\n")),
    "stopped": ("def f(w, mask, x0, h0):\n", lambda i: (
        f"  h{i + 1} = tf.stop_gradient(h{i} * w) + mask * x0\n"
        f"  w{i} = mask * w + (1 - mask) * tf.stop_gradient(w)\n")),
    "written": ("def f(opt, loss, x0, x1):\n  saved = x0.numpy()\n"
                "  for e in range(3):\n", lambda i: (
                    f"    opt.minimize(loss, [x{i % 2}])\n"
                    f"    x{i % 2}[0].assign(saved[0])\n")),
    # One name mixed again and again from a mask made anew each time (a
    # GAN transfer's filter freezes, unrolled by hand): every `mask` reads
    # every `mask_vec`, and the judge of each mask reads them all.
    "remixed": ("def f(session, units):\n", lambda i: (
        f"  x = session.graph.get_tensor_by_name('w{i}:0')\n"
        "  mask_vec = np.ones((3, 3))\n"
        "  mask_vec[:, units] = 0\n"
        "  mask = tf.constant(mask_vec, dtype=x.dtype)\n"
        "  x = mask * x + tf.stop_gradient((1 - mask) * x)\n")),
}


def _calls_made(head, line, pairs):
  """The Python calls (generator steps too) a scan of the body makes:
  work, counted, not timed."""
  return scanned.scan_work(head + "".join(line(i) for i in range(pairs)))


@pytest.mark.parametrize("shape", sorted(BODIES))
def test_work_inside_one_function_grows_linearly(shape):
  head, line = BODIES[shape]
  small, large = _calls_made(head, line, 60), _calls_made(head, line, 240)
  assert large <= 4.6 * small, (small, large)


def test_a_name_set_first_in_each_turn_of_a_loop_does_not_see_last_turn():
  # Deep Compression's loop fills `feed_dict` from one helper per branch,
  # each after `feed_dict = {}`: the first helper is passed the empty
  # dict, not what the second filled last turn.

  tree = ast.parse(textwrap.dedent("""\
      total = 0
      for step in range(9):
        feed = {}
        feed = prune(feed)
        run(feed)
        feed = {}
        feed = group(feed)
        run(feed, total)
        total = total + 1
      """))
  module = _scopes.collect(tree)
  reads = sorted((n.lineno, n.id, n) for n in ast.walk(tree)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and n.id in {"feed", "total"})
  assert [(line, name, module.reaching(name, node))
          for line, name, node in reads] == [
              (4, "feed", (0,)), (5, "feed", (1,)), (7, "feed", (2,)),
              (8, "feed", (3,)), (8, "total", (0, 1)), (9, "total", (0,))]
