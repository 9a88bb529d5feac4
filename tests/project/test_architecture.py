"""The package's layers (docs/architecture.md) are its folders.

Every module of `tfpartial/` lives in a layer folder, at any depth, except
the entry points at the top (`__init__`, `__main__`, `cli`). The layer
order is read from the folders themselves: folder A is above folder B when
a module of A imports one of B. The imports between folders must form one
chain, each layer importing only layers below it, so there is exactly one
order and no cycle; and no module imports in a cycle, at any depth. Every
import statement counts, those inside functions too, so a cycle cannot
hide in a late import.
"""

import ast
import pathlib
import re

import pytest  # pylint: disable=g-bad-import-order

PACKAGE = pathlib.Path(__file__).resolve().parent.parent.parent / "tfpartial"
# The entry points: they import the layers, and no layer imports them.
TOP = {"__init__", "__main__", "cli"}


def _module_name(package, path):
  """`path`'s dotted name below the package (a package is its folder)."""
  parts = list(path.relative_to(package).with_suffix("").parts)
  if parts[-1] == "__init__" and len(parts) > 1:
    parts.pop()
  return ".".join(parts)


def _modules(package=PACKAGE):
  """Dotted name below `tfpartial` -> path, for every module at any depth."""
  return {_module_name(package, path): path
          for path in sorted(package.rglob("*.py"))}


def _imported_names(module, path, node):
  """The dotted names (below `tfpartial`) one import statement names."""
  if isinstance(node, ast.Import):
    names = [alias.name for alias in node.names]
  elif isinstance(node, ast.ImportFrom):
    if node.level:  # Relative to the importing module's package.
      here = ["tfpartial", *module.split(".")]
      if path.name != "__init__.py":
        here.pop()
      here = here[:len(here) - node.level + 1]
      base = ".".join(here + ([node.module] if node.module else []))
    else:
      base = node.module or ""
    names = [base] + [f"{base}.{alias.name}" for alias in node.names]
  else:
    return []
  return [name[len("tfpartial."):] for name in names
          if name.startswith("tfpartial.")]


def _graph(package=PACKAGE):
  """Module -> the tfpartial modules it imports, anywhere in it."""
  modules = _modules(package)
  graph = {}
  for module, path in modules.items():
    imported = set()
    for node in ast.walk(ast.parse(path.read_text())):
      imported.update(name for name in _imported_names(module, path, node)
                      if name in modules)
    graph[module] = imported - {module}
  return graph


def _layer(module, package=PACKAGE):
  """The layer folder a module belongs to, or None for an entry point."""
  first = module.split(".")[0]
  return first if (package / first).is_dir() else None


def _layers_top_first(package=PACKAGE):
  """The layer folders, top first, in the one order their imports allow;
  and layer -> the layers it imports."""
  layers = sorted(path.name for path in package.iterdir()
                  if path.is_dir() and (path / "__init__.py").exists())
  below = {layer: set() for layer in layers}
  for module, imported in _graph(package).items():
    for target in imported:
      source, goal = _layer(module, package), _layer(target, package)
      if source and goal and source != goal:
        below[source].add(goal)
  order, remaining = [], set(layers)
  while remaining:
    # The layers no remaining layer imports; one chain has exactly one.
    tops = sorted(layer for layer in remaining
                  if not any(layer in below[other] for other in remaining))
    assert tops, f"the layers import each other in a cycle: {below}"
    assert len(tops) == 1, (
        f"no one layer is above the others: {tops} import each other "
        "neither way; one must import the other, or they are one layer")
    order.append(tops[0])
    remaining.remove(tops[0])
  return order, below


def _cycle(graph):
  """An import cycle of `graph` as a list of modules, or None."""
  state = {}

  def visit(module, trail):
    if state.get(module) == "done":
      return None
    if state.get(module) == "open":
      return trail[trail.index(module):] + [module]
    state[module] = "open"
    for imported in sorted(graph.get(module, ())):
      found = visit(imported, trail + [module])
      if found:
        return found
    state[module] = "done"
    return None

  for module in sorted(graph):
    found = visit(module, [])
    if found:
      return found
  return None


def test_every_module_is_in_a_layer_folder():
  strays = [module for module in _modules()
            if _layer(module) is None and module not in TOP]
  assert not strays, f"put these in a layer folder of tfpartial/: {strays}"


