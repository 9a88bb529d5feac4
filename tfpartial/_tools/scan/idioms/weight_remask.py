"""`weight-remask`: weights multiplied by a mask again and written back,
in a callback, an optimizer's step, a hook or a Keras constraint, while
the model trains (a re-mask that only feeds evaluation, or a rewind to
the initial weights, is not one)."""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

from tfpartial._tools.scan import _calls
from tfpartial._tools.scan import _context
from tfpartial._tools.scan import _drift
from tfpartial._tools.scan import _edits
from tfpartial._tools.scan import _names
from tfpartial._tools.scan import _order
from tfpartial._tools.scan import _project
from tfpartial._tools.scan import _scopes
from tfpartial._tools.scan._analysis import Analysis
from tfpartial._tools.scan.idioms import _idiom
from tfpartial._tools.scan.idioms import write_back
from tfpartial._tools.scan.idioms._copies import _in_training
from tfpartial._tools.scan.idioms._copies import _reset_rows
from tfpartial._tools.scan.idioms._copies import _support
from tfpartial._tools.scan.idioms._copies import _untrained
from tfpartial._tools.scan.idioms._copies import _writes
from tfpartial._tools.scan.idioms._masks import _constraint_fills
from tfpartial._tools.scan.idioms._masks import _helper_fills
from tfpartial._tools.scan.idioms._masks import _mask_origins
from tfpartial._tools.scan.idioms._masks import _masked_weights
from tfpartial._tools.scan.idioms._masks import _numbers
from tfpartial._tools.scan.idioms._masks import _row_resets
from tfpartial._tools.scan.idioms._masks import _sign_kept
from tfpartial._tools.scan.idioms._runs import _dropped


