"""The package's layers (docs/architecture.md): imports only point down.

spec value -> step -> families -> public API -> tools. Every import
statement of every module counts, those inside functions too, so a cycle
cannot hide in a late import.
"""

import ast
import pathlib
import re

import pytest  # pylint: disable=g-bad-import-order

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "tfpartial"

LAYERS = {
    "spec value": ["_types", "_errors", "_variables", "_compat", "_selection",
                   "_index", "_index_text", "_parse", "_safejson", "_npy",
                   "_specfile", "_value", "_tfprivate"],
    "step": ["_tensors", "_distribute", "_lock", "_mask", "_restore",
             "_compact", "_native", "_kernel_build", "_kernel_cache",
             "_fused", "_step"],
    "families": ["_fused_adam", "_fused_sgd", "_select_keras", "_fused_keras",
                 "_fused_tf_keras", "_wrap",
                 "_family", "_v1", "_keras", "_tf_keras", "_optimizers"],
    "public API": ["_spec", "__init__"],
    "tools": ["_progress", "_checkpoints", "_keras_files", "_keras_names",
              "_keras_archive", "_verify", "_demo", "_bench_measure",
              "_bench_steps", "_bench_cases", "_bench_memory", "_bench_build",
              "_bench", "cli", "__main__"],
}
RANK = {module: rank for rank, modules in enumerate(LAYERS.values())
        for module in modules}


def _imports(path):
  """The tfpartial modules `path` imports, anywhere in it."""
  found = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.ImportFrom) and node.module:
      if node.module == "tfpartial":
        found.update(alias.name for alias in node.names)
      elif node.module.startswith("tfpartial."):
        found.add(node.module.split(".")[1])
    elif isinstance(node, ast.Import):
      for alias in node.names:
        if alias.name.startswith("tfpartial."):
          found.add(alias.name.split(".")[1])
  return found


def _graph():
  return {path.stem: _imports(path) for path in PACKAGE.glob("*.py")}


def test_every_module_has_a_layer():
  unplaced = set(_graph()) - set(RANK)
  assert not unplaced, f"place these in a layer of LAYERS: {sorted(unplaced)}"


@pytest.mark.parametrize("module", sorted(_graph()))
def test_imports_point_down_or_across(module):
  graph = _graph()
  assert module in RANK, f"place {module} in a layer of LAYERS"
  for imported in graph[module]:
    assert imported in RANK, (module, imported)
    assert RANK[imported] <= RANK[module], (
        f"{module} ({list(LAYERS)[RANK[module]]}) imports {imported} "
        f"({list(LAYERS)[RANK[imported]]}), a layer above it")


def test_there_is_no_import_cycle():
  graph = _graph()
  state = {}

  def visit(module, trail):
    if state.get(module) == "done":
      return
    assert state.get(module) != "open", " -> ".join(trail + [module])
    state[module] = "open"
    for imported in sorted(graph.get(module, ())):
      visit(imported, trail + [module])
    state[module] = "done"

  for module in sorted(graph):
    visit(module, [])


def _page_layers():
  """The layer table of docs/architecture.md: (layer, modules), top first."""
  page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
  section = page.split("## The layers", 1)[1].split("\n## ", 1)[0]
  rows = [line.split("|")[1:-1] for line in section.splitlines()
          if line.startswith("|")]
  return [(cells[0].strip(), re.findall(r"`(\w+)`", cells[1]))
          for cells in rows[2:]]  # After the header and its rule.


def test_the_architecture_page_shows_these_layers():
  shown = _page_layers()
  assert [layer for layer, _ in shown] == list(reversed(LAYERS)), (
      "docs/architecture.md lists the layers top first")
  for layer, modules in shown:
    assert sorted(modules) == sorted(LAYERS[layer]), (
        f"docs/architecture.md, layer {layer!r}: "
        f"{sorted(set(modules) ^ set(LAYERS[layer]))}")
