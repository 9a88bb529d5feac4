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
      def __init__(self, model, lookup, back{default}):
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
      manager = Manager(model, ids, {back})
      manager.train(text, text)
    """


def _script(back="chars", more=""):
  return _POSITIONAL.format(back=back, more=more)


_STEP = 18  # The step's line in the trainer.

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
      Manager(model, lookup, tf.keras.layers.IntegerLookup(
          vocabulary=[1, 2], invert=True)).train(1, 2)
    """}, []),
    # The real ones: a part with weights of its own no step trains.
    "a sized layer passed once of two": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="Manager(model, ids, tf.keras.layers.Dense(8)).train(1, 2)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a sized layer passed by position": (
        {"trainer.py": _trainer(), "main.py": _script(
            back="tf.keras.layers.Dense(8)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a project class spelled like Keras' lookup": (
        {"trainer.py": _trainer(), "main.py": _script().replace(
            "import tensorflow as tf\n",
            "import tensorflow as tf\n    import layers as L\n").replace("tf.keras.layers.StringLookup(\n", "L.StringLookup(\n"),
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
            more="make = Manager\n      make(model, ids, tf.keras.layers."
                 "Dense(8)).train(1, 2)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a subclass built elsewhere": (
        {"trainer.py": _trainer(), "main.py": _script(), "sub.py": """\
            import tensorflow as tf
            from trainer import Manager

            class Sampler(Manager):
              pass

            Sampler(None, tf.keras.layers.Dense(8), None).train(1, 2)
            """},
        [("var-list-filter", "trainer.py", _STEP)]),
    "arguments unpacked": (
        {"trainer.py": _trainer(), "main.py": _script(back="*parts")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the part set again with a sized layer": (
        {"trainer.py": _trainer(extra="self.back = tf.keras.layers.Dense(8)"),
         "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
    "the local name bound twice": (
        {"trainer.py": _trainer(), "main.py": _script(
            more="chars = tf.keras.layers.Dense(8)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a default left to the parameter": (
        {"trainer.py": _trainer(default="=tf.keras.layers.Dense(8)"),
         "main.py": _script(back="").replace("ids, )", "ids)")},
        [("var-list-filter", "trainer.py", _STEP)]),
    "a sized layer under the lookup": (
        {"trainer.py": _trainer(extra="self.encoder = tf.keras.layers."
                                      "Dense(8)").replace(
            "self.lookup(tf.strings.unicode_split(",
            "self.lookup(self.encoder("),
         "main.py": _script()},
        [("var-list-filter", "trainer.py", _STEP)]),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_parts_handed_to_a_trainer(name):
  files, expected = _CASES[name]
  assert scanned.in_project(files) == expected
