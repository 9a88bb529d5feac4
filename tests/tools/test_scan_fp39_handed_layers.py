"""`tfpartial scan` on part thirty-nine's character model: a trainer
class trains `self.model.trainable_variables` while its sampling
method runs `self.model` on the output of two other parts handed to
its constructor (`self.ids_from_chars = ids_from_chars`). Every
construction of the class in the project passes a Keras lookup layer
there (`tf.keras.layers.StringLookup(...)`), which holds no trainable
weight: nothing below the model is left out. A part handed anything
else (a sized layer, a class of the project spelled like Keras', a
value the scan cannot see at every construction) is still judged as
before: the part below is left out."""

import pytest

import scanned

_TRAINER = """\
    import tensorflow as tf
    {imports}

    class Manager{bases}:
      def __init__(self, model, back, lookup{default}):
        self.model = model
        self.lookup = lookup
        self.back = back
        {extra}

      def train(self, text, label):
        opt = tf.keras.optimizers.Adam()

        @tf.function
        def step(data):
          with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.model(data) - label)
          grads = tape.gradient(loss, self.model.trainable_variables)
          opt.apply_gradients(zip(grads, self.model.trainable_variables))

        step(self.lookup(tf.strings.unicode_split(text, "UTF-8")))

      def sample(self, start, n):
        chars = tf.constant([start])
        for _ in range(n):
          ids = self.lookup(tf.strings.unicode_split(chars, "UTF-8"))
          logits = self.model(ids)
          chars = tf.strings.join(self.back(tf.argmax(logits, -1)))
        return chars
    """


def _trainer(imports="", bases="", default="", extra=""):
  return _TRAINER.format(imports=imports, bases=bases, default=default,
                         extra=extra)


_POSITIONAL = """\
    import tensorflow as tf
    from trainer import Manager

    def main(text, model):
      vocab = sorted(set(text))
      ids = tf.keras.layers.StringLookup(vocabulary=vocab, mask_token=None)
      chars = tf.keras.layers.StringLookup(
          vocabulary=ids.get_vocabulary(), invert=True, mask_token=None)
      {more}
      manager = Manager(model, {back}, {ids})
      {after}
      manager.train(text, text)
    """


def _script(ids="ids", more="", back="chars", after=""):
  return _POSITIONAL.format(ids=ids, more=more, back=back, after=after)


_STEP = 18  # The step's line in the trainer.
FOUND = [("var-list-filter", "trainer.py", _STEP)]

