"""Whether an object's filtered list is the whole of what its taped loss
reads: a Keras layer's test-time update (`[v for v in
self.trainable_variables if "predictor" in v.name]`) of a loss recorded
under a `tf.GradientTape`, whose ops reach only the object's layers made
with that word in their `name=` (`self.predictor_hidden`,
`self.predictor_output`), through its methods (`self.predict_from_memory
(memory)`) and TensorFlow's ops. What the function is handed (`memory`)
was computed before the tape opened: no gradient reaches the layers
that made it. The list leaves out only variables this loss never reads,
so nothing is kept from training. A loss that also runs a layer named
otherwise (`self.encoder(x)`), or that reads what this cannot follow (an
attribute, a function of the project), is not answered here. Part of
`var-list-filter`."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes

# An object's own variables, as a filter's comprehension reads them.
_OWN = {"trainable_variables", "trainable_weights", "variables", "weights"}
# TensorFlow's and NumPy's modules, as code spells them.
_MODULES = {"tf", "tf1", "tfv1", "np", "numpy", "K", "math", "tensorflow"}
# Nodes whose children are what they read.
_THROUGH = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.IfExp,
            ast.Tuple, ast.List, ast.Subscript, ast.Slice, ast.keyword,
            ast.Starred)
_LIMIT = 200  # Expressions read at most: a loss is near its layers.


def reads_only_named(filtered: Optional[ast.AST], loss: Optional[ast.expr],
                     scope: _scopes.Scope) -> bool:
  """Whether `loss` (in the method `scope`, recorded by a tape) reads only
  layers of the object named with the word `filtered` keeps, one at
  least."""
  word = _kept_word(filtered)
  cls = _scopes.enclosing_class(scope)
  if word is None or cls is None or loss is None or not _taped(loss, scope):
    return False
  return _Reader(cls, word).reads_only_named(loss, scope)


def _kept_word(node: Optional[ast.AST]) -> Optional[str]:
  """The word `[v for v in self.trainable_variables if "w" in v.name]`
  keeps, None for any other filter."""
  if not isinstance(node, (ast.ListComp, ast.GeneratorExp)) or len(
      node.generators) != 1 or len(node.generators[0].ifs) != 1:
    return None
  every, test = node.generators[0].iter, node.generators[0].ifs[0]
  if not (isinstance(every, ast.Attribute) and every.attr in _OWN and
          isinstance(every.value, ast.Name) and every.value.id == "self"):
    return None
  if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
      test.ops[0], ast.In) and isinstance(test.left, ast.Constant) and (
          isinstance(test.left.value, str)) and test.left.value.strip(
              "/_") and isinstance(test.comparators[0], ast.Attribute) and (
                  test.comparators[0].attr == "name"):
    return test.left.value
  return None


def _taped(loss: Optional[ast.expr], scope: _scopes.Scope) -> bool:
  """Whether every value of `loss` (a name) is made in the body of a
  `with tf.GradientTape() as tape:` of its function."""
  if not isinstance(loss, ast.Name) or not scope.defs.get(loss.id):
    return False
  tapes = [w for w in scope.nodes if isinstance(w, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and _names.call_name(
          i.context_expr) == "GradientTape" for i in w.items)]
  return all(any(w.lineno < d.value.lineno <= (w.end_lineno or 0)
                 for w in tapes) for d in scope.defs[loss.id])


class _Reader:
  """The expressions a taped loss reads, back through its function's
  names and its object's methods, to the layers that make them."""

  def __init__(self, cls: _scopes.ClassInfo, word: str):
    self.cls = cls
    self.word = word
    self.named = False  # A layer named with the word was reached.

  def reads_only_named(self, loss: ast.expr, scope: _scopes.Scope) -> bool:
    seen: Set[int] = set()
    stack: List[Tuple[ast.AST, _scopes.Scope]] = [(loss, scope)]
    while stack:
      node, home = stack.pop()
      if id(node) in seen:
        continue
      seen.add(id(node))
      more = self._reads(node, home)
      if more is None or len(seen) > _LIMIT:
        return False
      stack.extend(more)
    return self.named

  def _reads(self, node: ast.AST, home: _scopes.Scope
             ) -> Optional[List[Tuple[ast.AST, _scopes.Scope]]]:
    """What `node` reads next, or None when it reads what this cannot
    follow."""
    if isinstance(node, ast.Constant):
      return []
    if isinstance(node, ast.Name):
      if node.id in home.params:
        return []  # Computed before the tape: no gradient reaches it.
      defs = home.defs.get(node.id)
      return [(d.value, home) for d in defs] if defs else None
    if isinstance(node, ast.Call):
      return self._call(node, home)
    if isinstance(node, ast.Attribute) and not _on_self(node):
      return [(node.value, home)]  # `x.shape`, `tf.float32`.
    if isinstance(node, _THROUGH):
      return [(c, home) for c in ast.iter_child_nodes(node)
              if isinstance(c, (ast.expr, ast.keyword))]
    return None

  def _call(self, call: ast.Call, home: _scopes.Scope
            ) -> Optional[List[Tuple[ast.AST, _scopes.Scope]]]:
    read = [(a, home) for a in [*call.args, *call.keywords]]
    func = call.func
    if (_names.dotted(func) or "").split(".")[0] in _MODULES:
      return read  # TensorFlow's op: what it reads.
    if not _on_self(func) or not isinstance(func, ast.Attribute):
      return None
    method = self.cls.methods.get(func.attr)
    if method is not None:
      return read + [(r.value, method) for r in method.nodes
                     if isinstance(r, ast.Return) and r.value is not None]
    # `self.head: Dense | None = None` declares it, `build` makes it.
    made = [v for v, _ in self.cls.attributes.get(f"self.{func.attr}", [])
            if not (isinstance(v, ast.Constant) and v.value is None)]
    if not made or not all(self._named(value) for value in made):
      return None  # A layer named otherwise, or not known.
    self.named = True
    return read

  def _named(self, value: ast.expr) -> bool:
    """`tf.keras.layers.Dense(n, name=f"{self.name}_predictor_hidden")`:
    a layer whose `name=` holds the kept word."""
    if not isinstance(value, ast.Call):
      return False
    name = next((k.value for k in value.keywords if k.arg == "name"), None)
    parts = name.values if isinstance(name, ast.JoinedStr) else [name]
    return any(isinstance(p, ast.Constant) and isinstance(p.value, str) and (
        self.word in p.value) for p in parts)


def _on_self(node: ast.AST) -> bool:
  """`self.x`."""
  return isinstance(node, ast.Attribute) and isinstance(
      node.value, ast.Name) and node.value.id == "self"
