"""Whether a filter reads `tf` in a module that binds `tf` nowhere: a
training script ported to PyTorch half-way (`import torch`, never
`import tensorflow as tf`, its `tf.get_collection(...)` and `tf.train.
GradientDescentOptimizer(lr)` left as they were). Its first `tf.` raises
a `NameError`: the filter never runs and no step is built. A module with
a star import, one run from a notebook, one read without a block that
does not parse, or one that reaches its globals by name (`exec`,
`globals()`) may bind `tf` unseen: never judged so. Part of
`var-list-filter`'s gates."""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _project

_NAME = "tf"
# Calls that may bind a module's globals unseen.
_UNSEEN = {"exec", "execfile", "globals", "setattr", "__import__"}


def unbound(module: _project.Module, node: ast.AST) -> bool:
  """Whether `node` reads `tf` and `module` binds it nowhere.

  >>> from tfpartial._tools.scan import _files
  >>> module = _project.Module(_files.Source("t.py", ""), ("t",))
  >>> module.tree = ast.parse("import torch\\nvs = tf.trainable_variables()\\n")
  >>> unbound(module, module.tree.body[1].value)
  True
  >>> module.tree = ast.parse("import tensorflow as tf\\nvs = tf.x()\\n")
  >>> unbound(module, module.tree.body[1].value)
  False
  """
  tree = module.tree
  if tree is None or module.star or module.dropped or module.rewritten or (
      module.path.endswith(".ipynb")) or not any(
          isinstance(n, ast.Name) and n.id == _NAME for n in ast.walk(node)):
    return False
  return not any(_binds(n) for n in ast.walk(tree))


def _binds(node: ast.AST) -> bool:
  """Whether `node` binds `tf` (or may bind a global unseen)."""
  if isinstance(node, (ast.Import, ast.ImportFrom)):
    return any((a.asname or a.name.split(".")[0]) == _NAME or a.name == "*"
               for a in node.names)
  if isinstance(node, ast.Name):
    return node.id == _NAME and not isinstance(node.ctx, ast.Load) or (
        node.id in _UNSEEN)
  if isinstance(node, ast.arg):
    return node.arg == _NAME
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return node.name == _NAME
  if isinstance(node, ast.Global):
    return _NAME in node.names
  return False