def test_each_layer_has_modules_inside():
  order, _ = _layers_top_first()
  assert len(order) >= 6, order
  for layer in order:
    assert any(_layer(m) == layer and m != layer for m in _modules()), layer


def test_the_layers_are_one_chain_and_none_imports_one_above():
  order, below = _layers_top_first()
  rank = {layer: position for position, layer in enumerate(order)}
  for layer, imported in below.items():
    for other in imported:
      assert rank[other] > rank[layer], (layer, other)


def test_no_layer_imports_an_entry_point():
  for module, imported in _graph().items():
    if _layer(module) is not None:
      assert not imported & TOP, (module, imported & TOP)


@pytest.mark.parametrize("module", sorted(_modules()))
def test_every_tfpartial_import_names_a_module_of_the_package(module):
  # An import the graph cannot resolve would let a cycle or an upward
  # import pass unseen.
  path = _modules()[module]
  for node in ast.walk(ast.parse(path.read_text())):
    names = _imported_names(module, path, node)
    if names:
      assert set(names) & set(_modules()), (module, ast.dump(node))


def test_there_is_no_import_cycle():
  cycle = _cycle(_graph())
  assert cycle is None, " -> ".join(cycle)


def _fake_package(root, files):
  package = root / "tfpartial"
  for name, text in files.items():
    (package / name).parent.mkdir(parents=True, exist_ok=True)
    (package / name).write_text(text)
  return package


def test_the_checks_see_inside_nested_folders(tmp_path):
  package = _fake_package(tmp_path, {
      "__init__.py": "", "_low/__init__.py": "", "_low/deep/__init__.py": "",
      "_low/deep/_a.py": "from tfpartial._low.deep import _b\n",
      "_low/deep/_b.py": "def f():\n  from . import _a\n",
      "_high/__init__.py": "", "_high/_c.py": "from tfpartial._low import deep\n",
      "_low/_d.py": "from tfpartial._high import _c\n",
  })
  assert _cycle(_graph(package)) == ["_low.deep._a", "_low.deep._b",
                                     "_low.deep._a"]
  with pytest.raises(AssertionError, match="cycle"):
    _layers_top_first(package)  # _high imports _low, and _low imports _high.


def test_two_layers_that_neither_import_the_other_have_no_order(tmp_path):
  package = _fake_package(tmp_path, {
      "__init__.py": "", "_a/__init__.py": "", "_a/_x.py": "",
      "_b/__init__.py": "", "_b/_y.py": "",
  })
  with pytest.raises(AssertionError, match="no one layer is above"):
    _layers_top_first(package)


def _page_layers():
  """The layer table of docs/architecture.md: (folder, modules), top first."""
  page = (PACKAGE.parent / "docs" / "architecture.md").read_text()
  section = page.split("## The layers", 1)[1].split("\n## ", 1)[0]
  rows = [line.split("|")[1:-1] for line in section.splitlines()
          if line.startswith("|")]
  return [(cells[0].strip().strip("`").rstrip("/"),
           re.findall(r"`([\w/]+)`", cells[1]))
          for cells in rows[2:]]  # After the header and its rule.


def test_the_architecture_page_shows_these_layers_and_modules():
  shown = _page_layers()
  order, _ = _layers_top_first()
  assert [layer for layer, _ in shown] == order, (
      "docs/architecture.md lists the layer folders top first")
  for layer, modules in shown:
    actual = sorted(module[len(layer) + 1:].replace(".", "/")
                    for module in _modules()
                    if _layer(module) == layer and module != layer
                    and not module.endswith("__init__"))
    actual = [m for m in actual if not _is_package(layer, m)]
    assert sorted(modules) == actual, (
        f"docs/architecture.md, layer {layer!r}: "
        f"{sorted(set(modules) ^ set(actual))}")


def _is_package(layer, module):
  return (PACKAGE / layer / module).is_dir()


# A function past this many lines is usually a plan and its steps.
LONGEST_FUNCTION = 60


def test_no_function_is_longer_than_a_screen():
  long = []
  for module, path in _modules().items():
    for node in ast.walk(ast.parse(path.read_text())):
      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        lines = node.end_lineno - node.lineno + 1
        if lines > LONGEST_FUNCTION:
          long.append(f"{module}.{node.name}: {lines} lines")
  assert not long, long
