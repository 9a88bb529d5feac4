"""What a call or a name is, by its spelling: the tables the flow reads.

The scanner never resolves imports: `tf.compat.v1.scatter_update`,
`v1.scatter_update` and `scatter_update` are the same call to it, named by
the last part of the dotted name.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Set, Tuple, TypeGuard, cast

from tfpartial._tools.scan import _shape_choice

GRADIENTS = {"compute_gradients", "_compute_gradients", "gradients",
             "gradient", "get_gradients"}
VARIABLES = {"Variable", "VariableV1", "ResourceVariable", "get_variable",
             "add_weight", "add_variable"}
VARIABLE_LISTS = {"trainable_variables", "global_variables",
                  "model_variables", "local_variables", "get_collection",
                  "get_trainable_variables", "get_variables",
                  "get_model_variables", "get_variables_to_restore",
                  "all_variables", "watched_variables",
                  "get_collection_ref", "get_variables_by_name",
                  "get_variables_by_suffix",
                  # Every global variable and saveable (TF1, private).
                  "_all_saveable_objects"}
# slim's lists by a name's part: a project's own function of that name
# (a model's `get_variables_by_name(names)`) is read as written.
NAMED_LISTS = {"get_variables_by_name", "get_variables_by_suffix"}
# A hand-written layer's getter of its weights
# (`layer.get_trainable_weights()`), read by its spelling only when the
# project's own method is not known.
WEIGHT_GETTERS = {"get_trainable_weights"}
VARIABLE_ATTRIBUTES = {"trainable_variables", "trainable_weights",
                       "weights", "variables", "kernel", "bias",
                       "embeddings", "trainable_vars", "recurrent_kernel",
                       "depthwise_kernel", "gamma", "beta",
                       "variable_map"}  # A TF1 hub module's, by name.
# The variables a Keras layer's base class builds, by attribute.
LAYER_VARIABLES = {"kernel", "bias", "embeddings", "recurrent_kernel",
                   "depthwise_kernel", "pointwise_kernel", "gamma", "beta"}
# The argument that names a scope, by position, for each variable list.
SCOPE_ARGUMENT = {"get_collection": 1, "trainable_variables": 0,
                  "global_variables": 0, "model_variables": 0,
                  "get_trainable_variables": 0, "get_variables": 0,
                  "get_model_variables": 0, "local_variables": 0,
                  "get_variables_to_restore": 0,
                  "get_collection_ref": 1,
                  # slim's: the name or suffix narrows as a scope does.
                  "get_variables_by_name": 0,
                  "get_variables_by_suffix": 0,
                  "_all_saveable_objects": 0}
SNAPSHOTS = {"initialized_value", "read_value", "numpy", "value", "eval",
             "get_weights", "identity"}
SHAPES = {"identity", "convert_to_tensor", "reshape", "expand_dims",
          "squeeze", "gather", "cast", "tile", "broadcast_to", "transpose",
          "stack", "concat", "constant", "array", "asarray", "astype",
          "to_float", "copy", "abs", "gather_nd", "embedding_lookup",
          "split"}
# Shape operations whose result is elements of the variable itself.
VIEWS = {"gather", "gather_nd", "embedding_lookup", "reshape", "transpose",
         "expand_dims", "squeeze", "convert_to_tensor", "cast", "split"}
MASKS = {"ones_like", "eye", "one_hot", "sequence_mask", "band_part", "tri", "tril",
         "triu", "logical_not", "logical_and", "logical_or", "greater",
         "less", "equal", "not_equal", "greater_equal", "less_equal"}
# Draws: a condition made from one samples, it fixes nothing.
RANDOM = {"random_uniform", "uniform", "random_normal", "normal",
          "truncated_normal", "bernoulli", "multinomial", "categorical",
          "random_shuffle", "stateless_random_uniform", "rand", "randn",
          "random", "dropout", "gumbel"}
CONTAINERS = {"zip", "list", "tuple", "set", "frozenset", "sorted",
              "reversed", "enumerate", "dict", "OrderedDict", "chain",
              "flatten", "nest_flatten", "from_iterable"}
ZEROS = {"zeros_like", "zeros"}
# Python's filters of an iterable by a predicate (`filter(test, src)`;
# `itertools.filterfalse(test, src)` keeps where the test fails).
FILTERS = {"filter", "filterfalse"}
# Views of a container (`masks.items()`) or a member taken out of it
# (`masks.pop(0)`): what it holds.
VIEWS_OF_CONTAINERS = {"values", "items", "keys", "pop"}
# A set's method keeping some of its members (`set(vs).intersection(
# tf.trainable_variables())`, `every.symmetric_difference(frozen)` of a
# list drawn from `every`, as `every - set(frozen)`): some of the
# receiver's, and the argument's.
SUBSETS = {"intersection", "difference", "symmetric_difference"}
# Questions about a tensor's shape: the answer is not the tensor.
SHAPE_QUERIES = {"shape", "size", "rank", "shape_n", "get_shape",
                 "dim_size", "int_shape", "shape_list", "get_shape_list"}
TRAIN_STEPS = {"minimize", "apply_gradients"}
WRITES = {"scatter_update", "scatter_nd_update", "assign", "set_weights",
          "set_value", "batch_set_value"}
FINITE_CHECKS = {"is_nan", "is_finite", "is_inf", "isnan", "isfinite",
                 "isinf"}
# Spellings whose meaning holds even when the project defines a function of
# that name (a wrapper's `apply_gradients` still applies).
SPELLED = (GRADIENTS | VARIABLES | VARIABLE_LISTS - NAMED_LISTS
           | TRAIN_STEPS | WRITES | {"stop_gradient"})
# Calls whose `with` block names the variables made in it.
TF_SCOPES = {"variable_scope", "name_scope"}
# The same, with `tf.compat.v1.VariableScope` objects reused as scopes.
TF_SCOPES_OR_CLASS = TF_SCOPES | {"VariableScope"}
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
RESTORES = {"restore", "load_weights", "init_from_checkpoint",
            "assign_from_checkpoint_fn", "load_model", "restore_v2"}
# `masc`, `mascara`, `maschera`, `masque`: the word in other languages.
_MASK_NAME = re.compile(
    r"(mask|masc(?!ot)|masque|(^|_)(keep|frozen|freeze|trainable)(_|$))",
    re.I)
_NOT_A_MASK = re.compile(r"(prob|rate|ratio|ckpt|checkpoint|step|dims?$|"
                         r"tau|decay|momentum|alpha|coef|factor|scale|"
                         r"_(vars?|variables?|weights?|params?|layers?|list|"
                         r"names?|scopes?)$)", re.I)


def bound_names(node: ast.AST) -> List[str]:
  """The names `node` itself binds or declares: a stored or deleted
  name, `global`/`nonlocal`, an import (`*` for a star import), a `def`
  or `class`, an `except ... as`, a `match` capture (not parameters).

  >>> [bound_names(n) for n in ast.parse(
  ...     "import a.b as c, d.e\\nfrom f import *").body]
  [['c', 'd'], ['*']]
  """
  if isinstance(node, ast.Name):
    return [] if isinstance(node.ctx, ast.Load) else [node.id]
  if isinstance(node, (ast.Global, ast.Nonlocal)):
    return list(node.names)
  if isinstance(node, (ast.Import, ast.ImportFrom)):
    return [a.asname or a.name.split(".")[0] for a in node.names]
  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
    return [node.name]
  name = getattr(node, "rest", None) if isinstance(
      node, ast.MatchMapping) else getattr(node, "name", None) if isinstance(
          node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) else None
  return [name] if isinstance(name, str) else []


def binding_counts(node: ast.AST) -> Dict[str, int]:
  """How many times each name is bound or declared (`bound_names`) in
  `node` and everything under it."""
  counts: Dict[str, int] = {}
  for each in ast.walk(node):
    for name in bound_names(each):
      counts[name] = counts.get(name, 0) + 1
  return counts


def joins_lists(call: ast.Call) -> bool:
  """`sum(lists, [])`: lists (one per scope or layer) joined into one, a
  container of what they hold, not arithmetic.

  >>> joins_lists(ast.parse("sum([f(s) for s in scopes], [])").body[0].value)
  True
  >>> joins_lists(ast.parse("sum(losses)").body[0].value)
  False
  """
  start = call.args[1] if len(call.args) == 2 else next(
      (k.value for k in call.keywords if k.arg == "start"), None)
  return isinstance(call.func, ast.Name) and call.func.id == "sum" and (
      isinstance(start, ast.List) and not start.elts)


def call_name(call: ast.Call) -> str:
  """The last part of the called name, or "" for anything else.

  >>> call_name(ast.parse("tf.compat.v1.scatter_update(x, i, v)").body[0].value)
  'scatter_update'
  """
  func = call.func
  if isinstance(func, ast.Attribute):
    return func.attr
  if isinstance(func, ast.Name):
    return func.id
  return ""


def unwrapped(node: ast.expr) -> ast.expr:
  """`node` without the `list(...)` or `tuple(...)` calls around it
  (`list(zip(grads, variables))` -> `zip(grads, variables)`)."""
  while isinstance(node, ast.Call) and call_name(node) in {
      "list", "tuple"} and len(node.args) == 1:
    node = node.args[0]
  return node


def dotted(node: ast.AST) -> Optional[str]:
  """`a.b.c` for a chain of names, else None.

  >>> dotted(ast.parse("self.layer.kernel").body[0].value)
  'self.layer.kernel'
  """
  if isinstance(node, ast.Name):
    return node.id
  if isinstance(node, ast.Attribute):
    base = dotted(node.value)
    return None if base is None else f"{base}.{node.attr}"
  return None


def statements(node: ast.AST) -> List[ast.stmt]:
  """The statements of a function's body; none for a lambda, whose body
  is one expression (a step in `lambda: helper(x)` has a lambda for its
  function).

  >>> statements(ast.parse("lambda: f(x)").body[0].value)
  []
  """
  body = getattr(node, "body", None)
  return body if isinstance(body, list) else []


def underlying(node: ast.AST) -> ast.AST:
  """What an expression reads beneath indexing, reshaping and snapshots:
  `x` for `tf.cast(x[0], tf.float32)`.

  >>> read = ast.parse("tf.cast(w.read_value(), t)").body[0].value
  >>> ast.unparse(underlying(read))
  'w'
  """
  while True:
    if isinstance(node, ast.Subscript):
      node = node.value
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in SNAPSHOTS | {"numpy"} and not node.args:
      node = node.func.value
    elif isinstance(node, ast.Call) and node.args and (
        call_name(node) in SHAPES | {"run"}):
      node = node.args[0]
    else:
      return node


def root(node: ast.AST) -> str:
  """The variable an expression reads, as text: `x` for `x[0]`,
  `x.read_value()`, `tf.identity(x)`, `layer` for `layer.get_weights()[0]`.

  >>> root(ast.parse("tf.expand_dims(x.initialized_value()[0], 0)").body[0].value)
  'x'
  """
  node = underlying(node)
  return dotted(node) or ast.unparse(node)[:60]



def opens_scope(statement: ast.stmt, scopes: Set[str]
                ) -> TypeGuard[ast.With]:
  """Whether `statement` is a `with` block that opens one of `scopes`.

  >>> opens_scope(ast.parse("with tf.name_scope('a'): pass").body[0],
  ...             TF_SCOPES)
  True
  """
  return isinstance(statement, ast.With) and any(
      isinstance(i.context_expr, ast.Call) and call_name(
          i.context_expr) in scopes for i in statement.items)


# Keywords of a variable list's call that name what it leaves out.
EXCLUDING = {"exclude_patterns", "exclude"}


def names_left_out(node: ast.AST) -> bool:
  """Whether the names a filter spells are left out, not kept: a test
  negated (`'bert' not in v.name`, `not v.name.startswith(...)`), a
  keyword of exclusion, `itertools.filterfalse`.

  >>> names_left_out(ast.parse("[v for v in vs if 'a' not in v.name]"
  ...                          ).body[0].value)
  True
  >>> names_left_out(ast.parse("filter_variables(vs, ['a'])").body[0].value)
  False
  """
  if isinstance(node, ast.Call) and (any(
      k.arg in EXCLUDING for k in node.keywords) or call_name(
          node) == "filterfalse"):
    return True
  return any(isinstance(n, ast.Compare) and any(
      isinstance(op, ast.NotIn) for op in n.ops) or isinstance(
          n, ast.UnaryOp) and isinstance(n.op, ast.Not)
             for n in ast.walk(node))


def base_name(node: ast.AST) -> Optional[str]:
  """The name under subscripts and attributes: `w` of `w[0].value[r]`."""
  while isinstance(node, (ast.Subscript, ast.Attribute)):
    node = node.value
  return node.id if isinstance(node, ast.Name) else None
def literal_names(node: object) -> bool:
  """A literal string, or a non-empty list or tuple of them."""
  if isinstance(node, (ast.List, ast.Tuple)):
    return bool(node.elts) and all(literal_names(e) for e in node.elts)
  return isinstance(node, ast.Constant) and isinstance(node.value, str)


def scope_argument(call: ast.Call) -> Optional[ast.AST]:
  """The scope (or the include/exclude list) a variable-list call filters
  by, if it names one.

  >>> ast.unparse(scope_argument(ast.parse(
  ...     "tf.get_collection(keys.TRAINABLE_VARIABLES, scope)").body[0].value))
  'scope'
  >>> scope_argument(ast.parse("tf.trainable_variables()").body[0].value)
  """
  name = call_name(call)
  if name not in SCOPE_ARGUMENT:
    return None
  position = SCOPE_ARGUMENT[name]
  chosen = call.args[position] if len(call.args) > position else next(
      (k.value for k in call.keywords
       if k.arg in {"scope", "include", "exclude", "suffix"}), None)
  if chosen is None or isinstance(chosen, ast.Constant) and (
      chosen.value is None or chosen.value == ""):
    return None
  return chosen


_GRADIENT_PARAMETER = re.compile(
    r"^(grads?|gradients?|grads?_and_vars?|gvs|grads?_vars?|"
    r"grad_var_pairs|gradvars|grads?_by_\w+|\w*_grads?)$")
# Methods whose gradient parameter is the optimizer's gradient.
OPTIMIZER_METHODS = {"apply_gradients", "_resource_apply_dense",
                     "_resource_apply_sparse", "_apply_dense",
                     "_apply_sparse", "update_step", "_update_step",
                     "apply", "_distributed_apply", "_apply_weight_decay",
                     "_resource_apply_sparse_duplicate_indices"}


def param_labels(name: str, scope: object) -> Dict[str, ast.AST]:
  """What a parameter is by its name: `grads`, `grads_and_vars` (and a
  method of an optimizer's `grad`) hold gradients.

  >>> sorted(param_labels("grads_and_vars", None))
  ['grad']
  """
  node = getattr(scope, "node", None) or ast.Pass()
  if _GRADIENT_PARAMETER.match(name):
    return {"grad": node}
  return {}


_PREDICATE_WORDS = re.compile(r"(filter|select|match|freez|frozen|train|"
                              r"keep|scope|exclud|includ|pattern|regex|fix)",
                              re.I)
# Identifiers that say a choice of variables (`fixed_list[i] == '0'`,
# `layer in trainable_layers`), word by word.
_CHOICE_WORDS = re.compile(r"^(fix|fixed|freeze|frozen|trainable|"
                           r"tune|finetune|keep|exclude|excluded|"
                           r"include|included|scopes?|patterns?|regex|"
                           r"select(ed)?|skip)$", re.I)


def filters_by_name(node: ast.AST, flow: object = None, scope: object = None,
                    env: object = None) -> bool:
  """Whether a condition chooses variables: tests a variable's name or
  scope (`'x' in v.name`, `v.op.name.startswith(scope)`, `re.match(p,
  v.name)`, through a local name holding `v.name`), asks a predicate of
  the project or one passed in (`variable_filter_fn(v)`), or reads a
  choice by its name (`fixed_list[i, j] == '0'`, `layer in to_train`).

  >>> filters_by_name(ast.parse("'dense' in v.name").body[0].value)
  True
  >>> filters_by_name(ast.parse("fixed_list[i, j] == '0'").body[0].value)
  True
  >>> filters_by_name(ast.parse("g is not None").body[0].value)
  False
  """
  if _none_check(node):
    return _not_one_variable(node, flow, scope, env)
  if isinstance(node, ast.BoolOp) and all(_none_check(v) for v in node.values):
    # `g is not None and v is not None`: guards joined, still no choice.
    return any(_not_one_variable(v, flow, scope, env) for v in node.values)
  if _negated_guard(node) or _by_trainable(node):
    return False
  if _not_one_variable(node, flow, scope, env, kept=True):
    return True  # `var == emb_doc`: one variable kept, by equality.
  if mentions_a_name_test(node) or _reads_a_name(node, scope) or (
      _shape_choice.chooses_by_shape(node)):
    return True
  if _in_chosen_list(node, flow, scope, env):
    return True
  given = _given_lists(node, scope)
  for item in ast.walk(node):
    if isinstance(item, ast.Call) and (item.args or item.keywords):
      spelled = call_name(item)
      if _PREDICATE_WORDS.search(spelled) and spelled not in {
          "trainable"}:
        return True
      labels = getattr(flow, "labels", None)
      if labels is not None and "fn" in labels(item.func, scope, env):
        return True
    elif isinstance(item, (ast.Name, ast.Attribute)) and not isinstance(
        item.ctx, ast.Store):
      spelled = item.id if isinstance(item, ast.Name) else item.attr
      if spelled != "trainable" and spelled not in given and any(
          _CHOICE_WORDS.match(word) for word in _words(spelled)):
        return True
  return False


def _by_trainable(node: ast.AST) -> bool:
  """Whether a condition reads variables only through their `trainable`
  flag, with flags of its own (`p.trainable and trainable or not
  p.trainable and non_trainable`): what `trainable_variables()` keeps,
  a module's own `parameters()`, not a choice by name.

  >>> _by_trainable(ast.parse("p.trainable and not frozen").body[0].value)
  True
  >>> _by_trainable(ast.parse("p.trainable and 'b' in p.name").body[0].value)
  False
  """
  read = list(ast.walk(node))
  return any(isinstance(n, ast.Attribute) for n in read) and all(
      n.attr == "trainable" for n in read if isinstance(n, ast.Attribute)
  ) and not any(isinstance(n, (ast.Call, ast.Subscript, ast.Constant))
                for n in read)


def _given_lists(node: ast.AST, scope: object) -> Set[str]:
  """The parameters a condition keeps the members of (`w.ref() in
  trainable_vars`): the caller's choice, passed on, not one made here
  (`not in frozen` leaves variables out here)."""
  params = getattr(scope, "params", None) or ()
  return {item.comparators[0].id for item in ast.walk(node)
          if isinstance(item, ast.Compare) and len(item.ops) == 1 and
          isinstance(item.ops[0], ast.In) and isinstance(
              item.comparators[0], ast.Name) and
          item.comparators[0].id in params}


def in_chosen_list(node: ast.AST, flow: object, scope: object,
                   env: object) -> bool:
  """`v not in encoder_vars`: membership in variables chosen by name."""
  return _in_chosen_list(node, flow, scope, env)


def _in_chosen_list(node: ast.AST, flow: object, scope: object,
                    env: object) -> bool:
  """`v not in encoder_vars`, `v in set(head_vars)`: membership in a list
  of variables chosen by name or scope."""
  labels = getattr(flow, "labels", None)
  if labels is None:
    return False
  for item in ast.walk(node):
    if isinstance(item, ast.Compare) and len(item.ops) == 1 and isinstance(
        item.ops[0], (ast.In, ast.NotIn)):
      chosen = item.comparators[0]
      while isinstance(chosen, ast.Call) and call_name(chosen) in {
          "set", "list", "frozenset", "tuple"} and len(chosen.args) == 1:
        chosen = chosen.args[0]
      found = labels(chosen, scope, env)
      if "filtered" in found or "var" in found and _a_part(
          chosen, isinstance(item.ops[0], ast.NotIn), scope):
        return True
  return False


def _a_part(chosen: ast.AST, negated: bool, scope: object) -> bool:
  """Whether a list of variables that a membership test reads is a part
  of the model: a layer's or an object's own (`v in new_layer.variables`,
  `v not in head.get_variables()`), or, left out, the variables that
  existed before (`v not in old_vars`, `old_vars = set(
  tf.trainable_variables())` taken before a subnetwork is built); not the
  whole list itself (`v not in tf.trainable_variables()`)."""
  if isinstance(chosen, ast.Name):
    params = getattr(scope, "params", None) or ()
    defs = (getattr(scope, "defs", None) or {}).get(chosen.id, [])
    values = [_unwrapped(d.value) for d in defs]
    return chosen.id not in params and bool(values) and (
        not all(_whole_list(v) for v in values) or negated)
  return not _whole_list(chosen)


def _unwrapped(node: ast.AST) -> ast.AST:
  while isinstance(node, ast.Call) and call_name(node) in {
      "set", "list", "frozenset", "tuple"} and len(node.args) == 1:
    node = node.args[0]
  return node


def _whole_list(node: ast.AST) -> bool:
  """`tf.trainable_variables()`, `slim.get_variables()`: every variable
  of the graph (no scope; not an object's `layer.get_variables()`)."""
  if not isinstance(node, ast.Call) or call_name(node) not in (
      VARIABLE_LISTS) or scope_argument(node) is not None:
    return False
  receiver = node.func.value if isinstance(node.func, ast.Attribute) \
      else None
  return receiver is None or (dotted(receiver) or "").split(".")[0] in (
      _MODULES)


# How code spells TensorFlow's modules (`tf.compat.v1`, `tf_slim`).
_MODULES = {"tf", "tf1", "tfv1", "v1", "compat", "tf_compat", "slim",
            "tf_slim", "contrib", "variables", "tensorflow", "K", "keras"}


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")


def _words(identifier: str) -> List[str]:
  """`fixed_list` -> ['fixed', 'list']; `trainableScopes` too; without
  `trainable` where it names all the trainable variables
  (`layer_trainable_weights`)."""
  spaced = _CAMEL.sub(r"\1_\2", identifier)
  words = [w for w in spaced.split("_") if w]
  return [w for i, w in enumerate(words) if w.lower() != "trainable" or (
      words[i + 1:i + 2] not in (["weights"], ["variables"], ["vars"]))]


def _not_one_variable(node: ast.AST, flow: object, scope: object,
                      env: object, kept: bool = False) -> bool:
  """`v is not self.scales`: every variable but one the model holds
  (a prior's scales, a step's own table), by identity; not `g is not
  None`, nor a test against anything but a variable. `kept`: the one
  variable kept by equality instead (`var == emb_doc`: a document
  table trained alone)."""
  labels = getattr(flow, "labels", None)
  wanted = ast.Eq if kept else ast.IsNot
  if labels is None or not isinstance(node, ast.Compare) or len(
      node.ops) != 1 or not isinstance(node.ops[0], wanted) or (
          not isinstance(node.left, ast.Name)):
    return False
  other = node.comparators[0]
  return isinstance(other, (ast.Name, ast.Attribute)) and "var" in labels(
      other, scope, env)


def _none_check(node: ast.AST) -> bool:
  """`g is not None`, `isinstance(...)`: a guard, not a choice; `scale
  != None` is the same guard (a multiplier looked up by name, if set)."""
  if isinstance(node, ast.Compare) and all(
      isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
    return True
  if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(
      node.ops[0], (ast.Eq, ast.NotEq)) and is_none(node.comparators[0]):
    return True
  return isinstance(node, ast.Call) and call_name(node) in {
      "isinstance", "hasattr", "callable"}


def _negated_guard(node: ast.AST) -> bool:
  """`not g is None`, `not isinstance(...)`: a guard negated (the `else`
  of `if acc[j] is None: acc[j] = g`), still no choice of variables."""
  if not isinstance(node, ast.UnaryOp) or not isinstance(node.op, ast.Not):
    return False
  inner = node.operand
  if isinstance(inner, ast.Compare) and len(inner.ops) == 1:
    return is_none(inner.comparators[0]) and isinstance(
        inner.ops[0], (ast.Is, ast.IsNot, ast.Eq, ast.NotEq))
  return isinstance(inner, ast.Call) and call_name(inner) in {
      "isinstance", "hasattr", "callable"}


def _reads_a_name(node: ast.AST, scope: object) -> bool:
  """Whether a condition reads a local name assigned from a variable's
  name (`var_name = var.op.name; parts = var_name.split('/')`)."""
  defs = getattr(scope, "defs", None)
  if not defs:
    return False
  known: Dict[object, object] = getattr(scope, "judged", {})
  seen = set()
  stack = [(n.id, 0) for n in ast.walk(node) if isinstance(n, ast.Name)]
  while stack:
    name, depth = stack.pop()
    if name in seen or depth > 3 or name not in defs:
      continue
    seen.add(name)
    key = (_reads_a_name, name, 0)
    if key not in known:  # Once per scope and name: scripts ask often.
      known[key] = _named_from_a_test(defs[name])
    tested, read = cast(Tuple[bool, List[str]], known[key])
    if tested:
      return True  # Also a flag set by a name test (`add = False`).
    stack.extend((n, depth + 1) for n in read)
  return False


def _named_from_a_test(defs: List[object]) -> Tuple[bool, List[str]]:
  """Whether one of a name's assignments tests a variable's name (or is
  under such a test), and the names its values read."""
  read: List[str] = []
  for each in defs:
    guard = getattr(each, "where").guard
    value = getattr(each, "value")
    if mentions_a_name_test(value) or guard is not None and (
        mentions_a_name_test(guard)):
      return True, read
    read += [n.id for n in ast.walk(value) if isinstance(n, ast.Name)]
  return False, read


def is_mask_name(name: str) -> bool:
  """Whether a name says it holds a mask.

  >>> [is_mask_name(n) for n in ("row_mask", "keep", "keep_prob", "lr")]
  [True, True, False, False]
  >>> [is_mask_name(n) for n in ("hp_masc", "masque", "mascot")]
  [True, True, False]
  """
  known = _MASK_NAMES.get(name)
  if known is None:
    if len(_MASK_NAMES) > 1 << 16:
      _MASK_NAMES.clear()
    last = name.rsplit(".", 1)[-1]
    known = _MASK_NAMES[name] = bool(_MASK_NAME.search(last)) and not (
        _NOT_A_MASK.search(last))
  return known


# Each name asked about, answered once (the flow asks of every read).
_MASK_NAMES: Dict[str, bool] = {}


def literal_mask(node: ast.AST) -> bool:
  """A nested list of 0s and 1s (both) or of booleans.

  >>> literal_mask(ast.parse("[[0., 1.], [1, 1]]").body[0].value)
  True
  >>> literal_mask(ast.parse("[0.5, 1.0]").body[0].value)
  False
  """
  values = set()

  def gather(item: ast.AST) -> bool:
    if isinstance(item, (ast.List, ast.Tuple)):
      return all(gather(element) for element in item.elts)
    if isinstance(item, ast.Constant) and isinstance(item.value,
                                                     (bool, int, float)):
      values.add(item.value if isinstance(item.value, bool) else
                 float(item.value))
      return True
    return False

  if not gather(node) or not values:
    return False
  return values <= {True, False} and all(isinstance(v, bool) for v in values) \
      or values == {0.0, 1.0}


def mentions_a_name_test(node: ast.AST) -> bool:
  """Whether a condition tests a variable's name or scope (`'x' in v.name`,
  `v.op.name.startswith(scope)`, `re.match(p, v.name)`).

  >>> mentions_a_name_test(ast.parse("'dense' in v.name").body[0].value)
  True
  """
  for item in ast.walk(node):
    if isinstance(item, ast.Attribute) and item.attr == "name":
      return True
    if isinstance(item, ast.Call) and call_name(item) in {
        "startswith", "endswith", "match", "search", "fullmatch", "fnmatch",
        "findall"}:
      return True
  return False


def is_zero(node: ast.AST) -> bool:
  """`0`, `0.0`, `tf.zeros_like(g)`, `tf.zeros(...)`.

  >>> is_zero(ast.parse("tf.zeros_like(g)").body[0].value)
  True
  """
  if isinstance(node, ast.Constant):
    return node.value == 0 and not isinstance(node.value, bool)
  if isinstance(node, ast.Call) and call_name(node) in {"constant", "fill"}:
    # `tf.constant(0.0, shape=[1, d])`, `tf.fill([1, d], 0.)`.
    value = node.args[0] if call_name(node) == "constant" and node.args \
        else node.args[1] if len(node.args) == 2 else None
    return isinstance(value, ast.Constant) and value.value == 0 and (
        not isinstance(value.value, bool))
  return isinstance(node, ast.Call) and call_name(node) in ZEROS


def is_none(node: ast.AST) -> bool:
  """`None`."""
  return isinstance(node, ast.Constant) and node.value is None


def chosen_layers(node: ast.AST) -> bool:
  """`model.layers[-1]`, `model.layers[3:]`, `net.layers[i]`: layers of a
  model chosen by position (whose variables are a part of the model's)."""
  return isinstance(node, ast.Subscript) and isinstance(
      node.value, ast.Attribute) and node.value.attr == "layers"


def model_layers(node: ast.AST) -> bool:
  """`model.layers`, `model.layers[1:]`: a model's layers, each named
  (a test of their names chooses some of the model's variables)."""
  return isinstance(node, ast.Attribute) and node.attr == "layers" or (
      chosen_layers(node))


def checks_finite(node: ast.AST) -> bool:
  """Whether a condition is a NaN/Inf check (a guard, not a freeze)."""
  return any(isinstance(item, ast.Call) and call_name(item) in FINITE_CHECKS
             for item in ast.walk(node))


def argument(call: ast.Call, params: List[str], param: str
             ) -> Optional[ast.expr]:
  """What `call` passes for `param` (`self` aside for a method call)."""
  for keyword in call.keywords:
    if keyword.arg == param:
      return keyword.value
  if param not in params:
    return None
  index = params.index(param)
  if params and params[0] == "self" and isinstance(call.func, ast.Attribute):
    index -= 1
  return call.args[index] if 0 <= index < len(call.args) and not any(
      isinstance(a, ast.Starred) for a in call.args) else None


def factors(node: ast.AST) -> List[ast.expr]:
  """The two factors of `a * b` or `multiply(a, b)` (`mul` too), or []."""
  if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
    return [node.left, node.right]
  if isinstance(node, ast.Call) and call_name(node) in {
      "multiply", "mul"} and len(node.args) == 2:
    return list(node.args)
  return []