class WeightRemask(_idiom.Idiom):
  """Weights re-multiplied by a mask while the model trains."""

  id = "weight-remask"
  order = 6
  entry = _idiom.Entry(
      "weights re-multiplied by a mask in a callback, a constraint or a "
      "hook", "weights-re-multiplied-by-a-mask",
      "`tfpartial.train_only(w, mask != 0)` on the optimizer "
      "(`spec.wrap(optimizer)` in `compile`); drop the re-masking")
  by_hand = ("the mask may change between re-maskings: port it as "
             "`tfpartial.train_only(w, mask)` on the optimizer and drop the "
             "re-masking")

  def detect(self, analysis: Analysis) -> Sequence[_idiom.Hit]:
    hits: List[_idiom.Hit] = [
        h for h in _writes.writes(analysis) if h.kind == self.id and not (
            isinstance(h, _writes.WriteHit) and h.target is not None
            and (_untrained.untrained(h.target, h.scope, analysis) or (
                _untrained.made_each_pass(h.target, h.scope, analysis)) or (
                    _untrained.integral(h.target, h.scope)))
            or _dropped.never_run(h.sink, h.scope, analysis))]
    written = {id(h.node) for h in _writes.writes(analysis)}
    hits += [h for h in _guarding_writes(analysis)
             if id(h.node) not in written]
    hits += [h for h in _support.hits(analysis)
             if id(h.sink) not in written]
    hits += [h for h in _row_resets.row_resets(analysis)
             if id(h.node) not in written]
    hits += [h for h in _helper_fills.helper_fills(analysis)
             if id(h.node) not in written]
    for scope in analysis.functions_named(("__call__",)):
      hits += _constraint_class(scope, analysis)
    for module in analysis.project.scanned():
      if "onstraint" in module.source.text:
        for scope in analysis.scopes_with(module, _constraint_words(module)):
          hits += _constraint_lambdas(scope, analysis)
    return hits

  def port(self, hit: _idiom.Hit, analysis: Analysis) -> _edits.Port:
    if _writes.PINNED in hit.labels:
      target = hit.written() if isinstance(hit, _writes.WriteHit) else (
          "the variable")
      return (f"nothing to port: the reset is exact; to say it, set "
              f"`{target}` once and "
              "leave it out of the step's variables (or freeze it whole "
              "with `tfpartial.freeze(variable)` on the optimizer), and "
              "drop the reset")
    if isinstance(hit, _writes.WriteHit) and hit.zeros:
      reset = _reset_rows.port(hit, analysis)
      if reset is not None:
        return reset
      return _zeroed_rows(hit)
    if isinstance(hit, _writes.WriteHit) and hit.constraint and (
        hit.value is not None):
      return (f"a Keras constraint (`{hit.constraint}`) sets chosen "
              "elements back to constants: set them once after the model "
              "is built, wrap the optimizer given to `compile` with "
              "`tfpartial.freeze(weight, rows)` (the rows it writes) and "
              "drop the constraint")
    if isinstance(hit, _writes.WriteHit) and hit.value is not None and (
        _helper_fills.is_number(hit.value)):
      return (f"`{_idiom.short(hit.value)}` is written into chosen "
              "elements after each step: set them once after the model is "
              "built, wrap the optimizer with `tfpartial.freeze(weight, "
              "elements)` (the elements it sets) and drop the reset")
    if isinstance(hit, _writes.WriteHit) and hit.constraint:
      return (f"a Keras constraint (`{hit.constraint}`): the layer makes "
              "its weight and the optimizer given to `compile` trains it; "
              "for a fixed mask, zero those elements once after the model "
              "is built, wrap that optimizer with `tfpartial.freeze(weight, "
              "mask == 0)` and drop the constraint (a mask that changes: "
              "see the guide's dynamic masks)")
    return self.by_hand

  def explain(self, hit: _idiom.Hit, context: _context.Context
              ) -> Tuple[str, List[str]]:
    assert isinstance(hit, _writes.WriteHit)
    if hit.constraint and hit.value is not None:
      return (f"chosen elements of the weight set back to "
              f"`{_idiom.short(hit.value)}` by the constraint "
              f"`{hit.constraint}`"), [
                  "a Keras constraint runs after every update, so those "
                  "elements are set back after each step; the optimizer "
                  "still computes their update and keeps state for them"]
    if hit.constraint:
      return (f"weights re-multiplied by a mask in the constraint "
              f"`{hit.constraint}`"), [
                  "a Keras constraint runs after every update, so the "
                  "masked weights are zero after each step; the optimizer "
                  "still keeps state for them and computes their update"]
    name = hit.writer()
    step = hit.labels.get(_writes.PINNED)
    if isinstance(step, ast.Call):
      return (f"`{hit.written()}` set back to "
              f"`{ast.unparse(hit.value) if hit.value else 'a number'}` by "
              f"`{name}` after each `{_names.call_name(step)}` (line "
              f"{_idiom.line(step)}) that trains it: a whole variable held "
              "fixed; exact as it is, not a drift"), [
                  "none for its value: each reset undoes the step's "
                  "update; the optimizer still computes that update and "
                  "keeps state for it"]
    if hit.zeros:
      target = hit.written()
      when, reasons = write_back.timing(hit, name)
      return (f"fixed elements of `{target}` set back to zeros by "
              f"`{name}`{when}"), reasons + [
                  "the optimizer still computes their update and keeps "
                  "state for them (momentum moves them again before the "
                  "next reset)"]
    if hit.value is not None and (_writes.constant_fill(
        hit.value, hit.scope) or _helper_fills.is_number(hit.value)):
      target = hit.written()
      return (f"chosen elements of `{target}` set back to a constant by "
              f"`{name}` after each step"), [
                  "between two resets the optimizer moves those elements, "
                  "and keeps state for them"]
    reasons = ["between two re-maskings the optimizer moves the masked "
               "weights, and the model trains with them non-zero"]
    reasons += _drift.optimizer_drift(context.optimizer, nan=False)
    return (f"weights re-multiplied by a mask and written back by "
            f"`{name}`"), reasons


