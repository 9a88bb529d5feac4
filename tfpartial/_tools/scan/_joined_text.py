"""The literal text of a string built by joining (`scope + '/' +
'network'`, `'{}/{}'.format(scope, 'network')`, `f"{scope}/network"`,
`'/'.join([scope, 'network'])`), read as its plain form
(`scope + '/network'`) reads: the pieces written next to each other are
one text, and a computed piece splits them.
"""

from __future__ import annotations

import ast
import string
from typing import List, Optional, Union

def runs(node: ast.AST) -> List[str]:
  """The runs of literal text in `node`, in order; a piece read as
  computed adds the string constants inside it as runs of their own (as
  a walk of it finds them).

  >>> runs(ast.parse("s + '/' + 'network'").body[0].value)
  ['/network']
  >>> runs(ast.parse("'{}/{}'.format(s, 'net')").body[0].value)
  ['/net']
  >>> runs(ast.parse("f'{s}/net/{t}'").body[0].value)
  ['/net/']
  >>> runs(ast.parse("join(s, 'net')").body[0].value)
  ['net']
  """
  found: List[str] = []
  run: List[str] = []
  for piece in _pieces(node):
    if isinstance(piece, str):
      run.append(piece)
      continue
    if run:
      found.append("".join(run))
      run = []
    found.extend(n.value for n in ast.walk(piece) if isinstance(
          n, ast.Constant) and isinstance(n.value, str))
  if run:
    found.append("".join(run))
  return found


def _pieces(node: ast.AST) -> List[Union[str, ast.AST]]:
  """The pieces of `node` in order: a text, or a computed node (its
  constants still read)."""
  found: List[Union[str, ast.AST]] = []
  todo: List[ast.AST] = [node]
  while todo:  # Last first: the left of a `+` is read before its right.
    each = todo.pop()
    if isinstance(each, ast.Constant) and isinstance(each.value, str):
      found.append(each.value)
    elif isinstance(each, ast.BinOp) and isinstance(each.op, ast.Add):
      todo.extend((each.right, each.left))
    elif isinstance(each, ast.JoinedStr):
      todo.extend(reversed(each.values))
    elif isinstance(each, ast.FormattedValue):
      found.append(each.value)
    else:
      parts = _formatted(each) if isinstance(each, ast.Call) else None
      if parts is None:
        found.append(each)
      else:
        todo.extend(reversed(parts))
  return found


def _formatted(call: ast.Call) -> Optional[List[ast.AST]]:
  """The pieces of `'{}/{}'.format(a, b)` or `'/'.join([a, b])`, as
  nodes, or None for any other call."""
  func = call.func
  if not (isinstance(func, ast.Attribute) and isinstance(
      func.value, ast.Constant) and isinstance(func.value.value, str)):
    return None
  text = func.value.value
  if func.attr == "join" and len(call.args) == 1 and not call.keywords \
      and isinstance(call.args[0], (ast.List, ast.Tuple)):
    parts: List[ast.AST] = []
    for index, element in enumerate(call.args[0].elts):
      if index:
        parts.append(ast.Constant(value=text))
      parts.append(element)
    return parts
  if func.attr != "format" or any(
      isinstance(a, ast.Starred) for a in call.args) or any(
          k.arg is None for k in call.keywords):
    return None
  keywords = {k.arg: k.value for k in call.keywords}
  parts = []
  counted = 0
  try:
    fields = list(string.Formatter().parse(text))
  except ValueError:
    return None
  for literal, field, spec, conversion in fields:
    if literal:
      parts.append(ast.Constant(value=literal))
    if field is None:
      continue
    if spec or conversion:
      return None
    if field == "":
      field = str(counted)
      counted += 1
    if field.isdigit() and int(field) < len(call.args):
      parts.append(call.args[int(field)])
    elif field in keywords:
      parts.append(keywords[field])
    else:
      return None
  return parts
