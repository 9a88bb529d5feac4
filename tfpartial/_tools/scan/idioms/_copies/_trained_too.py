"""A write's target that some path makes a trainable variable: `self.w =
tf.Variable(init)`, and `tf.Variable(true_values, trainable=False)` only
where an option fixes it; the write re-masks weights that train wherever
that option is off, not a non-trainable copy."""

from __future__ import annotations

from tfpartial._tools.scan._labels import Labels


def only_untrainable(labels: Labels) -> bool:
  """Whether the labels say a non-trainable variable and nothing else:
  the variable they first name is the one made `trainable=False`.

  >>> import ast
  >>> shadow = ast.parse("tf.Variable(1, trainable=False)").body[0].value
  >>> only_untrainable({"var": shadow, "shadow": shadow})
  True
  >>> only_untrainable({"var": ast.Name("w"), "shadow": shadow})
  False
  """
  shadow = labels.get("shadow")
  return shadow is not None and labels.get("var", shadow) is shadow