def _zeroed_rows(hit: _writes.WriteHit) -> str:
  """The port by hand of fixed elements set back to zeros with each step
  (`scatter_update(table, 0, zeros)`): they never change, so they are
  zeroed once and frozen; named with the rows the write gives, when it
  gives them."""
  target = hit.written()
  rows = None
  if isinstance(hit.sink, ast.Call) and _names.call_name(hit.sink) in (
      _ZEROING) and len(hit.sink.args) >= 2:
    rows = ast.unparse(hit.sink.args[1])
  elif isinstance(hit.target, ast.Subscript):
    rows = ast.unparse(hit.target.slice)
    target = ast.unparse(hit.target.value)
  spec = (f"`tfpartial.freeze({target}, {rows})`" if rows is not None
          and len(rows) <= 40 else f"`tfpartial.freeze({target}, rows)` "
          "(the rows it zeroes)")
  return (f"the zeroed elements never change: set them to zeros once, after "
          f"the variable is initialised or restored, keep them with {spec} "
          "on the optimizer (`spec.wrap(optimizer)`), and drop the reset")


def _guarding_writes(analysis: Analysis) -> List[_idiom.Hit]:
  """`zero = tf.scatter_update(table, oov_ids, zeros)` made a control
  dependency of a lookup of the same table (`with
  tf.control_dependencies([zero]): tf.nn.embedding_lookup(table, ids)`):
  the rows are set back to zeros each time the forward pass runs, in a
  function the training graph calls (a library's layer, maybe)."""
  hits: List[_idiom.Hit] = []
  flow = analysis.flow
  for scope, call in analysis.calls_named(_ZEROING):
    parts = _writes.target_and_value(call)
    if parts is None or not parts[2] or analysis.module(scope).is_test:
      continue
    target, value, _ = parts
    table = _names.dotted(target)
    if table is None or not _calls.zero(value, scope) or len(
        call.args) < 3 or _chosen_rows(call.args[1], scope):
      continue
    if not _read_after(call, table, scope, analysis) or (
        _masked_weights.evaluation_only(call, scope, analysis)):
      continue
    labels = flow.labels(target, scope)
    if not ("var" in labels or "param" in labels) or "shadow" in labels or (
        not _in_training.in_training(scope, analysis, call)):
      continue  # (A table passed in: the layer's caller made it.)
    hits.append(_writes.WriteHit(call, scope, call, labels, "weight-remask",
                                 target, value, "control", None, zeros=True))
  return hits


_ZEROING = ("scatter_update", "scatter_nd_update")


def _chosen_rows(rows: ast.AST, scope: _scopes.Scope) -> bool:
  """Whether the rows a write zeroes are chosen as the step runs (itself or
  through the local names it reads): a call that is no plain shaping of
  fixed ids (`self.allocate(new_ids)`, `tf.where(...)`): rows handed to
  new keys of a hash-table embedding, which then train; not a padding or
  OOV id (a constant, a parameter)."""
  return _scopes.found_through_names(rows, scope, _not_shaping, _values)


def _not_shaping(item: ast.AST) -> bool:
  return isinstance(item, ast.Call) and _names.call_name(item) not in (
      _SHAPING)


def _values(node: ast.AST) -> Iterator[ast.AST]:
  """The nodes of `node`, depth first, but the test of a conditional
  (the values of `[oov] if dim == 1 else oov`)."""
  stack = [node]
  while stack:
    item = stack.pop()
    stack += [c for c in ast.iter_child_nodes(item)
              if not (isinstance(item, ast.IfExp) and c is item.test)]
    yield item


# What only spells fixed ids in another shape.
_SHAPING = {"constant", "convert_to_tensor", "cast", "reshape", "range",
            "arange", "expand_dims", "stack", "list", "tuple", "int",
            "array", "asarray", "to_int64", "to_int32", "len"}