_CASES = {
    # The look-alikes: lookup layers, which hold no trainable weight.
    "lookups passed by position": (
        {"trainer.py": _trainer(), "main.py": _script()}, []),
    "lookups passed by keyword, imported by name": (
        {"trainer.py": _trainer(), "main.py": """\
            from tensorflow.keras.layers import StringLookup
            from trainer import Manager

            def main(model, vocab):
              back = StringLookup(vocabulary=vocab, invert=True)
              m = Manager(model=model, back=back,
                          lookup=StringLookup(vocabulary=vocab))
              m.train(1, 2)
            """}, []),
    "lookups built in the same module": (
        {"trainer.py": _trainer() + """
    def main(model, vocab):
      lookup = tf.keras.layers.StringLookup(vocabulary=vocab)
      Manager(model, tf.keras.layers.IntegerLookup(
          vocabulary=[1, 2], invert=True), lookup).train(1, 2)
    """}, []),
    # The real ones: a part with weights of its own no step trains.
    "a sized layer passed once of two": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="Manager(model, chars, tf.keras.layers.Dense(8))"
                 ".train(1, 2)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a sized layer passed by position": (
        {"trainer.py": _trainer(), "main.py": _script(
            ids="tf.keras.layers.Dense(8)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a project class spelled like Keras' lookup": (
        {"trainer.py": _trainer(), "main.py": _script().replace(
            "import tensorflow as tf\n",
            "import tensorflow as tf\n    import layers as L\n").replace(
             "tf.keras.layers.StringLookup(vocabulary=vocab",
             "L.StringLookup(vocabulary=vocab"),
         "layers.py": """\
            import tensorflow as tf

            class StringLookup(tf.keras.layers.Layer):
              def __init__(self, **kwargs):
                super().__init__()
                self.dense = tf.keras.layers.Dense(8)

              def call(self, x):
                return self.dense(x)
            """},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the class called under another name too": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="make = Manager\n      make(model, chars, tf.keras.layers."
                 "Dense(8)).train(1, 2)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a subclass built elsewhere": (
        {"trainer.py": _trainer(), "main.py": _script(), "sub.py": """\
            import tensorflow as tf
            from trainer import Manager

            class Sampler(Manager):
              pass

            Sampler(None, None, tf.keras.layers.Dense(8)).train(1, 2)
            """},
        [("var-list-filter", "trainer.py", _STEP)]),
    "arguments unpacked": (
        {"trainer.py": _trainer(), "main.py": _script(ids="*parts")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the part set again with a sized layer": (
        {"trainer.py": _trainer(extra="self.lookup = tf.keras.layers.Dense(8)"),
         "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the local name bound twice": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="ids = tf.keras.layers.Dense(8)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a default left to the parameter": (
        {"trainer.py": _trainer(default="=tf.keras.layers.Dense(8)"),
         "main.py": _script(ids="").replace("chars, )", "chars)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a sized layer under the lookup": (
        {"trainer.py": _trainer(extra="self.encoder = tf.keras.layers."
                                      "Dense(8)").replace(
            "self.lookup(tf.strings.unicode_split(",
            "self.lookup(self.encoder("),
         "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the part set from outside": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="manager.lookup = tf.keras.layers.Dense(8)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the part set by a built name": (
        {"trainer.py": _trainer(), "main.py": _script(
            after='setattr(manager, "look" + "up", tf.keras.layers.Dense(8))')},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a lambda's parameter shadowing the lookup": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="make = lambda ids: Manager(model, chars, ids)\n"
                 "      make(tf.keras.layers.Dense(8)).train(1, 2)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    # A lambda or a comprehension given to a call opens its own scope as
    # one bound to a name does (the final read of round forty-six).
    "a lambda given to a call, its parameter shadowing the lookup": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="def go(make, part):\n        make(part).train(1, 2)\n"
                 "      go(lambda ids: Manager(model, chars, ids),\n"
                 "         tf.keras.layers.Dense(8))")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a comprehension given to a call, its target shadowing the lookup": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="list([Manager(model, chars, ids).train(1, 2)\n"
                 "            for ids in [tf.keras.layers.Dense(8)]])")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "an attribute of the same name set in another class": (
        {"trainer.py": _trainer() + """
    class Other:
      def __init__(self):
        self.lookup = tf.keras.layers.Dense(8)
    """, "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the class building itself unnamed": (
        {"trainer.py": _trainer().replace("      def sample(", """\
      def widened(self):
        return type(self)(self.model, self.back, tf.keras.layers.Dense(8))

      def sample("""), "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
    # Built or set where no name says so (read t62-fp39, M2).
    "the class taken by getattr from its module": (
        {"trainer.py": _trainer(), "main.py": _script(), "other.py": """\
            import tensorflow as tf
            import trainer

            def go(model, name):
              cls = getattr(trainer, name)
              cls(model, None, tf.keras.layers.Dense(8)).train(1, 2)
            """},
        FOUND),
    "the class taken from its module's __dict__": (
        {"trainer.py": _trainer(), "main.py": _script(), "other.py": """\
            import tensorflow as tf
            import trainer

            def go(model):
              trainer.__dict__['Manager'](
                  model, None, tf.keras.layers.Dense(8)).train(1, 2)
            """},
        FOUND),
    "the class taken by a built name from an imported module": (
        {"trainer.py": _trainer(), "main.py": _script(), "other.py": """\
            import importlib
            import tensorflow as tf

            def go(model):
              mod = importlib.import_module('trainer')
              getattr(mod, 'Man' + 'ager')(
                  model, None, tf.keras.layers.Dense(8)).train(1, 2)
            """},
        FOUND),
    "the part set by object.__setattr__": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="object.__setattr__(manager, 'lookup', "
                  "tf.keras.layers.Embedding(100, 8))")},
        FOUND),
    "the part set through the object's __dict__": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="manager.__dict__['lookup'] = "
                  "tf.keras.layers.Embedding(100, 8)")},
        FOUND),
    "the part set through vars()": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="vars(manager)['lookup'] = "
                  "tf.keras.layers.Embedding(100, 8)")},
        FOUND),
    "the part set by vars().update": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="vars(manager).update("
                  "lookup=tf.keras.layers.Embedding(100, 8))")},
        FOUND),
    "the object's __init__ called again": (
        {"trainer.py": _trainer(), "main.py": _script(
            after="manager.__init__(model, chars, "
                  "tf.keras.layers.Embedding(100, 8))")},
        FOUND),
    "the lookup's name rebound through globals()": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="globals()['ids'] = tf.keras.layers.Dense(8)")},
        FOUND),
    "the class built by code in a string": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="exec('Manager(model, chars, tf.keras.layers.Dense(8))"
                 ".train(1, 2)')")},
        FOUND),
    "another setattr, of another literal name": (
        {"trainer.py": _trainer(), "main.py": _script(
            after='setattr(manager, "epochs", 3)')}, []),
    # The final read of round forty-five: names bound by an import, a
    # `def`, a `class` or an `except ... as` rebind the lookup's name.
    "the name rebound by an import of a weighted layer": (
        {"trainer.py": _trainer(), "layers.py": """\
            import tensorflow as tf
            char_embedding = tf.keras.layers.Embedding(100, 8)
            """, "main.py": _script(
                more="from layers import char_embedding as ids")}, FOUND),
    "the name rebound by a nested def": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="def ids(x):\n        return x")}, FOUND),
    "the name rebound by a class": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="class ids(tf.keras.layers.Dense):\n        pass")}, FOUND),
    "the name rebound by an except clause": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="try:\n        pass\n      except ValueError as ids:\n"
                 "        pass")}, FOUND),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_parts_handed_to_a_trainer(name):
  files, expected = _CASES[name]
  assert scanned.in_project(files) == expected


