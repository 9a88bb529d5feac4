"""Whether a call of the project given dicts of variables applies an
entry of one of them to what an entry of another computes (a model's
decoder weights applied to its encoder's output: `conv2d_transpose(
result, self.g_weights['wc4'], ...)` where `result` comes from
`self.f_weights`), in its function or, for a class built by the call, in
one of its methods. Not a teacher or an anchor: dicts each applied to
the data alone, their outputs meeting only in a loss
(`kl(student_logits, teacher_logits)`), or entries of both subtracted
from each other (`a[k] - b[k]`, a penalty pulling one toward the
other). Part of `var-list-filter` (`_dict_listed`).

What is followed: the parameters the call binds to the dicts (by
position or keyword; for a class, its `__init__`'s, then the attributes
of its object that `__init__` sets from them, read through each
method's first parameter), and within each function the local names
every binding of which computes from a trained dict (in any order: a
loop's next turn reads later bindings; a name also bound from anything
else, such as the data before another dict's pass, is not one). An
entry computes only where it meets the data the call gives directly (a
parameter given a plain name that is none of the dicts and whose
entries the function never reads, the caller's parameter or bound by
calls of no constant, dtype or shape maker (nor a shape's read), or the
attribute `__init__` keeps it in): not a number, a dtype, a shape read,
a mask dict's entry or a name bound from the data (fewer findings). A
call the project does not define is not read.

>>> import ast
>>> from tfpartial._tools.scan import _files, _project
>>> text = ("def net(x, f, g):\\n  h = mul(x, f['a'])\\n"
...         "  return mul(h, g['b'])\\n"
...         "def loss(x, f, g):\\n"
...         "  return kl(mul(x, f['a']), mul(x, g['b']))\\n")
>>> project = _project.Project([_files.Source("t.py", text)])
>>> scope = project.parsed(project.modules[0])
>>> functions = {s.node.name: s for s in scope.all()
...              if isinstance(s.node, ast.FunctionDef)}
>>> [_applied(functions[n], {"f"}, {"g"}, {"x"}) for n in ("net", "loss")]
[True, False]
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis


def applied_together(analysis: Analysis, call: ast.Call,
                     scope: _scopes.Scope, trained: Set[str],
                     left: Set[str]) -> bool:
  """Whether the project's function or class `call` calls applies an
  entry of a `left` dict (names of `scope`) to what a `trained` one
  computes (read once per call and dicts: each step asks)."""
  key = f"dicts applied {id(call)} {sorted(trained)} {sorted(left)}"
  found = analysis.once(key, lambda: _together(
      analysis, call, scope, trained, left))
  return bool(found)

# TensorFlow's and NumPy's calls and attributes reading only a tensor's
# shape or type: their result carries none of its values.
_SHAPES = frozenset({"shape", "shape_n", "size", "rank", "ones_like",
                     "zeros_like", "get_shape", "dtype"})

# The calls that make a constant, a dtype or a shape, never the data
# (and those reading only a tensor's shape or type).
_NOT_DATA = _SHAPES | frozenset({
    "constant", "as_dtype", "DType", "TensorShape", "Dimension", "float",
    "int", "bool", "str", "len", "zeros", "ones", "fill", "range",
    "float16", "float32", "float64", "int32", "int64", "array",
    "convert_to_tensor", "cast", "list", "tuple", "dict"})


def _together(analysis: Analysis, call: ast.Call, scope: _scopes.Scope,
              trained: Set[str], left: Set[str]) -> bool:
  for function, home, skip in _targets(analysis, call, scope):
    bound = _bound(call, function, skip)
    ours = {p for p, name in bound.items() if name in trained}
    theirs = {p for p, name in bound.items() if name in left}
    if not ours or not theirs:
      continue
    data = {p for p in _data(function, bound, trained | left)
            if _given_data(scope, bound[p])}
    if home is None:
      return _applied(function, ours, theirs, data)
    attributes = _kept(function, ours), _kept(function, theirs)
    kept = _kept(function, data)
    if all(attributes) and any(_applied(method, *attributes, kept, True)
                               for method in home.methods.values()):
      return True
  return False


def _targets(analysis: Analysis, call: ast.Call, scope: _scopes.Scope
             ) -> List[Tuple[_scopes.Scope, Optional[_scopes.ClassInfo],
                             int]]:
  """The function `call` runs (with its class, for a construction) and
  how many leading parameters the call does not give (`self`)."""
  flow = analysis.flow
  called = flow.called(call.func, scope)
  if "cls" in called:
    info = flow.classes.get(id(called["cls"]))
    if info is None:
      target = analysis.project.resolve(scope, _names.dotted(call.func) or "")
      info = target if isinstance(target, _scopes.ClassInfo) else None
    init = analysis.project.method(info, "__init__") if info else None
    return [(init, info, 1)] if init is not None else []
  callee = flow.callee(call, scope)
  known = flow.functions.get(id(callee)) if callee is not None else None
  inner = known[1].scope_of(known[0]) if known is not None else None
  if inner is None or not isinstance(inner.node, ast.FunctionDef):
    return []
  return [(inner, None, 1 if inner.cls is not None and isinstance(
      call.func, ast.Attribute) else 0)]


def _bound(call: ast.Call, function: _scopes.Scope, skip: int
           ) -> Dict[str, str]:
  """Parameter -> the plain name the call passes it."""
  node = function.node
  arguments = getattr(node, "args")
  names = [a.arg for a in (*arguments.posonlyargs, *arguments.args)][skip:]
  found = {}
  for name, value in zip(names, call.args):
    if isinstance(value, ast.Starred):
      break
    if isinstance(value, ast.Name):
      found[name] = value.id
  for keyword in call.keywords:
    if keyword.arg and isinstance(keyword.value, ast.Name):
      found[keyword.arg] = keyword.value.id
  return found


def _data(function: _scopes.Scope, bound: Dict[str, str],
          dicts: Set[str]) -> Set[str]:
  """The parameters the call gives a plain name that is none of the
  dicts, and that the function never reads an entry of (the data: not
  a constant, a dtype, a shape read, nor another dict such as masks)."""
  entries = {n.value.id for n in function.nodes if isinstance(
      n, ast.Subscript) and isinstance(n.value, ast.Name)}
  return {p for p, name in bound.items()
          if name not in dicts and p not in entries}


def _given_data(scope: _scopes.Scope, name: str) -> bool:
  """Whether the caller's `name` may be the data: a parameter of the
  calling function (not rebound), or a name every binding of which is a
  call (a placeholder, a layer's output) of no constant, dtype or shape
  maker; not a number, `tf.float32` or an expression of those given by
  name (`lam = 0.5`)."""
  defs = scope.defs.get(name, [])
  if name in scope.params:
    return not defs
  return bool(defs) and all(
      isinstance(d.value, ast.Call) and (
          (_names.dotted(d.value.func) or "").split(".")[-1]
          not in _NOT_DATA) for d in defs)


def _kept(init: _scopes.Scope, parameters: Set[str]) -> Set[str]:
  """The attributes `__init__` sets from `parameters` on its object."""
  node = init.node
  arguments = getattr(node, "args").args
  if not arguments:
    return set()
  me = arguments[0].arg
  found = set()
  for each in init.nodes:
    if not isinstance(each, ast.Assign):
      continue
    pairs = list(zip(each.targets[0].elts, each.value.elts)) if (
        isinstance(each.targets[0], ast.Tuple) and isinstance(
            each.value, ast.Tuple)) else [(each.targets[0], each.value)]
    for target, value in pairs:
      if isinstance(target, ast.Attribute) and isinstance(
          target.value, ast.Name) and target.value.id == me and isinstance(
              value, ast.Name) and value.id in parameters:
        found.add(target.attr)
  return found


def _applied(function: _scopes.Scope, ours: Set[str], theirs: Set[str],
             data: Set[str], kept: bool = False) -> bool:
  """Whether `function` passes a read of `theirs` (parameters, or the
  object's attributes where `kept`) directly to a call or an operator
  that is also given a value computed from `ours`: a local name bound
  from one, or a call or operator given a read of one (`matmul(matmul(x,
  f['a']), g['b'])`); not a read of `ours` itself (`a[k] - b[k]`, an
  anchor's distance)."""
  me = ""
  if kept:
    arguments = getattr(function.node, "args", None)
    first = getattr(arguments, "args", [])
    if not first:
      return False
    me = first[0].arg
  tainted = _tainted(function, ours, data, me)
  for node in function.nodes:
    parts = _parts(node)
    if any(_reads(p, theirs, me) for p in parts) and any(
        isinstance(p, ast.Name) and p.id in tainted or _combines(
            p, ours, data, me) or any(isinstance(q, ast.Name) and (
                q.id in tainted) for q in _parts(p)) for p in parts):
      return True
  return False


def _parts(node: ast.AST) -> List[ast.expr]:
  """The arguments of a call, the operands of an operator, else none."""
  if isinstance(node, ast.Call):
    return [*node.args, *(k.value for k in node.keywords)]
  if isinstance(node, ast.BinOp):
    return [node.left, node.right]
  return []


def _tainted(function: _scopes.Scope, ours: Set[str], data: Set[str],
             me: str) -> Set[str]:
  """The local names bound from what `ours` computes (a binding passing
  a read of one to a call or an operator, or reading such a name) whose
  every binding does so or reads such a name (itself too: `h =
  relu(matmul(h, w))`). A name also bound from anything else (`h = x`
  before the next model's pass) is not one, nor a name bound to an
  entry itself (`w` of `for k, w in f.items()`). Each binding is read
  once, and once more per name it reads."""
  owner: List[str] = []  # A binding -> the name it binds.
  reads: List[Set[str]] = []  # A binding -> the local names it reads.
  computed: List[bool] = []
  readers: Dict[str, List[int]] = {}  # A name -> the bindings reading it.
  for name, defs in function.defs.items():
    for d in defs:
      owner.append(name)
      computed.append(_computed(d.value, ours, data, me))
      reads.append({n.id for n in _valued(d.value) if isinstance(
          n, ast.Name) and n.id in function.defs} if d.value else set())
      for each in reads[-1]:
        readers.setdefault(each, []).append(len(owner) - 1)
  reached = _reached(owner, computed, readers)
  kept = set(function.defs)
  counts = [len(r) for r in reads]
  dropped = [owner[i] for i in range(len(owner))
             if not computed[i] and not counts[i]]
  while dropped:
    name = dropped.pop()
    if name in kept:
      kept.discard(name)
      for index in readers.get(name, ()):
        counts[index] -= 1
        if not computed[index] and not counts[index]:
          dropped.append(owner[index])
  return reached & kept


def _reached(owner: List[str], computed: List[bool],
             readers: Dict[str, List[int]]) -> Set[str]:
  """The names some binding of which computes from `ours`, or reads such
  a name."""
  found = {owner[i] for i in range(len(owner)) if computed[i]}
  pending = list(found)
  while pending:
    for index in readers.get(pending.pop(), ()):
      if owner[index] not in found:
        found.add(owner[index])
        pending.append(owner[index])
  return found


def _computed(value: Optional[ast.expr], ours: Set[str], data: Set[str],
              me: str) -> bool:
  """Whether `value` passes a read of `ours` to a call or an operator
  with another value (not a shape's or a dtype's read)."""
  return value is not None and any(
      _combines(n, ours, data, me) for n in _valued(value))


def _combines(node: ast.AST, ours: Set[str], data: Set[str],
              me: str) -> bool:
  """Whether a call or operator applies a read of `ours` directly to the
  data the project call gives (`matmul(x, f['a'])`, `self.x` of the
  object `me` where `__init__` keeps it): not an entry only converted
  (`cast(f[k], dtype)`), scaled by another parameter, shaped like
  another (`reshape(a[k], shape(b[k]))`), masked by another dict's entry
  or combined with constants. A name bound from the data is not read
  (fewer findings, never a look-alike)."""
  parts = _parts(node)
  return any(_reads(p, ours, me) for p in parts) and any(
      not _reads(p, ours, me) and _reads(p, data, me) for p in parts)



def _valued(value: ast.expr) -> List[ast.AST]:
  """The nodes of `value` outside the reads of a shape or a type
  (`tf.shape(s)`, `tf.ones_like(s)`, `s.shape`): each visited once."""
  found: List[ast.AST] = []
  stack: List[ast.AST] = [value]
  while stack:
    node = stack.pop()
    if isinstance(node, ast.Call) and (_names.dotted(node.func) or "").split(
        ".")[-1] in _SHAPES or isinstance(node, ast.Attribute) and (
            node.attr in _SHAPES):
      continue
    found.append(node)
    stack.extend(ast.iter_child_nodes(node))
  return found


def _reads(node: ast.AST, names: Set[str], me: str) -> bool:
  """Whether `node` is a read of one of `names` (a parameter, or an
  attribute of the object `me`), or an entry of one."""
  while isinstance(node, ast.Subscript):
    node = node.value
  if not me:
    return isinstance(node, ast.Name) and node.id in names
  return isinstance(node, ast.Attribute) and node.attr in names and (
      isinstance(node.value, ast.Name) and node.value.id == me)