def _guarded_block(call: ast.Call, scope: _scopes.Scope,
                   analysis: Analysis) -> Optional[ast.With]:
  """The `with control_dependencies([...])` block of `scope` whose
  dependencies hold `call` or a name it is kept under."""
  kept = set(_order.handles(call, analysis.order(scope)))
  blocks = analysis.once(f"dependencies {id(scope)}", lambda: [
      n for n in scope.nodes if isinstance(n, ast.withitem) and isinstance(
          n.context_expr, ast.Call) and _names.call_name(
              n.context_expr) == "control_dependencies" and (
                  n.context_expr.args)])
  assert isinstance(blocks, list)
  for node in blocks:
    inside = list(ast.walk(node.context_expr.args[0]))
    if any(n is call for n in inside) or any(
        isinstance(n, ast.Name) and n.id in kept or isinstance(
            n, ast.Attribute) and n.attr in kept for n in inside):
      owner = analysis.order(scope).parent(node)
      return owner if isinstance(owner, ast.With) else None
  return None


def _read_after(call: ast.Call, table: str, scope: _scopes.Scope,
                analysis: Analysis) -> bool:
  """Whether the forward pass reads the table only after the write ran:
  a lookup under `control_dependencies` of it, or a lookup of what the
  write returns (`self.table = tf.scatter_update(self.table, pad,
  zeros)`, then `embedding_lookup(self.table, ids)`)."""
  block = _guarded_block(call, scope, analysis)
  if block is not None:
    return any(_reads_table(block.body, name)
               for name in _table_names(table, scope))
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and node.value is call and len(
        node.targets) == 1:
      kept = _names.dotted(node.targets[0])
      end = node.end_lineno or node.lineno
      after = [s for s in scope.nodes if isinstance(s, ast.stmt) and (
          getattr(s, "lineno", 0) > end)]
      return kept is not None and _reads_table(after, kept)
  return False


def _table_names(table: str, scope: _scopes.Scope) -> List[str]:
  """`table` and what a local `table` is bound to in `scope`, or a part of
  (`first = embeddings`, `first = embeddings[0]`: the write zeroes a row of
  the first partition, the lookup reads the list of partitions)."""
  names = [table]
  for node in scope.nodes:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and (
        isinstance(node.targets[0], ast.Name)) and (
            node.targets[0].id == table):
      value = node.value
      if isinstance(value, ast.Subscript):
        value = value.value
      whole = _names.dotted(value) if isinstance(
          value, (ast.Name, ast.Attribute)) else None
      if whole is not None and whole not in names:
        names.append(whole)
  return names


def _reads_table(body: Sequence[ast.stmt], table: str) -> bool:
  """Whether the statements read `table` in a lookup or a product."""
  for statement in body:
    for node in ast.walk(statement):
      if isinstance(node, ast.Call) and _names.call_name(node) in (
          _LOOKUPS) and any(_names.dotted(a) == table for a in node.args):
        return True
  return False


_LOOKUPS = {"embedding_lookup", "embedding_lookup_sparse", "gather",
            "safe_embedding_lookup_sparse", "matmul", "nce_loss",
            "sampled_softmax_loss"}


def _constraint_words(module: object) -> List[str]:
  """The keywords spelled `...constraint` in a module's text."""
  text = getattr(getattr(module, "source", None), "text", "")
  return sorted(set(_CONSTRAINT.findall(text)))


_CONSTRAINT = re.compile(r"\b(\w*constraint)\s*=")