def _trainers(n):
  """One file of `n` trainer classes, each handed two lookups in a
  function of its own (its parts named its own: an attribute of the
  same name set in another class keeps the finding)."""
  body = _trainer().replace("class Manager", "class Manager{i}").replace(
      "self.lookup", "self.lookup{i}").replace("self.back", "self.back{i}")
  script = """\

    def main{i}(text, model):
      ids = tf.keras.layers.StringLookup(vocabulary=text)
      chars = tf.keras.layers.StringLookup(vocabulary=text, invert=True)
      Manager{i}(model, chars, ids).train(text, text)
    """
  parts = [body.replace("{i}", str(i)) + script.replace("{i}", str(i))
           for i in range(n)]
  import textwrap  # pylint: disable=g-import-not-at-top
  first, *rest = (textwrap.dedent(p) for p in parts)
  return first + "".join(p.replace("import tensorflow as tf\n", "")
                         for p in rest)


def test_the_trainers_are_silent():
  assert scanned.found(_trainers(3)) == []


def test_each_handed_lookup_costs_the_same():
  # Each class reads the reads of its name from one index of the file,
  # and each function's bindings once: a walk of the file per class
  # (or per construction) would make this x16, not x4.
  small, large = (scanned.scan_work(_trainers(n), "_handed_lookups.py")
                  for n in (10, 40))
  assert 0 < small and large <= 6 * small, (small, large)


def _modules(n):
  """`n` modules, each a trainer class handed two lookups and a
  `setattr` of another literal name on the object it builds."""
  import textwrap  # pylint: disable=g-import-not-at-top
  from tfpartial._tools.scan import (  # pylint: disable=g-import-not-at-top
      _files)
  script = """\

    def main{i}(text, model):
      ids = tf.keras.layers.StringLookup(vocabulary=text)
      chars = tf.keras.layers.StringLookup(vocabulary=text, invert=True)
      m = Manager{i}(model, chars, ids)
      setattr(m, "epochs", 3)
      m.train(text, text)
    """
  body = _trainer().replace("class Manager", "class Manager{i}").replace(
      "self.lookup", "self.lookup{i}").replace("self.back", "self.back{i}")
  return [_files.Source(f"m{i}.py", textwrap.dedent(
      body.replace("{i}", str(i))) + textwrap.dedent(
          script.replace("{i}", str(i)))) for i in range(n)]


def test_many_modules_are_silent():
  assert scanned.in_project({s.path: s.text for s in _modules(3)}) == []


def test_each_module_costs_the_same():
  # The project's stores and `setattr` calls are read once: a walk of
  # every module holding `setattr` per class made this x4.4 (its
  # quadratic part x12).
  from tfpartial._tools.scan import _scan  # pylint: disable=g-import-not-at-top
  small, large = (scanned.calls_made(
      lambda s=_modules(n): _scan.scan_project(s), "_handed_lookups.py")[0]
                  for n in (10, 40))
  assert 0 < small and large <= 4.2 * small, (small, large)
