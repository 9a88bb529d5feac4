"""A filter that leaves out only variables the loss never reads: a
transformer's pooler (the dense layer over the first token that makes the
pooled output), left out of a step whose loss reads per-token outputs
only (a language-model head's `.logits`, a tagger's `outputs[0]`). Those
variables get no gradient either way; nothing is frozen. Left out while
the file reads the pooled output (`pooler_output`, `outputs[1]`, `seq,
pooled = bert(...)`), they are frozen, and reported."""

from __future__ import annotations

import ast
from typing import Dict, Optional

from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _project

# Components only the pooled output reads.
_POOLED_ONLY = ("pooler",)
# What reads the pooled output, as words of the file.
_POOLED_WORDS = frozenset({"pooler_output", "pooled_output", "pooled",
                           "get_pooled_output", "pooled_outputs"})


def only_unread(node: ast.AST, module: _project.Module) -> bool:
  """Whether the filter `node` leaves out only a pooler (each string it
  compares names one) and `module` never reads the pooled output."""
  strings = [n.value for n in ast.walk(node) if isinstance(
      n, ast.Constant) and isinstance(n.value, str)]
  if not strings or not all(any(p in s.lower() for p in _POOLED_ONLY)
                            for s in strings):
    return False
  if module.words & _POOLED_WORDS or module.tree is None:
    return False
  bound = {_names.dotted(t): n.value for n in ast.walk(module.tree)
           if isinstance(n, ast.Assign) for t in n.targets}
  return not any(_second_output(n, bound) for n in ast.walk(module.tree))


def _second_output(node: ast.AST, bound: Dict[Optional[str], ast.expr]
                   ) -> bool:
  """`model(x)[1]`, or `seq, pooled = model(x)`: a model's second output
  read (a transformer's pooled output)."""
  if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call):
    index = node.slice
    return isinstance(index, ast.Constant) and index.value == 1 and (
        _model_call(node.value, bound))
  return isinstance(node, ast.Assign) and isinstance(
      node.value, ast.Call) and any(
          isinstance(t, (ast.Tuple, ast.List)) and len(t.elts) >= 2
          for t in node.targets) and _model_call(node.value, bound)


def _model_call(call: ast.Call, bound: Dict[Optional[str], ast.expr]
                ) -> bool:
  """Whether `call` runs a model: a layer kept on `self`, or a name bound
  to a pretrained model or to an instance of a class (`Model(...)`), not
  a function, a generator or a tensor operation."""
  function = call.func
  if isinstance(function, ast.Attribute) and _names.root(function) == "self":
    return True
  made = bound.get(_names.dotted(function))
  name = _names.call_name(made) if isinstance(made, ast.Call) else ""
  return name == "from_pretrained" or name[:1].isupper()