def _constraint_class(scope: _scopes.Scope, analysis: Analysis
                      ) -> List[_idiom.Hit]:
  """A Keras constraint class whose `__call__` multiplies the weight by a
  mask."""
  node = scope.node
  info = scope.cls
  if not isinstance(node, ast.FunctionDef) or info is None or not (
      "Constraint" in info.name or any(
          b.endswith("Constraint") for b in info.bases) or (
              "Mask" in info.name and _given_as_constraint(info.name,
                                                           analysis))):
    return []
  if _only_loaded(info, analysis):
    return []
  home = scope.parent or scope
  found = analysis.flow.helper(node, home, [{}, {"var": node}])
  masked = [v for k, v in found.items() if k.startswith("varmask:") and (
      not _scaled(v, scope, node, analysis.project))]
  fixed = _fixed_factor(scope, node, analysis.project)
  weight = node.args.args[1].arg if len(node.args.args) > 1 else ""
  if _architectural([*masked, fixed], weight, scope, analysis):
    return _offset_hit(scope, node, found, info, analysis)
  if any(not _projection(m, node, scope, analysis.project)
         for m in masked) or fixed is not None:
    at = next((m for m in masked if isinstance(m, ast.expr) and (
        node.lineno <= getattr(m, "lineno", 0) <= (node.end_lineno or 0))),
              None)  # The product in `__call__`, else its `def` line.
    return [_writes.WriteHit(at or _anchor(node), scope, None, found,
                             "weight-remask", constraint=info.name)]
  scatter = _constraint_fills.set_back(scope, node)
  if scatter is not None and not _constraint_fills.never_attached(
      info, analysis):
    return [_writes.WriteHit(scatter, scope, scatter, found, "weight-remask",
                             scatter.args[0], scatter.args[2],
                             constraint=info.name)]
  return _offset_hit(scope, node, found, info, analysis)


def _offset_hit(scope: _scopes.Scope, node: ast.FunctionDef,
                found: Dict[str, ast.AST], info: _scopes.ClassInfo,
                analysis: Analysis) -> List[_idiom.Hit]:
  """A constraint's elements zeroed by a mask of the architecture's
  shape, then set to a number by an array added at the same positions
  (Bayar's centre of -1): a fixed part of the weight, found."""
  offset = _constraint_fills.offset_at_zeroed(scope, node, analysis)
  if offset is None or _constraint_fills.never_attached(info, analysis):
    return []
  product, value = offset
  return [_writes.WriteHit(product, scope, None, found, "weight-remask",
                           value=value, constraint=info.name)]


