"""Whether a variable wraps an input rather than holding a parameter: a
name rebound to a variable of its own value (`batch_x =
tf.Variable(batch_x)`, `x_test = tf.Variable(x_test)`), data made a
variable for a tape to watch. A hand list of every parameter leaves it
out without freezing anything.
"""

from __future__ import annotations

import ast

from tfpartial._tools.scan import _names


def wraps_itself(name: str, value: ast.expr) -> bool:
  """Whether `name = value` makes a variable of the value `name` held."""
  return isinstance(value, ast.Call) and _names.call_name(
      value) == "Variable" and bool(value.args) and isinstance(
          value.args[0], ast.Name) and value.args[0].id == name
