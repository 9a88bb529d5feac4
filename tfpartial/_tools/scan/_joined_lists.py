"""Two of the graph's variable lists joined into one: `tf.trainable_variables()
+ tf.get_collection(tf.GraphKeys.TRAINABLE_RESOURCE_VARIABLES)` is still a
list of variables (a later filter by name picks some of them), where `w + b`
of two variables is arithmetic on their values.
"""

from __future__ import annotations

import ast
from typing import List

from tfpartial._tools.scan import _names


def joined(node: ast.AST) -> bool:
  """Whether `node` adds up two or more calls that return the graph's
  variable lists (`tf.trainable_variables() + tf.get_collection(key)`).

  >>> joined(ast.parse("tf.trainable_variables() + "
  ...                  "tf.get_collection(k)").body[0].value)
  True
  >>> joined(ast.parse("w + b").body[0].value)
  False
  """
  if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
    return False
  todo: List[ast.AST] = [node]
  while todo:  # Iterated: a generated `1 + 1 + ...` nests past the stack.
    each = todo.pop()
    if isinstance(each, ast.BinOp) and isinstance(each.op, ast.Add):
      todo.extend((each.left, each.right))
    elif not (isinstance(each, ast.Call) and (
        _names.call_name(each) in _names.VARIABLE_LISTS)):
      return False
  return True