def _architectural(products: Sequence[Optional[ast.AST]], weight: str,
                   scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether every product a constraint makes multiplies its weight by a
  mask the architecture alone fixes (`Constraint_Zero`'s kernel of ones
  with its central taps zeroed, a MADE's mask from degrees): the masked
  elements are no parameter the code keeps (BUILDING.md, "Structural
  masks"), whereas a mask handed in (a pruning's, a task's) counts."""
  pairs = [_factors(p) for p in products if p is not None]
  return bool(pairs) and all(len(pair) == 2 and any(
      isinstance(mine, ast.Name) and mine.id == weight and (
          _mask_origins.architectural(other, scope, analysis))
      for mine, other in (pair, pair[::-1])) for pair in pairs)


def _scaled(product: ast.AST, scope: _scopes.Scope, node: ast.FunctionDef,
            project: object) -> bool:
  """Whether a constraint's product is its weight times a number
  (`w * self.keep_mask` of `Shrink(0.5)`), whatever the factor is named."""
  pair = _factors(product)
  weight = node.args.args[1].arg if len(node.args.args) > 1 else None
  return len(pair) == 2 and any(
      isinstance(mine, ast.Name) and mine.id == weight and _numbers.scale(
          other, scope, project) for mine, other in (pair, pair[::-1]))


def _only_loaded(info: _scopes.ClassInfo, analysis: Analysis) -> bool:
  """Whether the modules that see a constraint class name it only to
  read a saved model (`load_model(path, custom_objects={'Mask': Mask})`):
  that model is not trained here. A class named elsewhere too (built, in
  a registry) or never named (a library's) may train."""
  loading = used = False
  home = analysis.project.module_of(info.home)
  seeing = [m for m in analysis.project.modules
            if info.name in m.source.text]
  word = re.compile(r"\b" + re.escape(info.name) + r"\b")
  defined = re.compile(r"\bclass\s+" + re.escape(info.name) + r"\b")
  loaders = []
  for module in seeing:  # Read cheaply first: most classes are built.
    text = module.source.text
    if any(w in text for w in (*_LOADS, "custom_objects")):
      loaders.append(module)
    elif len(word.findall(text)) > len(defined.findall(text)) and (
        module is home or not defined.search(text)):
      return False  # Named where nothing loads a model: built there.
  for module in loaders:
    scope = analysis.project.parsed(module)
    if module.tree is None or scope is None or (
        module is not home and info.name in scope.classes):
      continue  # Its own class of that name.
    inside: Set[int] = set()
    for node in ast.walk(module.tree):
      if isinstance(node, ast.Call) and _names.call_name(node) in _LOADS:
        inside |= {id(n) for n in ast.walk(node)}
      elif isinstance(node, ast.keyword) and node.arg == "custom_objects":
        inside |= {id(n) for n in ast.walk(node.value)}
    for node in ast.walk(module.tree):
      if isinstance(node, (ast.Name, ast.Attribute)) and (
          node.id if isinstance(node, ast.Name) else node.attr) == info.name:
        loading = loading or id(node) in inside
        used = used or id(node) not in inside
  return loading and not used


# The calls that read a saved model.
_LOADS = ("load_model", "model_from_json", "model_from_yaml",
          "model_from_config", "custom_object_scope")


def _given_as_constraint(name: str, analysis: Analysis) -> bool:
  """Whether the project gives an instance of the class `name` as a
  constraint (`kernel_constraint=Masker(m)`): a class named for masks
  that is not (a masker of inputs) is not one."""
  spelled = re.compile(r"constraints?\s*=\s*\[?\s*(?:[\w.]+\.)?"
                       + re.escape(name) + r"\s*\(")
  return any(spelled.search(module.source.text)
             for module in analysis.project.all_modules_with((name,)))


def _constraint_lambdas(scope: _scopes.Scope, analysis: Analysis
                        ) -> List[_idiom.Hit]:
  """`kernel_constraint=lambda w: w * mask`, or a function of the
  project given by name (`constraint=keep_mask`, `constraint=
  self.Wconstraint`)."""
  hits: List[_idiom.Hit] = []
  flow = analysis.flow
  for call in analysis.calls(scope):
    for keyword in call.keywords:
      if not (keyword.arg or "").endswith("constraint"):
        continue
      method = _bound_method(keyword.value, scope)
      if method is not None:
        hits += _method_hit(method, keyword, call, analysis)
        continue
      for function, home in _lambdas(keyword.value, scope, analysis):
        found = flow.helper(function, home, [{"var": function}])
        weight = function.args.args[0].arg if function.args.args else ""
        product = next((v for k, v in found.items() if (
            k == f"varmask:{weight}" if weight else k.startswith(
                "varmask:")) and not _clipped(v, function, home)), None)
        if isinstance(product, ast.expr) and not _architectural(
            [product], weight, home, analysis) and not _masked_from_start(
                product, weight, home, call, scope, analysis):
          named = isinstance(keyword.value, ast.Name)  # Found at its body.
          hits.append(_writes.WriteHit(
              product if named else keyword.value, home if named else scope,
              call, found, "weight-remask", constraint=(
                  _names.dotted(keyword.value) if named else None
              ) or keyword.arg or ""))
          break
  return hits


def _masked_from_start(product: ast.expr, weight: str,
                       home: _scopes.Scope, call: ast.Call,
                       scope: _scopes.Scope, analysis: Analysis) -> bool:
  """Whether the layer `call` makes also starts its weight under the
  constraint's mask: an `...initializer=` of the same call returns the
  same mask (the same name in the same function) times its values (an
  autoregressive flow's `masked_kernel_initializer`). The masked
  elements are zero from the start and stay so: a connectivity the
  layer is built with, no trained value kept."""
  masks = {ast.dump(other) for pair in [_factors(product)] if len(pair) == 2
           for mine, other in (pair, pair[::-1])
           if isinstance(mine, ast.Name) and mine.id == weight}
  for keyword in call.keywords:
    if not (keyword.arg or "").endswith("initializer"):
      continue
    for function, inner in _lambdas(keyword.value, scope, analysis):
      if inner is not home:
        continue
      body = function.body if isinstance(function.body, list) else [
          function.body]
      if any(len(pair) == 2 and any(ast.dump(f) in masks for f in pair)
             for node in body for item in ast.walk(node)
             for pair in [_factors(item)]):
        return True
  return False


def _lambdas(value: ast.expr, scope: _scopes.Scope, analysis: Analysis
             ) -> List[Tuple[_scopes.FunctionNode, _scopes.Scope]]:
  """The constraint a keyword gives: a lambda, or the lambdas and nested
  functions a function of the project returns (`kernel_constraint=
  masked(m)`, `def masked(m): def c(w): ...; return c`)."""
  if isinstance(value, ast.Lambda):
    return [(value, scope)]
  if not isinstance(value, (ast.Call, ast.Name)):
    return []
  function = analysis.flow.labels(getattr(value, "func", value),
                                  scope).get("fn")
  known = analysis.flow.functions.get(id(function))
  if known is None:
    return []
  if isinstance(value, ast.Name):
    return [known] if isinstance(known[0], ast.FunctionDef) else []
  inner = known[1].scope_of(known[0])
  if inner is None:
    return []
  returned = [n.value for n in inner.nodes if isinstance(n, ast.Return)]
  named = {n.id for n in returned if isinstance(n, ast.Name)}
  return [(n, inner) for n in returned if isinstance(n, ast.Lambda)] + [
      (n, inner) for n in getattr(inner.node, "body", []) if isinstance(
          n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in named]


def _bound_method(value: ast.expr, scope: _scopes.Scope
                  ) -> Optional[_scopes.Scope]:
  """The method a constraint names (`constraint=self.Wconstraint`)."""
  if not (isinstance(value, ast.Attribute) and isinstance(
      value.value, ast.Name) and value.value.id == "self") or (
          scope.cls is None):
    return None
  return scope.cls.methods.get(value.attr)


def _method_hit(method: _scopes.Scope, keyword: ast.keyword,
                call: ast.Call, analysis: Analysis) -> List[_idiom.Hit]:
  """A constraint method judged as a constraint class's `__call__` is:
  its weight (the parameter after `self`) times a value fixed when the
  layer was made (`def Wconstraint(self, w): return w * self.trimmer`)."""
  node = method.node
  product = _fixed_factor(method, node, analysis.project) if isinstance(
      node, ast.FunctionDef) else None
  if isinstance(product, ast.AugAssign):
    product = product.target  # `w *= self.mask`.
  if not isinstance(product, ast.expr):
    return []
  return [_writes.WriteHit(product, method, call, {}, "weight-remask",
                           constraint=_names.dotted(keyword.value) or "")]


def _clipped(masked: ast.AST, function: _scopes.FunctionNode,
             home: _scopes.Scope) -> bool:
  """Whether a constraint function's masked weight is chosen by the
  weight's own values (`tf.where(w > c, c, w)`, `w * cast(w >= 0)`): a
  projection, made anew each time; its shape (`w.shape`, `zeros_like(w)`)
  chooses nothing."""
  params = function.args.args
  scope = home.scope_of(function)
  if not params or scope is None:
    return False
  weight = params[0].arg
  if isinstance(masked, ast.Call) and _names.call_name(masked) in {
      "where", "where_v2", "select"} and masked.args:
    return _values_read(masked.args[0], weight, scope)
  pair = _factors(masked)
  return len(pair) == 2 and all(_values_read(f, weight, scope) for f in pair)


def _values_read(node: ast.AST, weight: str, scope: _scopes.Scope,
                 depth: int = 0) -> bool:
  """Whether `node` reads the values of `weight` (through the local
  names it reads, too), not only its shape or type."""
  shaped: Set[int] = set()
  for item in ast.walk(node):
    if isinstance(item, ast.Attribute) and item.attr in {"shape", "dtype"} \
        or isinstance(item, ast.Call) and (_names.call_name(item) or "") in {
            "shape", "int_shape", "zeros_like", "ones_like", "size", "rank"}:
      shaped |= {id(n) for n in ast.walk(item)}
  for item in ast.walk(node):
    if isinstance(item, ast.Name) and id(item) not in shaped:
      if item.id == weight:
        return True
      if depth < 2 and item.id != weight and any(
          _values_read(d.value, weight, scope, depth + 1)
          for d in scope.defs.get(item.id, []) if d.value is not None):
        return True
  return False


def _anchor(node: ast.FunctionDef) -> ast.expr:
  """A node at the `def` line (where the finding is reported)."""
  anchor = ast.Name("__call__", ast.Load())
  anchor.lineno, anchor.col_offset = node.lineno, node.col_offset
  anchor.end_lineno, anchor.end_col_offset = node.lineno, node.col_offset
  return anchor


def _factors(item: ast.AST) -> List[ast.AST]:
  """The two factors of `a * b`, `a *= b`, `multiply(a, b)`,
  `multiply([a, b])`."""
  if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mult):
    return [item.left, item.right]
  if isinstance(item, ast.AugAssign) and isinstance(item.op, ast.Mult):
    return [item.target, item.value]
  if isinstance(item, ast.Call) and _names.call_name(item) in {
      "multiply", "mul"}:
    if len(item.args) == 1 and isinstance(item.args[0], (ast.List,
                                                         ast.Tuple)):
      return list(item.args[0].elts)
    return list(item.args[:2])
  return []


def _projection(product: ast.AST, node: ast.FunctionDef,
                scope: _scopes.Scope, project: _project.Project) -> bool:
  """Whether both factors of a constraint's product read its weight
  (`w * cast(w >= 0)`), or one keeps the sign of the other, a scaled
  copy of the weight (`m * cast(m >= 0)`, `_sign_kept`): a projection
  computed from the weight each time, which freezes nothing."""
  if len(node.args.args) < 2:
    return False
  weight = node.args.args[1].arg
  pair = _factors(product)
  return len(pair) == 2 and (all(_reads(f, weight) for f in pair) or (
      _sign_kept.sign_kept(pair, weight, scope, project)))


def _fixed_factor(scope: _scopes.Scope, node: ast.FunctionDef,
                  project: object) -> Optional[ast.AST]:
  """The product by which a constraint multiplies its weight by a value
  fixed when it was made (`w * self.mask`, `w *= self.mask_var`,
  `multiply([w, K.variable(self.m)])`), if any; not by a number
  (`self.c * w` of `c=2`, `self.f` of `1 - decay_rate`: `_numbers`),
  which chooses no element."""
  if len(node.args.args) < 2:
    return None
  weight = node.args.args[1].arg
  for item in scope.nodes:
    pair = _factors(item)
    if len(pair) != 2:
      continue
    for mine, other in ((pair[0], pair[1]), (pair[1], pair[0])):
      if isinstance(mine, ast.Name) and mine.id == weight and not _reads(
          other, weight) and not _numbers.scale(
              other, scope, project) and any(
                  (_names.dotted(n) or "").startswith("self.")
                  for n in ast.walk(other) if isinstance(n, ast.Attribute)):
        return item
  return None


def _reads(node: ast.AST, name: str) -> bool:
  return any(isinstance(n, ast.Name) and n.id == name
             for n in ast.walk(node))


IDIOM = WeightRemask()
