"""A step over the last stage of a stack its function builds (greedy
layer-wise pretraining: `pretrain(layer)` builds the encoders through
`stacked(x, layer)`, whose loop opens `variable_scope('ae{}'.format(i))`
for each `i in range(1, num_layers + 1)`, and trains only
`get_collection(TRAINABLE_VARIABLES, scope='ae{}'.format(layer))`): the
lower stages, built in the same graph below the one trained, are left
out, whatever another loss of the module trains (the supervised
fine-tuning after it). The stack is known by its scopes: one template of
the loop's variable, the filter's the same template of the bound that
loop runs to (`f"layer_{k}"`, `"block%d" % k`, `"h" + str(k)`); a scope
of its own per call (`with variable_scope('member{}'.format(k))` with no
loop: an ensemble's member), or a loop whose bound the template does not
follow, is no stack. Part of `var-list-filter`."""

from __future__ import annotations

import ast
from typing import Optional, Tuple

from tfpartial._tools.scan import _names
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms._sources._train_step import Step

# A scope's template: the text before the formatted name, the name, and
# the text after it (`'ae{}'.format(layer)` -> ('ae', 'layer', '')).
Template = Tuple[str, str, str]

_SCOPES = {"variable_scope", "name_scope"}


def last_stage(analysis: Analysis, step: Step) -> bool:
  """Whether the step's filter keeps the scope of one stage (a template
  of a name) that a loop of its function, or of a function it calls
  with that name, opens for every stage up to it.

  >>> text = ("def pre(x, k):\\n"
  ...         "  h = x\\n"
  ...         "  for i in range(k + 1):\\n"
  ...         "    with tf.variable_scope('ae%d' % i):\\n"
  ...         "      h = dense(h)\\n")
  >>> loop = ast.parse(text).body[0]
  >>> _loops_over(loop, "k", ("ae", "k", ""))
  True
  """
  filtered = step.labels.get("filtered")
  if not isinstance(filtered, ast.Call):
    return False
  template = _template(_names.scope_argument(filtered))
  if template is None:
    return False
  scope = step.scope
  if _loops_over(scope.node, template[1], template):
    return True
  for node in scope.nodes:
    if not isinstance(node, ast.Call):
      continue
    callee = analysis.flow.callee(node, scope)
    param = _receiving(node, callee, template[1])
    if param is not None and callee is not None and _loops_over(
        callee, param, template):
      return True
  return False


def _template(node: Optional[ast.AST]) -> Optional[Template]:
  """A scope written as text around one name (`'ae{}'.format(k)`,
  `f'ae{k}'`, `'ae%d' % k`, `'ae' + str(k)`), else None."""
  if isinstance(node, ast.Call) and isinstance(
      node.func, ast.Attribute) and node.func.attr == "format" and (
          isinstance(node.func.value, ast.Constant)) and len(
              node.args) == 1 and isinstance(node.args[0], ast.Name):
    text = node.func.value.value
    if isinstance(text, str) and text.count("{}") == 1:
      before, after = text.split("{}")
      return before, node.args[0].id, after
  if isinstance(node, ast.JoinedStr):
    return _joined_template(node)
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and (
      isinstance(node.left, ast.Constant)) and isinstance(node.right, ast.Name):
    text = node.left.value
    for mark in ("%d", "%s", "%i"):
      if isinstance(text, str) and text.count("%") == 1 and mark in text:
        before, after = text.split(mark)
        return before, node.right.id, after
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and (
      isinstance(node.left, ast.Constant)) and isinstance(
          node.left.value, str) and isinstance(node.right, ast.Call) and (
              _names.call_name(node.right) == "str") and len(
                  node.right.args) == 1 and isinstance(
                      node.right.args[0], ast.Name):
    return node.left.value, node.right.args[0].id, ""
  return None


def _joined_template(node: ast.JoinedStr) -> Optional[Template]:
  """`f'ae{k}'` (text around one formatted name) as a template."""
  parts = node.values
  names = [i for i, part in enumerate(parts)
           if isinstance(part, ast.FormattedValue)]
  if len(names) != 1:
    return None
  value = parts[names[0]]
  if not isinstance(value, ast.FormattedValue) or not isinstance(
      value.value, ast.Name) or value.format_spec is not None:
    return None
  texts = [p.value if isinstance(p, ast.Constant) else None for p in parts]
  before, after = texts[:names[0]], texts[names[0] + 1:]
  if not all(isinstance(t, str) for t in before + after):
    return None
  return ("".join(str(t) for t in before), value.value.id,
          "".join(str(t) for t in after))


def _receiving(call: ast.Call, callee: Optional[ast.AST], name: str
               ) -> Optional[str]:
  """The parameter of `callee` that `call` passes the name `name` to."""
  if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
    return None
  params = [a.arg for a in callee.args.args]
  if params[:1] == ["self"] and isinstance(call.func, ast.Attribute):
    params = params[1:]
  for index, arg in enumerate(call.args):
    if isinstance(arg, ast.Name) and arg.id == name and index < len(params):
      return params[index]
  for keyword in call.keywords:
    if isinstance(keyword.value, ast.Name) and keyword.value.id == name:
      return keyword.arg
  return None


def _loops_over(function: ast.AST, bound: str, template: Template) -> bool:
  """Whether a `for i in range(...)` of `function` that runs to `bound`
  opens the scope of `template` with `i` in place of its name."""
  for node in ast.walk(function):
    if not isinstance(node, ast.For) or not isinstance(
        node.target, ast.Name) or not isinstance(
            node.iter, ast.Call) or _names.call_name(node.iter) != "range":
      continue
    if not any(isinstance(n, ast.Name) and n.id == bound
               for arg in node.iter.args for n in ast.walk(arg)):
      continue
    stage = (template[0], node.target.id, template[2])
    if any(_opens(each, stage) for statement in node.body
           for each in ast.walk(statement)):
      return True
  return False


def _opens(node: ast.AST, stage: Template) -> bool:
  """Whether `node` is a `with` opening a scope of the template `stage`."""
  return isinstance(node, ast.With) and any(
      isinstance(item.context_expr, ast.Call) and (
          _names.call_name(item.context_expr) in _SCOPES) and (
              item.context_expr.args) and _template(
                  item.context_expr.args[0]) == stage
      for item in node.items)
